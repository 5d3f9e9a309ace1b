"""What the Python tests compare against: the Rust side's own programs."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def rules_cli():
    """Runs `gipf-rules` (built by the test command's cargo build) with
    arguments; returns (exit status, stdout, stderr)."""
    binary = pathlib.Path(os.environ.get("GIPF_RULES", ROOT / "target" / "debug" / "gipf-rules"))
    assert binary.is_file(), f"{binary} is missing: run `cargo build --workspace` (the test command does)"

    def run(*args):
        done = subprocess.run([str(binary), *args], capture_output=True, text=True)
        return done.returncode, done.stdout, done.stderr

    return run

