"""GIPF as a PettingZoo AEC environment.

Agents ``"white"`` and ``"black"``. In GIPF the players do not simply
alternate (after a push that makes rows, the player who owns them removes
them, and may act twice running or out of turn), so ``agent_selection``
follows the rules' player to act. Actions are the network's action indices
(``gipf.NUM_ACTIONS``); an observation is a dict of ``observation``, the
network's input planes (float32, ``(NUM_PLANES, GRID, GRID)``, from the view
of the player to act, as the network sees them), and ``action_mask``
(int8, the legal actions of the agent observing; all zero for the agent
not to act). The winner gets +1 and the loser -1; a game that reaches
``max_actions`` is truncated, 0 each.

>>> from gipf.pettingzoo import env
>>> e = env()
>>> e.reset(seed=1)
>>> for agent in e.agent_iter():
...     observation, reward, termination, truncation, info = e.last()
...     mask = observation["action_mask"]
...     e.step(None if termination or truncation else int(mask.nonzero()[0][0]))
"""

from typing import Optional

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from gipf._core import GRID, NUM_ACTIONS, NUM_PLANES, Game


def env(**kwargs) -> AECEnv:
    """The environment with PettingZoo's usual wrappers for board games: an
    illegal action ends the game with -1 for its player, an action outside
    the action space raises, and the order of calls is enforced."""
    environment = raw_env(**kwargs)
    environment = wrappers.TerminateIllegalWrapper(environment, illegal_reward=-1)
    environment = wrappers.AssertOutOfBoundsWrapper(environment)
    return wrappers.OrderEnforcingWrapper(environment)


class raw_env(AECEnv):
    metadata = {"render_modes": ["human", "ansi"], "name": "gipf_v0", "is_parallelizable": False}

    def __init__(self, variant: str = "standard", max_actions: int = 300, render_mode: Optional[str] = None):
        super().__init__()
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode {render_mode!r}: expected one of {self.metadata['render_modes']}")
        if max_actions < 1:
            raise ValueError(f"max_actions {max_actions}: expected 1 or more")
        Game(variant)  # ValueError for an unknown variant, here rather than at reset
        self.variant = variant
        self.max_actions = max_actions
        self.render_mode = render_mode
        self.possible_agents = ["white", "black"]
        self.agents = self.possible_agents[:]
        self._observation_space = spaces.Dict(
            {
                "observation": spaces.Box(low=0.0, high=1.0, shape=(NUM_PLANES, GRID, GRID), dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8),
            }
        )
        self._action_space = spaces.Discrete(NUM_ACTIONS)
        self.game = Game(variant)

    def observation_space(self, agent):
        return self._observation_space

    def action_space(self, agent):
        return self._action_space

    def observe(self, agent):
        mask = self.game.action_mask().astype(np.int8) if agent == self.game.to_act else np.zeros(NUM_ACTIONS, np.int8)
        return {"observation": self.game.encode(), "action_mask": mask}

    def reset(self, seed=None, options=None):
        # The game has no chance: a seed changes nothing.
        self.game = Game(self.variant)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self.game.to_act

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0
        self.game.play_index(int(action))
        self.rewards = dict.fromkeys(self.agents, 0)
        if self.game.is_over:
            winner = self.game.winner
            for a in self.agents:
                self.rewards[a] = 1 if a == winner else -1
            self.terminations = dict.fromkeys(self.agents, True)
        elif len(self.game.actions) >= self.max_actions:
            self.truncations = dict.fromkeys(self.agents, True)
        # Once the game ends, each agent in turn gets its last observation.
        self.agent_selection = self.game.to_act or self._other(agent)
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _other(self, agent):
        return self.possible_agents[1 - self.possible_agents.index(agent)]

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: nothing to render")
            return None
        picture = repr(self.game)
        if self.render_mode == "ansi":
            return picture
        print(picture)
        return None

    def close(self):
        pass
