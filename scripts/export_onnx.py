"""Converts an exported TorchScript model (gipf export) to ONNX and checks
that onnxruntime, where installed, computes the same outputs.

usage: export_onnx.py MODEL.pt OUT.onnx [SHOWN]

SHOWN: the path to name in messages (where OUT.onnx will be moved).
"""

import os
import sys
import warnings

import torch


def main() -> int:
    if len(sys.argv) not in (3, 4):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    source, target = sys.argv[1], sys.argv[2]
    shown = sys.argv[3] if len(sys.argv) == 4 else target
    module = torch.jit.load(source, map_location="cpu").eval()
    example = torch.zeros(2, 19, 7, 7)
    partial = target + ".tmp"
    # The module is TorchScript already: the TorchScript-based exporter is the one that reads it.
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    warnings.filterwarnings("ignore", message="no signature found")
    torch.onnx.export(
        module,
        (example,),
        partial,
        input_names=["planes"],
        output_names=["policy_value"],
        dynamic_axes={"planes": {0: "batch"}, "policy_value": {0: "batch"}},
        dynamo=False,
    )
    os.replace(partial, target)
    try:
        import onnxruntime
    except ImportError:
        print(f"wrote {shown} (onnxruntime not installed: not checked)")
        return 0
    torch.manual_seed(0)
    planes = torch.rand(5, 19, 7, 7)
    expected = module(planes).detach().numpy()
    session = onnxruntime.InferenceSession(target, providers=["CPUExecutionProvider"])
    got = session.run(None, {"planes": planes.numpy()})[0]
    error = float(abs(got - expected).max())
    if error > 1e-4:
        print(f"{shown}: onnxruntime differs from TorchScript by {error}", file=sys.stderr)
        return 1
    print(f"wrote {shown} (onnxruntime matches TorchScript within {error:.1e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
