"""GIPF from Python: the rules, the network's view of a position and the
core's batched search, built on the Rust core (``gipf-core``).

>>> import gipf
>>> game = gipf.Game("standard")
>>> game.play(game.legal_actions()[0])
>>> game.encode().shape
(19, 7, 7)

``gipf.pettingzoo.env()`` is an AEC environment for PettingZoo (installed
with the ``pettingzoo`` extra).
"""

import json
import os
import warnings
from typing import Callable, Dict, Iterator, List, Tuple, Union

import numpy as np

from gipf._core import (
    ENCODING_VERSION,
    GRID,
    NUM_ACTIONS,
    NUM_PLANES,
    NUM_SYMMETRIES,
    Game,
    Searches,
    SelfPlay,
    action_of,
    index_of,
    random_games,
    games_files,
    read_games_file,
    samples_of,
    transform_policy,
)

__all__ = [
    "ENCODING_VERSION",
    "GRID",
    "NUM_ACTIONS",
    "NUM_PLANES",
    "NUM_SYMMETRIES",
    "Game",
    "Searches",
    "SelfPlay",
    "action_of",
    "index_of",
    "games_files",
    "random_games",
    "read_games",
    "samples",
    "search",
    "transform_policy",
]

Evaluator = Callable[[np.ndarray], Tuple[np.ndarray, np.ndarray]]


def search(games: List[Game], simulations: int, evaluator: Evaluator, **options) -> List[dict]:
    """Searches every game's position at once with the core's batched MCTS.

    ``evaluator`` takes a batch of input planes, float32 of shape
    ``(n, NUM_PLANES, GRID, GRID)``, and returns policy logits of shape
    ``(n, NUM_ACTIONS)`` and values of shape ``(n,)`` for the player to act,
    in [-1, 1] (a PyTorch network's outputs, as numpy arrays). ``options``
    go to :class:`Searches` (``batch_size``, ``seed``, ``root``, ``noise``,
    ``candidates``). Returns each game's result: ``best``, ``visits``,
    ``value``, ``policy``.
    """
    searches = Searches(games, simulations, **options)
    while True:
        planes = searches.gather()
        if len(planes) == 0:
            return searches.results()
        logits, values = evaluator(planes)
        searches.apply(np.asarray(logits, dtype=np.float32), np.asarray(values, dtype=np.float32))


Path = Union[str, "os.PathLike[str]"]


def read_games(path: Path) -> Iterator[dict]:
    """The games of ``path`` (see :func:`games_files`), oldest first, each a
    dict as stored: ``variant``, ``actions``, ``result``, ``samples`` (the
    searched decisions: ``ply``, ``policy`` by action, ``root_value``),
    ``model``, ``seed``, ``worker``, ``config``. Each is checked as the
    trainer checks it; a refused line is skipped with a warning naming it,
    a file that is not a games file raises ValueError."""
    for file in games_files(path):
        games, bad = read_games_file(file)
        for reason in bad:
            warnings.warn(f"skipped {reason}", stacklevel=2)
        for game in games:
            yield json.loads(game)


def samples(
    path: Path,
    augment: bool = False,
    seed: int = 0,
    every_position: bool = True,
    root_value_share: float = 0.5,
    root_value_lambda: float = 0.8,
) -> Dict[str, np.ndarray]:
    """The training samples of ``path``'s games as the Rust trainer builds
    them (the same code, ``samples`` in the core): ``planes`` (n, 19, 7, 7),
    ``policy`` and ``legal`` (n, NUM_ACTIONS), ``value``, ``policy_mask``
    (1 where there is a policy target), ``aux`` (n, 3), ``plies_to_end``
    and ``symmetry`` (each sample's board symmetry: 0 unless ``augment``,
    then drawn in turn from ``seed``). The targets' settings are those of
    a config's ``[train]`` (``value_every_position``, ``root_value_share``,
    ``root_value_lambda``; configs/cpu.toml's by default).

    >>> data = gipf.samples("runs/main", augment=True)
    >>> dataset = torch.utils.data.TensorDataset(*(torch.from_numpy(data[k]) for k in ("planes", "policy", "value")))
    """
    games = [json.dumps(game) for game in read_games(path)]
    return samples_of(games, augment, seed, every_position, root_value_share, root_value_lambda)
