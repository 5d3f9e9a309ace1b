"""Self-play from Python, its games written as a shard (that the Rust
trainer reads too: tests/python.rs)."""

import numpy as np

import gipf
import gipf.selfplay


def uniform(planes):
    n = len(planes)
    return np.zeros((n, gipf.NUM_ACTIONS), np.float32), np.zeros(n, np.float32)


def test_games_from_python_are_a_shard_the_rust_side_reads(tmp_path):
    out = tmp_path / "games"
    records, stats = gipf.selfplay.play(uniform, games=3, simulations=8, max_actions=60, out=str(out))
    assert len(records) == 3 and stats["evaluations"] > 0
    again, _ = gipf.selfplay.play(uniform, games=3, simulations=8, max_actions=60)
    assert [r["actions"] for r in again] == [r["actions"] for r in records], "the same seed, the same games"
    assert [g["actions"] for g in gipf.read_games(out)] == [r["actions"] for r in records]
    shard = gipf.games_files(out)[0]
    data = gipf.samples(shard)
    assert len(data["value"]) >= sum(len(r["actions"]) for r in records) - 10
