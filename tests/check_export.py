"""Loads an exported model with PyTorch and with onnxruntime and compares
their outputs with the Rust network's on the same inputs.

usage: check_export.py EXPORT_DIR REFERENCE.json
REFERENCE.json: {"n": N, "input": [N*19*7*7 floats], "output": [N*(actions+1) floats]}
"""

import json
import os
import sys

import torch


def main() -> int:
    folder, reference = sys.argv[1], sys.argv[2]
    with open(reference) as f:
        ref = json.load(f)
    n = ref["n"]
    planes = torch.tensor(ref["input"], dtype=torch.float32).view(n, 19, 7, 7)
    expected = torch.tensor(ref["output"], dtype=torch.float32).view(n, -1)
    with open(os.path.join(folder, "model.json")) as f:
        card = json.load(f)
    assert expected.shape[1] == len(card["actions"]) + 1, "output width = actions + value"

    module = torch.jit.load(os.path.join(folder, "model.pt"), map_location="cpu").eval()
    with torch.no_grad():
        got = module(planes)
    error = float((got - expected).abs().max())
    print(f"torchscript max abs error {error:.2e}")
    if not error <= 1e-5:
        return 1

    import onnxruntime

    onnx_path = os.path.join(folder, "model.onnx")
    session = onnxruntime.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    got = session.run(None, {"planes": planes.numpy()})[0]
    error = float(abs(got - expected.numpy()).max())
    print(f"onnx max abs error {error:.2e}")
    if not error <= 1e-4:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
