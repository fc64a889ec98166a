"""A single-learner gymnasium view of any game: one seat learns, fixed policies play the others.

    from agents import RandomAgent
    env = SingleSeatEnv("draw_v0", opponents=RandomAgent, seed=0)
    obs, info = env.reset()
    obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(env.action_masks())[0]))

- Observation: the learner seat's float32 observation vector; ``env.action_masks()`` (bool) and
  ``info["action_mask"]`` (int8) give its legal actions, which is what
  ``sb3_contrib.MaskablePPO`` reads, so it trains on this env unchanged.
- ``step`` applies the learner's action, then lets the opponents act (through their own
  observations and masks only) until the learner must decide again or the episode ends; the
  reward is everything the learner's seat received meanwhile, so episode returns are the seat's
  returns in the game.
- ``seat``: a fixed seat, or ``"rotate"`` (default) to cycle the learner through the seats
  episode by episode, so it learns every position.
- ``opponents``: an agent class (built once per other seat as ``cls(game, seed=...)``), or a list
  with one agent per other seat, each following the `agents.Agent` protocol.
"""
from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces

from .core import H_REWARD, H_TURN, Game
from .registry import make_game
from .rng import mix_seed


class SingleSeatEnv(gymnasium.Env):
    """gymnasium.Env for one learning seat against fixed opponent policies (see module doc)."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, game: str | Game, opponents, seat: int | str = "rotate", seed: int | None = None,
                 render_mode: str | None = None, **config):
        self.game = make_game(game, **config) if isinstance(game, str) else game
        n = self.game.num_players
        if seat != "rotate" and not (isinstance(seat, (int, np.integer)) and 0 <= seat < n):
            raise ValueError(f"{self.game.name}: seat={seat!r} must be 'rotate' or a seat 0..{n - 1}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode={render_mode!r} is not supported; allowed: [None, 'ansi']")
        self.render_mode = render_mode
        self.seat_mode = seat
        if isinstance(opponents, type):
            opponents = [opponents(self.game, seed=k) for k in range(n - 1)]
        opponents = list(opponents)
        if len(opponents) != n - 1:
            raise ValueError(f"{self.game.name}: need {n - 1} opponents (one per other seat), got {len(opponents)}")
        self.opponents = opponents
        self.observation_space = spaces.Box(0.0, self.game.obs_high(), (self.game.obs_size,), np.float32)
        self.action_space = spaces.Discrete(self.game.num_actions)
        self._state = self.game.new_state()
        self._seed_base = seed
        self._episode = 0
        self._mask = np.zeros(self.game.num_actions, dtype=np.int8)
        self.seat = 0 if seat == "rotate" else int(seat)
        self._others: list[int] = []

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._seed_base, self._episode = int(seed), 0
        elif self._seed_base is None:
            self._seed_base = int(np.random.SeedSequence().entropy)
        n = self.game.num_players
        if self.seat_mode == "rotate":
            self.seat = self._episode % n
        episode_seed = mix_seed(self._seed_base, self._episode)
        self._episode += 1
        self.game.reset(self._state, episode_seed)
        if options and "deal" in options:
            self.game.set_deal(self._state, options["deal"])
        self._others = [k for k in range(n) if k != self.seat]
        for i, agent in enumerate(self.opponents):
            agent.reset(mix_seed(episode_seed, i + 1))
        reward = self._play_opponents()
        return self._observation(), {"action_mask": self._mask.copy(), "seat": self.seat, "reward_before": reward}

    def step(self, action):
        self.game.step(self._state, action)
        reward = self._learner_reward() + self._play_opponents()
        terminated = self.game.is_over(self._state)
        info = {"action_mask": self._mask.copy(), "seat": self.seat}
        return self._observation(), reward, terminated, False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now (bool), as MaskablePPO expects."""
        return self._mask.astype(bool)

    def render(self):
        if self.render_mode == "ansi":
            return self.game.render(self._state, self.seat)
        return None

    # ------------------------------------------------------------------ helpers
    def _learner_reward(self) -> float:
        return float(self._state[H_REWARD + self.seat]) / self.game.reward_scale

    def _play_opponents(self) -> float:
        """Opponents act until the learner decides or the game ends; the learner's reward meanwhile."""
        s = self._state
        total = 0.0
        while not self.game.is_over(s) and int(s[H_TURN]) != self.seat:
            seat = int(s[H_TURN])
            agent = self.opponents[self._others.index(seat)]
            obs = self.game.observe(s, seat)
            mask = self.game.legal_mask(s)
            self.game.step(s, agent.act(obs, mask))
            total += self._learner_reward()
        if self.game.is_over(s):
            self._mask[:] = 0
        else:
            self.game.legal_mask(s, self._mask)
        return total

    def _observation(self) -> np.ndarray:
        return self.game.observe(self._state, self.seat)
