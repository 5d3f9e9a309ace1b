"""`gipf engine` from Python: a context manager that runs the engine (the
Rust program, with LibTorch) and speaks its line protocol
(docs/playing.md#the-engine-protocol).

>>> with Engine(model="models/reference.safetensors", sims=200) as engine:
...     engine.new("standard")
...     engine.play("b1-b2")
...     reply = engine.go()
...     view = engine.analyse(simulations=400, candidates=3)
"""

import json
import os
import shutil
import subprocess
from typing import Any, Dict, List, Optional


class EngineError(ValueError):
    """The engine answered `error: ...` (the game is unchanged)."""


def find_binary(binary: Optional[str] = None) -> str:
    """`binary`, else $GIPF_BIN, else `gipf` on the PATH."""
    found = binary or os.environ.get("GIPF_BIN") or shutil.which("gipf")
    if not found or not os.path.isfile(found):
        raise FileNotFoundError(
            "no gipf program: pass binary=..., set GIPF_BIN, or put target/release/gipf on the PATH "
            "(scripts/run.sh builds it)"
        )
    return found


class Engine:
    """A running `gipf engine`: with a `model` (a checkpoint, a models
    folder or "reference") searching `sims` simulations or `movetime` ms per
    action, or a baseline `player` (random, greedy, uct:N, alphabeta:D, ...);
    `config` gives the search and play settings (configs/cpu.toml's else)."""

    def __init__(
        self,
        model: Optional[str] = None,
        player: Optional[str] = None,
        sims: Optional[int] = None,
        movetime: Optional[int] = None,
        config: Optional[str] = None,
        binary: Optional[str] = None,
    ):
        args = [find_binary(binary), "engine"]
        options = (("--model", model), ("--player", player), ("--sims", sims), ("--movetime", movetime),
                   ("--config", config))
        for flag, value in options:
            if value is not None:
                args += [flag, str(value)]
        self._process = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def _ask(self, line: str) -> str:
        if "\n" in line:
            raise ValueError("a command is one line")
        if self._process.poll() is not None:
            raise EngineError(f"the engine has exited: {self._process.stderr.read().strip()}")
        self._process.stdin.write(line + "\n")
        self._process.stdin.flush()
        reply = self._process.stdout.readline()
        if not reply:
            raise EngineError(f"the engine stopped: {self._process.stderr.read().strip()}")
        reply = reply.rstrip("\n")
        if reply.startswith("error:"):
            raise EngineError(reply[len("error:"):].strip())
        return reply

    def new(self, variant: str = "standard") -> None:
        self._ask(f"new {variant}")

    def position(self, position: Dict[str, Any]) -> None:
        """Sets up a position (the JSON of docs/rules.md, as a dict)."""
        self._ask("position " + json.dumps(position))

    def play(self, *actions: str) -> None:
        """Plays the actions: all of them, or none if one is illegal."""
        self._ask(" ".join(["play", *actions]))

    def go(self) -> str:
        """The engine's choice for the player to act, also played."""
        return self._ask("go").removeprefix("action ")

    def analyse(self, **query: Any) -> Dict[str, Any]:
        """The model's view of a position (fields as docs/playing.md gives them:
        position, variant, actions, simulations, candidates, id)."""
        return json.loads(self._ask("analyse " + json.dumps(query)))

    def undo(self) -> None:
        self._ask("undo")

    def legal(self) -> List[str]:
        return self._ask("legal").split()[1:]

    def state(self) -> Dict[str, Any]:
        return json.loads(self._ask("state"))

    def show(self) -> str:
        """The board picture."""
        return self._ask("show").replace(" | ", "\n")

    def name(self) -> str:
        return self._ask("name").removeprefix("name ")

    def close(self) -> None:
        """Says quit and waits for the engine to exit."""
        if self._process.poll() is None:
            try:
                self._process.stdin.write("quit\n")
                self._process.stdin.flush()
                self._process.wait(timeout=10)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            stream.close()
