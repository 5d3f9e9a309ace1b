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

from typing import Callable, List, Tuple

import numpy as np

from gipf._core import (
    ENCODING_VERSION,
    GRID,
    NUM_ACTIONS,
    NUM_PLANES,
    NUM_SYMMETRIES,
    Game,
    Searches,
    action_of,
    index_of,
    random_games,
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
    "action_of",
    "index_of",
    "random_games",
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
