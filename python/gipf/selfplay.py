"""Self-play driven from Python: many games searched at once by the core's
batched search, their leaves evaluated by a Python callable (a PyTorch
network, say), the games recorded in the project's format and written as a
shard that the Rust trainer (or ``gipf.samples``) reads.

>>> import gipf.selfplay, gipf.torch, torch
>>> net = gipf.torch.load("models/reference.safetensors")
>>> def evaluate(planes):
...     with torch.no_grad():
...         logits, values = net(torch.from_numpy(planes))
...     return logits.numpy(), values.numpy()
>>> games, stats = gipf.selfplay.play(evaluate, games=16, simulations=64, out="runs/python/games")
"""

import json
import os
import time
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np

from gipf._core import ENCODING_VERSION, Game, Searches, write_shard

Evaluator = Callable[[np.ndarray], Tuple[np.ndarray, np.ndarray]]


def play(
    evaluate: Evaluator,
    games: int = 16,
    simulations: int = 64,
    seed: int = 0,
    temperature_actions: int = 10,
    max_actions: int = 300,
    variant: str = "standard",
    root: str = "noise",
    batch_size: int = 4,
    out: Optional[str] = None,
    model: str = "python",
    worker: str = "python",
) -> Tuple[List[Dict], Dict[str, float]]:
    """Plays ``games`` games at once, every decision searched with
    ``simulations`` simulations (its root as ``root`` says, see
    ``gipf.Searches``) and recorded as a training sample; the first
    ``temperature_actions`` actions of a game are drawn in proportion to
    the visits, the later ones are the search's best. Forced actions (the
    only legal one) are played without a search. Returns the games as
    stored (dicts of the shard format) and ``evaluations``, ``seconds`` and
    ``evaluations_per_second``; with ``out`` (a games folder) they are
    also written there as one shard."""
    rng = np.random.default_rng(seed)
    live = [(Game(variant), []) for _ in range(games)]
    records, evaluations, decision = [], 0, 0
    start = time.perf_counter()
    while True:
        for game, _ in live:
            while not _ended(game, max_actions) and len(game.legal_indices()) == 1:
                game.play_index(game.legal_indices()[0])
        for game, samples in [g for g in live if _ended(g[0], max_actions)]:
            records.append(_record(game, samples, variant, model, seed, worker))
        live = [g for g in live if not _ended(g[0], max_actions)]
        if not live:
            break
        searches = Searches([game for game, _ in live], simulations, batch_size=batch_size,
                            seed=seed * 1_000_003 + decision, root=root)
        decision += 1
        while True:
            planes = searches.gather()
            if len(planes) == 0:
                break
            logits, values = evaluate(planes)
            evaluations += len(planes)
            searches.apply(np.asarray(logits, dtype=np.float32), np.asarray(values, dtype=np.float32))
        for (game, samples), result in zip(live, searches.results()):
            samples.append({"ply": len(game.actions), "policy": dict(result["policy"]), "root_value": result["value"]})
            game.play(_choose(result, len(game.actions) < temperature_actions, rng))
    seconds = time.perf_counter() - start
    if out is not None:
        os.makedirs(out, exist_ok=True)
        write_shard(out, [json.dumps(r) for r in records], worker)
    stats = {"evaluations": evaluations, "seconds": seconds, "evaluations_per_second": evaluations / seconds}
    return records, stats


def _ended(game: Game, max_actions: int) -> bool:
    return game.is_over or len(game.actions) >= max_actions


def _choose(result: Dict, explore: bool, rng: np.random.Generator) -> str:
    if not explore:
        return result["best"]
    actions = [a for a, _ in result["visits"]]
    visits = np.array([n for _, n in result["visits"]], dtype=np.float64)
    return actions[rng.choice(len(actions), p=visits / visits.sum())]


def _record(game: Game, samples: List[Dict], variant: str, model: str, seed: int, worker: str) -> Dict:
    return {
        "format": 2,
        "encoding_version": ENCODING_VERSION,
        "variant": variant,
        "actions": game.actions,
        "samples": samples,
        "result": game.result(),
        "model": model,
        "seed": seed,
        "worker": worker,
        "config": {"source": "gipf.selfplay (Python)"},
    }
