"""GIPF as an OpenSpiel game: OpenSpiel's own random simulation test, and
its MCTS bot playing it."""

import numpy as np
import pytest

import gipf

# The test command installs open_spiel where its wheel installs on the
# machine's Python (scripts/setup-python.sh says so when it does not).
pyspiel = pytest.importorskip("pyspiel", reason="no open_spiel wheel for this Python")

import gipf.openspiel  # noqa: E402,F401  (registers python_gipf)
from open_spiel.python.algorithms import mcts  # noqa: E402


def test_openspiels_random_simulation_test():
    for variant in ["basic", "standard", "tournament"]:
        game = pyspiel.load_game("python_gipf", {"variant": variant, "max_actions": 200})
        pyspiel.random_sim_test(game, num_sims=5, serialize=False, verbose=False)


def test_mcts_beats_random_play():
    game = pyspiel.load_game("python_gipf", {"max_actions": 300})
    rng = np.random.RandomState(2)
    bot = mcts.MCTSBot(game, uct_c=2.0, max_simulations=30,
                       evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng), random_state=rng)
    totals = 0.0
    for game_index in range(2):
        state = game.new_initial_state()
        mcts_player = game_index % 2
        while not state.is_terminal():
            if state.current_player() == mcts_player:
                action = bot.step(state)
            else:
                action = rng.choice(state.legal_actions())
            state.apply_action(action)
        totals += state.returns()[mcts_player]
    assert totals == 2.0, f"MCTS against random: {totals} of 2"


def test_the_observation_is_the_networks_planes():
    game = pyspiel.load_game("python_gipf")
    state = game.new_initial_state()
    state.apply_action(state.legal_actions()[3])
    planes = np.array(state.observation_tensor(state.current_player())).reshape(gipf.NUM_PLANES, gipf.GRID, gipf.GRID)
    assert np.array_equal(planes, state.game.encode())
    assert state.action_to_string(state.current_player(), state.legal_actions()[0]) in state.game.legal_actions()
