"""A run's games and training samples from Python, on shards the Rust
self-play program wrote (the samples' equality with the trainer's rows is
tests/python.rs, which runs check_samples.py)."""

import inspect
import pathlib
import subprocess
import sys

import pytest

import gipf

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A run folder with 3 tiny self-play games in games/."""
    run = tmp_path_factory.mktemp("run")
    selfplay = ROOT / "target" / "debug" / "selfplay"
    args = [selfplay, "--config", ROOT / "configs" / "tiny.toml", "--games", "3", "--seed", "4",
            "--out", run / "games", "--worker", "py"]
    subprocess.run([str(a) for a in args], check=True, capture_output=True)
    return run


def test_games_read_back_and_replay_to_their_results(run):
    games = list(gipf.read_games(run))
    assert len(games) == 3 and gipf.games_files(run) == gipf.games_files(run / "games")
    for game in games:
        replay = gipf.Game(game["variant"])
        for action in game["actions"]:
            replay.play(action)
        assert replay.winner == game["result"]["winner"]
        assert all(0 <= s["ply"] < len(game["actions"]) for s in game["samples"])


def test_samples_are_arrays_of_one_length(run):
    data = gipf.samples(run, augment=True, seed=3)
    n = len(data["value"])
    assert n > 20 and data["planes"].shape == (n, gipf.NUM_PLANES, gipf.GRID, gipf.GRID)
    assert data["policy"].shape == data["legal"].shape == (n, gipf.NUM_ACTIONS)
    assert ((data["policy"] > 0) <= (data["legal"] > 0)).all(), "policy targets only on legal actions"
    assert set(data["symmetry"]) > {0}
    assert (abs(data["value"]) <= 1).all()


def test_the_default_targets_are_the_cpu_configs():
    if sys.version_info < (3, 11):
        pytest.skip("tomllib is Python 3.11's")
    import tomllib

    train = tomllib.loads((ROOT / "configs" / "cpu.toml").read_text())["train"]
    defaults = inspect.signature(gipf.samples).parameters
    assert defaults["every_position"].default == train["value_every_position"]
    assert defaults["root_value_share"].default == train["root_value_share"]
    assert defaults["root_value_lambda"].default == train["root_value_lambda"]


def test_damaged_files_are_refused_by_name(tmp_path):
    shard = tmp_path / "shard-0000000000001-x-000000.jsonl.zst"
    shard.write_bytes(b"\x28\xb5\x2f\xfd garbage")
    with pytest.raises(ValueError, match="shard-0000000000001"):
        list(gipf.read_games(tmp_path))
    game = tmp_path / "game-1.json"
    game.write_text('{"format": 2, "actions": ["zz"]}')
    with pytest.raises(ValueError, match="game-1.json"):
        list(gipf.read_games(game))
    with pytest.raises(ValueError, match="no such"):
        gipf.games_files(tmp_path / "missing")


def zstd_bomb(size):
    """A zstd frame of 34 KB that decompresses to `size` bytes of 'a':
    run-length blocks of 128 KB each."""
    block = 128 * 1024
    frame = bytearray(b"\x28\xb5\x2f\xfd")  # the magic number
    frame += bytes([0x00, 7 << 3])  # no content size or checksum; a 128 KB window
    blocks = -(-size // block)
    for i in range(blocks):
        header = (block << 3) | (1 << 1) | (i == blocks - 1)  # an RLE block of 128 KB
        frame += header.to_bytes(3, "little") + b"a"
    return bytes(frame)


def test_a_shard_that_decompresses_without_bound_is_refused(tmp_path):
    shard = tmp_path / "shard-0000000000001-x-000000.jsonl.zst"
    shard.write_bytes(zstd_bomb((1 << 30) + (1 << 20)))
    assert shard.stat().st_size < 40_000
    with pytest.raises(ValueError, match="decompresses to more than"):
        list(gipf.read_games(tmp_path))
    with pytest.raises(ValueError, match="decompresses to more than"):
        gipf.samples(shard)
    # The same frame below the bound decompresses: its one line, no game, is skipped with a warning.
    shard.write_bytes(zstd_bomb(1 << 20))
    with pytest.warns(UserWarning, match="shard-0000000000001"):
        assert list(gipf.read_games(tmp_path)) == []
