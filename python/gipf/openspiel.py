"""GIPF as an OpenSpiel game, registered with pyspiel as ``python_gipf``
(install ``open_spiel``; importing this module registers it).

>>> import pyspiel, gipf.openspiel
>>> game = pyspiel.load_game("python_gipf", {"variant": "standard", "max_actions": 300})
>>> state = game.new_initial_state()
>>> state.apply_action(state.legal_actions()[0])

Player 0 is white, 1 black. In GIPF the players do not simply alternate
(the player who owns rows removes them, and may act twice running or out of
turn): `current_player()` follows the rules. Actions are the network's
action indices; the observation tensor is the network's input planes (from
the view of the player to act). A game that reaches `max_actions` ends
drawn, 0 each.
"""

import numpy as np
import pyspiel
from open_spiel.python.observation import IIGObserverForPublicInfoGame

from gipf._core import GRID, NUM_ACTIONS, NUM_PLANES, Game, action_of

_DEFAULTS = {"variant": "standard", "max_actions": 300}
_COLORS = ["white", "black"]

_GAME_TYPE = pyspiel.GameType(
    short_name="python_gipf",
    long_name="GIPF",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULTS,
)


class GipfGame(pyspiel.Game):
    def __init__(self, params=None):
        params = {**_DEFAULTS, **(params or {})}
        Game(params["variant"])  # ValueError for an unknown variant
        if int(params["max_actions"]) < 1:
            raise ValueError(f"max_actions {params['max_actions']}: expected 1 or more")
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=0,
            num_players=2,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=int(params["max_actions"]),
        )
        super().__init__(_GAME_TYPE, info, params)
        self.variant, self.max_actions = params["variant"], int(params["max_actions"])

    def new_initial_state(self):
        return GipfState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return PlanesObserver(params)
        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class GipfState(pyspiel.State):
    def __init__(self, game: GipfGame):
        super().__init__(game)
        self.game = Game(game.variant)
        self._max_actions = game.max_actions

    def current_player(self):
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return _COLORS.index(self.game.to_act)

    def _legal_actions(self, player):
        return sorted(self.game.legal_indices())

    def _apply_action(self, action):
        self.game.play_index(int(action))

    def _action_to_string(self, player, action):
        return action_of(int(action))

    def is_terminal(self):
        return self.game.is_over or len(self.game.actions) >= self._max_actions

    def returns(self):
        winner = self.game.winner
        if winner is None:
            return [0.0, 0.0]
        return [1.0, -1.0] if winner == "white" else [-1.0, 1.0]

    def __str__(self):
        return repr(self.game)


class PlanesObserver:
    """The network's input planes, conforming to OpenSpiel's PyObserver."""

    def __init__(self, params):
        if params:
            raise ValueError(f"observation parameters are not supported: {params}")
        shape = (NUM_PLANES, GRID, GRID)
        self.tensor = np.zeros(np.prod(shape), np.float32)
        self.dict = {"observation": np.reshape(self.tensor, shape)}

    def set_from(self, state, player):
        self.dict["observation"][:] = state.game.encode()

    def string_from(self, state, player):
        return repr(state.game)


pyspiel.register_game(_GAME_TYPE, GipfGame)
