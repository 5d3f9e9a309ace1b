"""Self-play driven from Python: the self-play program's games (the core's
self-play: full and cheap searches, root noise or Gumbel roots, the
temperature, forced actions, reused trees), many at once, their leaves
evaluated by a Python callable (a PyTorch network, say), recorded in the
project's format and written as a shard that the Rust trainer (or
``gipf.samples``) reads.

>>> import gipf.selfplay, gipf.torch, torch
>>> net = gipf.torch.load("models/reference.safetensors")
>>> def evaluate(planes):
...     with torch.no_grad():
...         logits, values = net(torch.from_numpy(planes))
...     return logits.numpy(), values.numpy()
>>> games, stats = gipf.selfplay.play(evaluate, games=16, out="runs/python/games")
"""

import json
import os
import time
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from gipf._core import SelfPlay, write_shard

Evaluator = Callable[[np.ndarray], Tuple[np.ndarray, np.ndarray]]


def play(
    evaluate: Evaluator,
    games: int = 16,
    seed: int = 0,
    variant: str = "standard",
    max_actions: int = 600,
    search: Optional[Dict] = None,
    out: Optional[str] = None,
    model: str = "python",
    worker: str = "python",
    **settings,
) -> Tuple[List[Dict], Dict[str, float]]:
    """Plays ``games`` games, ``parallel_games`` at once, as the self-play
    program does: ``settings`` are keys of a configuration's ``[selfplay]``
    table (``simulations``, ``cheap_simulations``, ``full_search_fraction``,
    ``temperature_actions``, ``gumbel_candidates``, ...) and ``search`` a dict
    of ``[search]`` keys (``batch_size``, ``c_puct``, ...); the keys left out
    take configs/cpu.toml's values. The games from ``seed`` are the self-play
    program's from ``--seed`` where the evaluations are the same (tested).
    Returns the games as stored (dicts of the shard format) and
    ``evaluations``, ``seconds`` and ``evaluations_per_second``; with
    ``out`` (a games folder) they are also written there as one shard."""
    selfplay = SelfPlay(games, seed=seed, variant=variant, max_actions=max_actions,
                        settings=json.dumps(settings), search=json.dumps(search or {}))
    records, evaluations = [], 0
    start = time.perf_counter()
    while True:
        planes = selfplay.gather()
        records += selfplay.take_finished(model, worker)
        if len(planes) == 0:
            break
        logits, values = evaluate(planes)
        evaluations += len(planes)
        selfplay.apply(np.asarray(logits, dtype=np.float32), np.asarray(values, dtype=np.float32))
    seconds = time.perf_counter() - start
    if out is not None:
        os.makedirs(out, exist_ok=True)
        write_shard(out, records, worker)
    stats = {"evaluations": evaluations, "seconds": seconds, "evaluations_per_second": evaluations / seconds}
    return [json.loads(r) for r in records], stats
