"""The core's batched search driven from Python."""

import numpy as np
import pytest

import gipf


def uniform(planes):
    """Equal logits and a value of 0: a search guided by the rules alone."""
    n = len(planes)
    return np.zeros((n, gipf.NUM_ACTIONS), np.float32), np.zeros(n, np.float32)


def test_every_game_gets_its_simulations():
    games = [gipf.Game() for _ in range(5)]
    for i, game in enumerate(games):
        for _ in range(i):
            game.play(game.legal_actions()[0])
    results = gipf.search(games, 40, uniform, batch_size=4)
    assert len(results) == 5
    for game, result in zip(games, results):
        assert result["done"] and result["best"] in game.legal_actions()
        # Every simulation but the root's own expansion visits a child.
        assert sum(n for _, n in result["visits"]) == 39
        assert abs(sum(p for _, p in result["policy"]) - 1) < 1e-5


def test_the_searches_repeat_with_their_seed():
    def run(seed):
        return gipf.search([gipf.Game(), gipf.Game()], 30, uniform, seed=seed, root="gumbel", candidates=4)

    assert run(7) == run(7)
    assert run(8) != run(7), "another seed samples other candidates"


def test_a_network_that_prefers_an_action_gets_it_searched():
    favourite = gipf.index_of("e9-e8")

    def keen(planes):
        logits, values = uniform(planes)
        logits[:, favourite] = 8.0
        return logits, values

    result = gipf.search([gipf.Game()], 50, keen)[0]
    assert result["best"] == "e9-e8"


def test_bad_outputs_are_refused():
    searches = gipf.Searches([gipf.Game()], 10)
    planes = searches.gather()
    assert planes.shape == (1, gipf.NUM_PLANES, gipf.GRID, gipf.GRID)
    with pytest.raises(ValueError, match="shape"):
        searches.apply(np.zeros((2, gipf.NUM_ACTIONS), np.float32), np.zeros(2, np.float32))
    logits, values = uniform(planes)
    with pytest.raises(ValueError, match="not finite"):
        searches.apply(logits, np.full(1, np.nan, np.float32))
    with pytest.raises(ValueError, match="no batch"):
        searches.apply(logits, values)
    planes = searches.gather()
    searches.apply(*uniform(planes))
    with pytest.raises(TypeError):
        searches.apply(np.zeros((len(planes), gipf.NUM_ACTIONS)), np.zeros(len(planes)))
    with pytest.raises(ValueError):
        gipf.Searches([gipf.Game()], 0)
    with pytest.raises(ValueError, match="root"):
        gipf.Searches([gipf.Game()], 10, root="dirichlet")
