"""Type stubs of the compiled module ``gipf._core``."""

from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

NUM_ACTIONS: int
NUM_PLANES: int
GRID: int
NUM_SYMMETRIES: int
ENCODING_VERSION: int

class Game:
    """A game of GIPF: its start, the actions played and where they lead."""

    def __init__(self, variant: str = "standard") -> None: ...
    @staticmethod
    def from_json(text: str) -> "Game":
        """A game from a position as JSON (a setup, or the object ``state()`` gives)."""
    def to_json(self) -> str:
        """The current position as JSON (a setup that ``from_json`` reads back);
        ValueError during a removal (a setup is the start of a push)."""
    @property
    def variant(self) -> str: ...
    def legal_actions(self) -> List[str]:
        """The legal actions in the official notation (empty once the game is over)."""
    def play(self, action: str) -> None:
        """Plays ``action``; a malformed or illegal one raises ValueError and changes nothing."""
    def legal_indices(self) -> List[int]:
        """The legal actions as the network's indices, in the order of ``legal_actions()``."""
    def play_index(self, index: int) -> None:
        """Plays the action at the network's index ``index``; ValueError if out of range or illegal."""
    def undo(self) -> None:
        """Takes back the last action; ValueError when there is none."""
    @property
    def actions(self) -> List[str]: ...
    @property
    def to_act(self) -> Optional[str]:
        """"white" or "black"; None once the game is over."""
    @property
    def winner(self) -> Optional[str]: ...
    @property
    def is_over(self) -> bool: ...
    def result(self) -> Dict[str, Any]:
        """The result as a stored game records it: winner (None for a cut game) and reason."""
    def state(self) -> Dict[str, Any]:
        """The state as ``gipf rules --json`` gives it."""
    def copy(self) -> "Game": ...
    def encode(self, symmetry: int = 0) -> npt.NDArray[np.float32]:
        """Input planes (NUM_PLANES, GRID, GRID) after board symmetry ``symmetry`` (0 to 11)."""
    def action_mask(self) -> npt.NDArray[np.uint8]:
        """The legal actions as a mask over the network's NUM_ACTIONS indices."""

class Searches:
    """The core's batched search over many games: gather, evaluate, apply."""

    def __init__(
        self,
        games: List[Game],
        simulations: int,
        batch_size: int = 4,
        seed: int = 0,
        root: str = "plain",
        noise: Tuple[float, float] = (0.3, 0.25),
        candidates: int = 8,
    ) -> None: ...
    def gather(self) -> npt.NDArray[np.float32]:
        """The next leaves' input planes, shape (n, NUM_PLANES, GRID, GRID); n = 0 when done."""
    def apply(self, logits: npt.NDArray[np.float32], values: npt.NDArray[np.float32]) -> None:
        """The evaluator's logits (n, NUM_ACTIONS) and values (n,) for the gathered leaves."""
    def results(self) -> List[Dict[str, Any]]:
        """Per game: done, best, visits, value, policy."""
    def __len__(self) -> int: ...

class SelfPlay:
    """The self-play program's games for an evaluator in Python: gather, evaluate, apply."""

    def __init__(
        self,
        games: int,
        seed: int = 0,
        variant: str = "standard",
        max_actions: int = 600,
        settings: str = "{}",
        search: str = "{}",
    ) -> None: ...
    def gather(self) -> npt.NDArray[np.float32]:
        """Plays where searches are complete, then the next leaves' input planes; n = 0 when every game is over."""
    def apply(self, logits: npt.NDArray[np.float32], values: npt.NDArray[np.float32]) -> None:
        """The evaluator's logits (n, NUM_ACTIONS) and values (n,) for the gathered leaves."""
    def take_finished(self, model: str = "python", worker: str = "python") -> List[str]:
        """The games finished since the last call, as stored (JSON)."""
    def __len__(self) -> int: ...

def index_of(action: str) -> int:
    """The network's index of ``action``."""

def action_of(index: int) -> str:
    """The action at the network's index ``index``."""

def transform_policy(policy: npt.NDArray[np.float32], symmetry: int) -> npt.NDArray[np.float32]:
    """A policy over the action indices carried over board symmetry ``symmetry``."""

def random_games(n: int, seed: int = 0, variant: str = "standard", max_actions: int = 1000) -> int:
    """Plays ``n`` random games in the core; returns the actions played."""

def games_files(path: str) -> List[str]:
    """The games files of ``path``, oldest first: a shard or game file
    itself, a games folder, or a run folder (its ``games/``)."""

def read_games_file(path: str) -> Tuple[List[str], List[str]]:
    """A games file's games as JSON, and its refused lines ("FILE line N: reason")."""

def samples_of(
    games: List[str], augment: bool, seed: int, every_position: bool, root_value_share: float,
    root_value_lambda: float,
) -> Dict[str, npt.NDArray[Any]]:
    """The training samples of games (JSON), as arrays; see ``gipf.samples``."""

def write_shard(folder: str, games: List[str], worker: str) -> str:
    """Writes stored games (JSON, checked) as one shard in ``folder``,
    numbered past ``worker``'s shards there; returns its path."""
