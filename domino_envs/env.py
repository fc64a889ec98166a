"""One PettingZoo AEC environment class for every game.

The class knows the engine contract (core.py) and nothing of any game's rules. It gives natively
what PettingZoo's standard wrappers give the classic environments - order enforcement (no step,
observe or last before reset), action bounds, and illegal-action handling (raise by default;
terminate with a penalty when ``illegal_action="penalize"``) - at the cost of an `if` each, since
stacking the three wrappers costs about 10x in steps per second.

Observations are ``{"observation": float32 vector, "action_mask": int8 vector}``; the mask is all
zeros for a seat that is not to act. ``state()`` is the perfect-information view (every seat's
observation, concatenated in seat order) for centralized critics.

Resets follow the policy every front shares (fronts.py): a reset always hands back a live
decision, is atomic, and takes seeds None or 0..2**64-1.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import warnings

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from . import registry
from .core import (
    ERR_RANGE,
    H_DONE,
    H_REWARD,
    H_TRUNC,
    H_TURN,
    ConfigError,
    DealError,
    DominoError,
    Game,
    IllegalActionError,
)
from .fronts import RENDER_MODES, check_front_options, deal_to_decision, episode_stream
from .registry import make_game
from .rng import mix_seed

ENV_KEYS = ("render_mode", "illegal_action", "illegal_reward")
class DominoEnv(AECEnv, EzPickle):
    """PettingZoo AEC env over a game engine (see module doc)."""

    metadata = {"render_modes": list(RENDER_MODES), "name": "domino_v0", "is_parallelizable": False,
                "render_fps": 2}

    def __init__(self, game: Game, render_mode: str | None = None, illegal_action: str = "raise",
                 illegal_reward: float = -1.0):
        EzPickle.__init__(self, game, render_mode, illegal_action, illegal_reward)
        super().__init__()
        if not isinstance(game, Game):
            raise ConfigError(f"DominoEnv needs a Game (domino_envs.make_game(...)); got {game!r}")
        self.illegal_reward = check_front_options(game, render_mode, illegal_action, illegal_reward)
        self.game = game
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self.metadata = {**DominoEnv.metadata, "name": game.name}
        n = game.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = self.possible_agents[:]
        self._seat_of = {a: i for i, a in enumerate(self.possible_agents)}
        high = game.obs_high()
        obs_space = spaces.Dict({
            "observation": spaces.Box(0.0, high, (game.obs_size,), np.float32),
            "action_mask": spaces.Box(0, 1, (game.num_actions,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(game.num_actions) for a in self.possible_agents}
        self.state_space = spaces.Box(0.0, high, (n * game.obs_size,), np.float32)
        self._state = game.new_state()
        self._scratch = game.new_state()  # the next episode is dealt here first (atomic reset)
        self._seed_base: int | None = None
        self._episode = 0
        self._ready = False
        self._rewards_nonzero = False
        # hot-path handles: the engine's kernels and sizes, looked up once
        cls = type(game)
        self._params = game.params
        self._obs_kernel = cls._obs_kernel
        self._mask_kernel = cls._mask_kernel
        self._step_kernel = cls._step_kernel
        self._obs_size = game.obs_size
        self._n_actions = game.num_actions
        self._reward_slice = slice(H_REWARD, H_REWARD + n)

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, options: dict | None = None):
        """New episode (see module doc): always a live decision; atomic; seeds 0..2**64-1."""
        base, episode = episode_stream(self.game, seed, self._seed_base, self._episode)
        deal = None
        if options:
            if not isinstance(options, dict):
                raise ConfigError(f"{self.game.name}: options={options!r} must be a dict such as {{'deal': ...}}")
            unknown = set(options) - {"deal"}
            if unknown:  # PettingZoo's api_test passes arbitrary options: warn, do not fail
                warnings.warn(f"{self.game.name}: ignored unknown reset option(s) {sorted(unknown)}; known: ['deal']", stacklevel=2)
            deal = options.get("deal")
        new = self._scratch
        if deal is None:
            deal_to_decision(self.game, new, mix_seed(base, episode))
        else:
            self.game.reset(new, mix_seed(base, episode))
            self.game.set_deal(new, deal)
            if new[H_DONE]:
                raise DealError(f"{self.game.name}: this deal is played to the end by forced moves before any "
                                f"decision; a reset must leave a decision to act on. Deal: {deal!r}")
        # everything checked: the new episode replaces the old one as a whole
        self._state, self._scratch = new, self._state
        self._seed_base, self._episode = base, episode + 1
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._skip_agent_selection = None
        self._ready = True
        self._rewards_nonzero = False
        self.agent_selection = self.possible_agents[0]
        self._after_engine_step()

    def last(self, observe: bool = True):
        if not self._ready:
            raise DominoError(f"{self.game.name}: call reset() before last()")
        return super().last(observe)

    def _seat(self, agent) -> int:
        seat = self._seat_of.get(agent) if isinstance(agent, str) else None
        if seat is None:
            raise DominoError(f"{self.game.name}: no agent {agent!r}; agents are {self.possible_agents}")
        return seat

    def observe(self, agent: str):
        if not self._ready:
            raise DominoError(f"{self.game.name}: call reset() before observe()")
        seat = self._seat(agent)
        obs = np.empty(self._obs_size, dtype=np.float32)
        self._obs_kernel(self._state, self._params, seat, obs)
        mask = np.zeros(self._n_actions, dtype=np.int8)
        if self._state[H_TURN] == seat:  # H_TURN is -1 once the episode is over
            self._mask_kernel(self._state, self._params, mask)
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
        if type(action) is int and 0 <= action < self._n_actions:
            a = action
        else:  # a numpy integer, a non-integer, or out of range (2**64 must not reach compiled code)
            a = self.game.action_as_int(action)
            if not 0 <= a < self._n_actions:
                self.game._raise_step_error(self._state, a, ERR_RANGE)
        code = self._step_kernel(self._state, a, self._params)
        if code:
            try:
                self.game._raise_step_error(self._state, a, code)
            except IllegalActionError as err:
                if self.illegal_action == "raise" or err.kind != "illegal":
                    raise
                self._penalize(agent)
                return
        self._after_engine_step()

    def _after_engine_step(self):
        s = self._state
        rs = s[self._reward_slice].tolist()
        if self._rewards_nonzero or any(rs):  # rewards are sparse: skip the dict writes when all 0
            scale = self.game.reward_scale
            for a, r in zip(self.possible_agents, rs):
                r = r / scale
                self.rewards[a] = r
                self._cumulative_rewards[a] += r
            self._rewards_nonzero = any(rs)
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
        """The table from the seat to act's view: returned as text ("ansi") or as a picture
        ("rgb_array": uint8 H x W x 3, pictures.py; needs Pillow), or printed ("human")."""
        if self.render_mode is None:
            import gymnasium
            gymnasium.logger.warn(f"render() called without a render_mode; allowed: {list(RENDER_MODES)}")
            return None
        if not self._ready:
            raise DominoError(f"{self.game.name}: call reset() before render()")
        seat = self._seat_of[self.agent_selection]
        if self.render_mode == "rgb_array":
            from .pictures import picture

            return picture(self.game, self._state, seat)
        text = self.game.render(self._state, seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass

    # ------------------------------------------------------------------ helpers
    def legal_actions(self) -> list[int]:
        """Legal action ids of the agent to act (a fresh mask per call: nothing shared between envs)."""
        mask = np.zeros(self._n_actions, dtype=np.int8)
        self._mask_kernel(self._state, self._params, mask)
        return np.flatnonzero(mask).tolist()

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


class _EnvModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``domino_envs.<name>`` for every registered name (``from domino_envs import draw_v0``;
    ``draw_v0.env(**config)``, PettingZoo's import style): a module holding that env's `env` and
    `raw_env`, made from the registry line when first imported, so a game needs no module file
    for it. Asked last (after the package's own files), and only for registered names."""

    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.rpartition(".")
        if package == __package__ and name in registry.GAMES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return None  # the default module object

    def exec_module(self, module):
        name = module.__name__.rpartition(".")[2]
        page = registry.engine_class(name).docs_page
        module.__doc__ = (f"The {registry.title(name)} ({name}) as a PettingZoo AEC environment: env(**config) "
                          f"takes the game's config keys and {list(ENV_KEYS)}. Rules, actions, observation: "
                          + (f"docs/games/{page}." if page else f"{registry.GAMES[name].module}."))
        module.env, module.raw_env = env_factory(name)


if not any(isinstance(f, _EnvModules) for f in sys.meta_path):
    sys.meta_path.append(_EnvModules())
