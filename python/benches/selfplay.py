"""Self-play from Python against the Rust self-play, the same network: the
reference model as a PyTorch module evaluating the self-play program's games
(gipf.selfplay with configs/cpu.toml's settings: 16 games at once), and the
Rust self-play program on the same checkpoint (`selfplay --bench`,
configs/cpu.toml in fp32), in the same run. Evaluations per second of each, and their ratio.

    ./.python python/benches/selfplay.py [SECONDS]
"""

import pathlib
import re
import subprocess
import sys
import tempfile

import torch

import gipf.selfplay
import gipf.torch

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHECKPOINT = ROOT / "models" / "reference.safetensors"


def python_rate(seconds: float) -> float:
    net = gipf.torch.load(str(CHECKPOINT))

    def evaluate(planes):
        with torch.no_grad():
            logits, values = net(torch.from_numpy(planes))
        return logits.numpy(), values.numpy()

    evaluations, spent, seed = 0, 0.0, 0
    while spent < seconds:
        _, stats = gipf.selfplay.play(evaluate, games=16, seed=seed)
        evaluations, spent, seed = evaluations + stats["evaluations"], spent + stats["seconds"], seed + 1
    return evaluations / spent


def rust_rate(seconds: float) -> float:
    with tempfile.TemporaryDirectory() as folder, tempfile.NamedTemporaryFile("w", suffix=".toml") as config:
        config.write('[play]\nprecision = "fp32"\n')
        config.flush()
        args = [ROOT / "target" / "release" / "selfplay", "--config", config.name, "--model", CHECKPOINT,
                "--out", folder, "--device", "cpu", "--seed", "1", "--bench", str(seconds)]
        done = subprocess.run([str(a) for a in args], capture_output=True, text=True, check=True)
    found = re.search(r"self-play: ([\d,]+) evaluations/s", done.stdout + done.stderr)
    assert found, done.stdout + done.stderr
    return float(found.group(1).replace(",", ""))


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 30
    python, rust = python_rate(seconds), rust_rate(seconds)
    print(f"evaluations/s with the reference model in fp32: Python self-play (PyTorch, {torch.get_num_threads()} "
          f"threads) {python:,.0f}, Rust self-play {rust:,.0f}: {python / rust:.0%} of the Rust rate")


if __name__ == "__main__":
    main()
