"""One PettingZoo AEC environment class for every game.

The class knows the engine contract (core.py) and nothing of any game's rules. It gives natively
what PettingZoo's standard wrappers give the classic environments - order enforcement (no step or
observe before reset), action bounds, and illegal-action handling (raise by default; terminate
with a penalty when ``illegal_action="penalize"``) - at the cost of an `if` each, since stacking
the three wrappers costs about 10x in steps per second.

Observations are ``{"observation": float32 vector, "action_mask": int8 vector}``; the mask is all
zeros for a seat that is not to act. ``state()`` is the perfect-information view (every seat's
observation, concatenated in seat order) for centralized critics.
"""
from __future__ import annotations

import warnings

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from .core import H_DONE, H_REWARD, H_TRUNC, H_TURN, DominoError, Game, IllegalActionError
from .registry import make_game
from .rng import seed_from_generator

ENV_KEYS = ("render_mode", "illegal_action", "illegal_reward")


class DominoEnv(AECEnv, EzPickle):
    """PettingZoo AEC env over a game engine (see module doc)."""

    metadata = {"render_modes": ["ansi"], "name": "domino_v0", "is_parallelizable": False}

    def __init__(self, game: Game, render_mode: str | None = None, illegal_action: str = "raise",
                 illegal_reward: float = -1.0):
        EzPickle.__init__(self, game, render_mode, illegal_action, illegal_reward)
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise DominoError(f"{game.name}: render_mode={render_mode!r} is not supported; allowed: [None, 'ansi']")
        if illegal_action not in ("raise", "penalize"):
            raise DominoError(
                f"{game.name}: illegal_action={illegal_action!r} is not allowed; allowed values: ['raise', 'penalize']"
            )
        self.game = game
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.metadata = {**DominoEnv.metadata, "name": game.name}
        n = game.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = self.possible_agents[:]
        self._seat_of = {a: i for i, a in enumerate(self.possible_agents)}
        high = game.obs_high() if hasattr(game, "obs_high") else 1000.0
        obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, high, (game.obs_size,), np.float32),
            "action_mask": spaces.Box(0, 1, (game.num_actions,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(game.num_actions) for a in self.possible_agents}
        self.state_space = spaces.Box(0.0, high, (n * game.obs_size,), np.float32)
        self._state = game.new_state()
        self._rng: np.random.Generator | None = None
        self._ready = False

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        elif self._rng is None:
            self._rng = np.random.default_rng()
        self.game.reset(self._state, seed_from_generator(self._rng))
        if options:
            unknown = set(options) - {"deal"}
            if unknown:  # PettingZoo's api_test passes arbitrary options: warn, do not fail
                warnings.warn(f"{self.game.name}: ignored unknown reset option(s) {sorted(unknown)}; known: ['deal']")
            if "deal" in options:
                self.game.set_deal(self._state, options["deal"])
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._skip_agent_selection = None
        self._ready = True
        self.agent_selection = self.possible_agents[0]
        self._after_engine_step(clear=True)

    def observe(self, agent: str):
        if not self._ready:
            raise DominoError(f"{self.game.name}: call reset() before observe()")
        seat = self._seat_of[agent]
        obs = self.game.observe(self._state, seat)
        mask = np.zeros(self.game.num_actions, dtype=np.int8)
        if self._state[H_DONE] == 0 and self._state[H_TURN] == seat:
            self.game.legal_mask(self._state, mask)
        return {"observation": obs, "action_mask": mask}

    def step(self, action):
        if not self._ready:
            raise DominoError(f"{self.game.name}: call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise IllegalActionError(
                    f"{self.game.name}: {agent} is done (the episode is over); step(None) removes it, got {action!r}",
                    action,
                )
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalActionError(
                f"{self.game.name}: {agent} is to act; step(None) is only for agents that are done", action
            )
        self._cumulative_rewards[agent] = 0.0
        try:
            self.game.step(self._state, action)
        except IllegalActionError as err:
            if self.illegal_action == "raise" or err.kind != "illegal":
                raise
            self._penalize(agent)
            return
        self._after_engine_step()

    def _after_engine_step(self, clear: bool = False):
        s = self._state
        scale = self.game.reward_scale
        for i, a in enumerate(self.possible_agents):
            r = 0.0 if clear else float(s[H_REWARD + i]) / scale
            self.rewards[a] = r
            self._cumulative_rewards[a] += r
        if s[H_DONE]:
            done_key = self.truncations if s[H_TRUNC] else self.terminations
            for a in self.agents:
                done_key[a] = True
        else:
            self.agent_selection = self.possible_agents[int(s[H_TURN])]

    def _penalize(self, agent: str):
        for a in self.agents:
            self.rewards[a] = self.illegal_reward if a == agent else 0.0
            self._cumulative_rewards[a] += self.rewards[a]
            self.terminations[a] = True
        self.infos[agent] = {**self.infos[agent], "illegal_move": True}

    def state(self) -> np.ndarray:
        """Perfect-information view: every seat's observation, concatenated in seat order."""
        if not self._ready:
            raise DominoError(f"{self.game.name}: call reset() before state()")
        return np.concatenate([self.game.observe(self._state, i) for i in range(self.game.num_players)])

    def render(self):
        if self.render_mode is None:
            import gymnasium
            gymnasium.logger.warn("render() called without render_mode='ansi'")
            return None
        if not self._ready:
            raise DominoError(f"{self.game.name}: call reset() before render()")
        return self.game.render(self._state, self._seat_of[self.agent_selection])

    def close(self):
        pass

    # ------------------------------------------------------------------ helpers
    def legal_actions(self) -> list[int]:
        """Legal action ids of the agent to act."""
        return self.game.legal_actions(self._state)

    def describe_action(self, action: int) -> str:
        return self.game.describe_action(action)

    def encode_action(self, *args, **kwargs) -> int:
        return self.game.encode_action(*args, **kwargs)

    def decode_observation(self, observation) -> dict:
        """Named pieces of an observation vector (or of the dict observe() returns)."""
        if isinstance(observation, dict):
            observation = observation["observation"]
        return self.game.decode(observation)


def make_env(name: str, **kwargs) -> DominoEnv:
    """Environment `name` with game config and env options (render_mode, illegal_action, illegal_reward)."""
    env_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in ENV_KEYS}
    return DominoEnv(make_game(name, **kwargs), **env_kwargs)


def env_factory(name: str):
    """`env` and `raw_env` constructors for a registered game (both give the same guarded env)."""

    def env(**kwargs) -> DominoEnv:
        return make_env(name, **kwargs)

    env.__doc__ = f"The {name} PettingZoo AEC environment. Keys: the game's config plus {list(ENV_KEYS)}."
    return env, env
