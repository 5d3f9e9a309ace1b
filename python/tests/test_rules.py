"""The rules from Python against the Rust command line on the same games."""

import copy
import json

import numpy as np
import pytest

import gipf


def random_game(seed, variant="standard", length=60):
    rng = np.random.default_rng(seed)
    game = gipf.Game(variant)
    while not game.is_over and len(game.actions) < length:
        legal = game.legal_actions()
        game.play(legal[rng.integers(len(legal))])
    return game


@pytest.mark.parametrize("variant", ["basic", "standard", "tournament"])
def test_states_and_legal_actions_match_the_command_line(rules_cli, variant):
    for seed in range(4):
        game = random_game(seed, variant, length=40 + 20 * seed)
        status, out, err = rules_cli("--variant", variant, "--moves", " ".join(game.actions), "--json")
        assert status == 0, err
        assert game.state() == json.loads(out)
        assert game.variant == variant


def test_a_bad_action_raises_the_command_lines_message_and_changes_nothing(rules_cli):
    game = random_game(1, length=5)
    before = game.state()
    for bad in ["zz", "e5-e6", "Ga1-b2-c3", "xq9"]:
        with pytest.raises(ValueError) as raised:
            game.play(bad)
        status, _, err = rules_cli("--moves", " ".join(game.actions + [bad]))
        assert status != 0
        assert str(raised.value) in err, (str(raised.value), err)
        assert game.state() == before and len(game.actions) == 5


def test_undo_copy_and_json_round_trip():
    game = random_game(2, length=10)
    assert not game.is_over
    copied = game.copy()
    deep = copy.deepcopy(game)
    state = game.state()
    game.play(game.legal_actions()[0])
    assert copied.state() == state and deep.state() == state, "copies are independent"
    game.undo()
    assert game.state() == state
    back = gipf.Game.from_json(game.to_json())
    assert back.state() == state and back.legal_actions() == game.legal_actions()
    with pytest.raises(ValueError):
        gipf.Game().undo()
    with pytest.raises(ValueError):
        gipf.Game.from_json('{"variant": "standard", "board": {"z9": "W"}}')
    with pytest.raises(ValueError, match="variant"):
        gipf.Game("chess")
    removing = gipf.Game()
    while not any(a.startswith("x") for a in removing.legal_actions()):
        removing.play(removing.legal_actions()[0])
    with pytest.raises(ValueError, match="removal"):
        removing.to_json()


def test_the_picture_is_the_command_lines(rules_cli):
    game = random_game(3, length=20)
    _, out, _ = rules_cli("--moves", " ".join(game.actions))
    assert repr(game) in out


def test_actions_and_indices_are_one_to_one():
    actions = [gipf.action_of(i) for i in range(gipf.NUM_ACTIONS)]
    assert len(set(actions)) == gipf.NUM_ACTIONS
    assert all(gipf.index_of(a) == i for i, a in enumerate(actions))
    with pytest.raises(ValueError):
        gipf.action_of(gipf.NUM_ACTIONS)
    with pytest.raises(ValueError, match="not within one line"):
        gipf.index_of("xb2,c4")


def test_the_encoding_and_its_symmetries():
    game = random_game(4, length=25)
    planes = game.encode()
    assert planes.shape == (gipf.NUM_PLANES, gipf.GRID, gipf.GRID) and planes.dtype == np.float32
    assert np.array_equal(game.encode(0), planes)
    mask = game.action_mask()
    assert mask.sum() == len(game.legal_actions())
    for k in range(gipf.NUM_SYMMETRIES):
        turned = game.encode(k)
        # A symmetry moves points: each plane keeps its count.
        assert np.array_equal(turned.sum(axis=(1, 2)), planes.sum(axis=(1, 2)))
        moved = gipf.transform_policy(mask.astype(np.float32), k)
        assert moved.sum() == mask.sum() and set(np.unique(moved)) <= {0.0, 1.0}
    assert any(not np.array_equal(game.encode(k), planes) for k in range(1, gipf.NUM_SYMMETRIES))
    with pytest.raises(ValueError):
        game.encode(12)
    with pytest.raises(ValueError):
        gipf.transform_policy(np.zeros(3, np.float32), 1)


def test_random_games_repeat_with_their_seed():
    total = gipf.random_games(20, seed=5)
    assert total == gipf.random_games(20, seed=5)
    assert gipf.random_games(20, seed=6) != total, "another seed plays other games"
    # Random games end on their own, far under the 1000-action cap: 24 to
    # 87 actions each over 2,000 seeds.
    assert 20 * 24 <= total <= 20 * 100


def test_indices_play_as_the_notation_does():
    by_index, by_notation = gipf.Game(), gipf.Game()
    for _ in range(12):
        assert by_index.legal_indices() == [gipf.index_of(a) for a in by_notation.legal_actions()]
        by_index.play_index(by_index.legal_indices()[-1])
        by_notation.play(by_notation.legal_actions()[-1])
    assert by_index.state() == by_notation.state()
    with pytest.raises(ValueError):
        by_index.play_index(gipf.NUM_ACTIONS)
    illegal = next(i for i in range(gipf.NUM_ACTIONS) if i not in by_index.legal_indices())
    with pytest.raises(ValueError, match="illegal"):
        by_index.play_index(illegal)
