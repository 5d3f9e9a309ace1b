"""The PettingZoo environment passes PettingZoo's own tests for AEC
environments (max_cycles_test is for parallel environments, which a board
game with turns is not)."""

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from gipf.pettingzoo import env, raw_env


def test_api():
    api_test(env(), num_cycles=1000)


def test_seed():
    seed_test(env, num_cycles=500)


def test_render():
    render_test(env)


def test_games_end_with_the_winner_rewarded():
    e = env(max_actions=10_000)
    rng = np.random.default_rng(3)
    for _ in range(3):
        e.reset()
        totals = dict.fromkeys(e.possible_agents, 0)
        for agent in e.agent_iter():
            observation, reward, termination, truncation, _ = e.last()
            totals[agent] += reward
            if termination or truncation:
                e.step(None)
            else:
                e.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        winner = e.unwrapped.game.winner
        assert totals == {winner: 1, ("black" if winner == "white" else "white"): -1}, totals


def test_an_unknown_variant_or_render_mode_is_refused():
    with pytest.raises(ValueError, match="variant"):
        raw_env(variant="chess")
    with pytest.raises(ValueError, match="render_mode"):
        raw_env(render_mode="rgb_array")
