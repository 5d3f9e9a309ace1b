"""Self-play from Python: the self-play program's games, written as a shard
(that the Rust trainer reads too, and whose games equal the Rust
generator's from the same seed: tests/python.rs)."""

import json

import numpy as np
import pytest

import gipf
import gipf.selfplay

SMALL = dict(simulations=8, cheap_simulations=4, max_actions=60)


def uniform(planes):
    n = len(planes)
    return np.zeros((n, gipf.NUM_ACTIONS), np.float32), np.zeros(n, np.float32)


def test_games_from_python_are_a_shard_the_rust_side_reads(tmp_path):
    out = tmp_path / "games"
    records, stats = gipf.selfplay.play(uniform, games=3, out=str(out), **SMALL)
    assert len(records) == 3 and stats["evaluations"] > 0
    again, _ = gipf.selfplay.play(uniform, games=3, **SMALL)
    assert [r["actions"] for r in again] == [r["actions"] for r in records], "the same seed, the same games"
    assert [g["actions"] for g in gipf.read_games(out)] == [r["actions"] for r in records]
    shard = gipf.games_files(out)[0]
    data = gipf.samples(shard)
    assert len(data["value"]) == sum(len(r["actions"]) for r in records), "every position a value sample"


def test_cheap_searches_leave_decisions_without_a_policy_target():
    records, _ = gipf.selfplay.play(uniform, games=4, full_search_fraction=0.0, late_reserve=0, **SMALL)
    assert all(r["samples"] == [] for r in records), "only full searches are samples"
    records, _ = gipf.selfplay.play(uniform, games=4, full_search_fraction=1.0, **SMALL)
    searched = [len(r["samples"]) for r in records]
    assert all(n > 0 for n in searched) and sum(searched) <= sum(len(r["actions"]) for r in records)
    assert records[0]["config"]["selfplay"]["full_search_fraction"] == 1.0


def test_gumbel_roots_play_whole_games():
    records, _ = gipf.selfplay.play(uniform, games=2, gumbel_candidates=4, search={"batch_size": 2}, **SMALL)
    assert len(records) == 2 and all(r["samples"] for r in records)
    # Gumbel's improved policy puts mass on every legal action; visit counts
    # of 8 simulations can put it on 8 at most.
    spread = max(sum(p > 0 for p in s["policy"].values()) for r in records for s in r["samples"])
    assert spread > SMALL["simulations"], spread


def test_settings_are_checked_where_they_enter():
    with pytest.raises(ValueError, match="unknown field `simulation`"):
        gipf.SelfPlay(1, settings=json.dumps({"simulation": 8}))
    with pytest.raises(ValueError, match="selfplay.cheap_simulations"):
        gipf.SelfPlay(1, settings=json.dumps({"simulations": 8}))
    with pytest.raises(ValueError, match="search.batch_size"):
        gipf.SelfPlay(1, search=json.dumps({"batch_size": 0}))
    with pytest.raises(ValueError, match="max_actions"):
        gipf.SelfPlay(1, max_actions=2)
    # Each key in range, their product not: the leaves of one pass, bounded as in Rust.
    with pytest.raises(ValueError, match="parallel_games × search.batch_size"):
        gipf.SelfPlay(4096, settings=json.dumps({"parallel_games": 4096}), search=json.dumps({"batch_size": 256}))
    selfplay = gipf.SelfPlay(1, settings=json.dumps({"simulations": 8, "cheap_simulations": 4}))
    planes = selfplay.gather()
    with pytest.raises(ValueError, match="values must be from -1 to 1"):
        selfplay.apply(np.zeros((len(planes), gipf.NUM_ACTIONS), np.float32), np.full(len(planes), 2, np.float32))
    with pytest.raises(ValueError, match="waits for its outputs"):
        selfplay.gather()
