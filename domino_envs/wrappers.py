"""A single-learner gymnasium view of any game: one seat learns, fixed policies play the others.

    from domino_agents import RandomAgent
    env = SingleSeatEnv("draw_v0", opponents=RandomAgent, seed=0)
    obs, info = env.reset()
    obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(env.action_masks())[0]))

- Observation: the learner seat's float32 observation vector; ``env.action_masks()`` (bool) and
  ``info["action_mask"]`` (int8) give its legal actions, which is what
  ``sb3_contrib.MaskablePPO`` reads, so it trains on this env unchanged.
- ``reset`` always hands back a live decision of the learner. The opponents act first when they
  are to move; a deal that ends before the learner has a decision (forced moves and the opponents'
  play finish it) is skipped and dealt again from the finished row's own random stream, so the
  episode is still determined by the seed. A skipped deal's rewards belong to no episode. After
  `fronts.MAX_DEALS` such deals in a row the config leaves the learner nothing to decide: ConfigError.
  A hand-set deal (``options={"deal": ...}``) that leaves the learner no decision is a DealError.
  ``info["deal_seed"]`` is the engine seed of the deal played (``game.reset(row, deal_seed)``
  replays it; then a hand-set deal, if given).
- ``step`` applies the learner's action, then lets the opponents act (through their own
  observations and masks only) until the learner must decide again or the episode ends; the
  reward is everything the learner's seat received meanwhile. Whatever it received before its
  first decision (the reset's forced moves and the opponents' first turns) is added to its first
  step's reward (reset returns no reward), so an episode's summed rewards are exactly the seat's
  return in the game (tests check it on every env and seat).
- ``terminated`` when the game ends by the rules, ``truncated`` when a safety cap (``max_hands``)
  cut it.
- ``illegal_action``: ``"raise"`` (default: IllegalActionError) or ``"penalize"``: an illegal
  (in-range) action ends the episode with reward ``illegal_reward`` (plus any reward still owed
  from before the first decision), ``info["illegal_move"] = True``, and applies nothing; what
  gymnasium's and SB3's ``check_env`` need, since they step unmasked random actions. Out-of-range
  and non-integer actions always raise.
- ``seat``: a fixed seat, or ``"rotate"`` (default) to cycle the learner through the seats
  episode by episode, so it learns every position.
- ``opponents``: an agent class (built once per other seat as ``cls(game, seed=...)``), or a list
  with one agent per other seat, each following the `agents.Agent` protocol; they are reseeded
  every deal from the episode's seed.
- Seeds, resets: as the AEC env (env.py): seeds are None or integers 0..2**64-1, and a reset is
  atomic (the row, seat, episode counter and pending reward change only once the new episode is
  dealt; the opponents are reset on every deal tried, so after a rejected reset start a new one).
- ``render_mode``: ``"ansi"`` returns the table from the learner's view, ``"rgb_array"`` draws it
  (pictures.py), ``"human"`` prints it.
"""
from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces

from .core import (
    ERR_RANGE,
    H_DONE,
    H_REWARD,
    H_RNG,
    H_TRUNC,
    H_TURN,
    MAX_SEATS,
    ConfigError,
    DealError,
    Game,
    IllegalActionError,
)
from .fronts import MAX_DEALS, RENDER_MODES, check_front_options, episode_stream, no_decision_error
from .registry import resolve_game
from .rng import check_seed, mix_seed, next_seed


class SingleSeatEnv(gymnasium.Env):
    """gymnasium.Env for one learning seat against fixed opponent policies (see module doc)."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 2}
    MAX_DEALS = MAX_DEALS

    def __init__(self, game: str | Game, opponents, seat: int | str = "rotate", seed: int | None = None,
                 render_mode: str | None = None, illegal_action: str = "raise", illegal_reward: float = -1.0,
                 **config):
        game = resolve_game(game, config, "SingleSeatEnv")
        self.game = game
        n = game.num_players
        if seat != "rotate" and (isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer))
                                 or not 0 <= seat < n):
            raise ConfigError(f"{game.name}: seat={seat!r} must be 'rotate' or a seat 0..{n - 1}")
        self.illegal_reward = check_front_options(game, render_mode, illegal_action, illegal_reward)
        self.illegal_action = illegal_action
        self._seed_base = check_seed(seed, game.name)
        self.render_mode = render_mode
        self.seat_mode = seat
        if isinstance(opponents, type):
            opponents = [opponents(game, seed=k) for k in range(n - 1)]
        opponents = list(opponents)
        if len(opponents) != n - 1:
            raise ConfigError(f"{game.name}: need {n - 1} opponents (one per other seat), got {len(opponents)}")
        self.opponents = opponents
        self.observation_space = spaces.Box(0.0, game.obs_high(), (game.obs_size,), np.float32)
        self.action_space = spaces.Discrete(game.num_actions)
        self._state = game.new_state()
        self._scratch = game.new_state()  # the next episode is dealt here first (atomic reset)
        self._episode = 0
        self._mask = np.zeros(game.num_actions, dtype=np.int8)
        self.seat = 0 if seat == "rotate" else int(seat)
        self._others: list[int] = []
        self._owed = 0.0  # reward received before the first decision, paid with the first step
        self._over = True  # no episode yet (or ended by a penalized illegal action)

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        game = self.game
        base, episode = episode_stream(game, seed, self._seed_base, self._episode)
        if options is not None and not isinstance(options, dict):
            raise ConfigError(f"{game.name}: options={options!r} must be a dict such as {{'deal': ...}}")
        deal = (options or {}).get("deal")
        n = game.num_players
        seat = episode % n if self.seat_mode == "rotate" else self.seat
        others = [k for k in range(n) if k != seat]
        new = self._scratch
        deal_seed = mix_seed(base, episode)
        game.reset(new, deal_seed)
        if deal is not None:
            new[H_REWARD:H_REWARD + MAX_SEATS] = 0  # the seeded deal's rewards are not this episode's
            game.set_deal(new, deal)
        tries = 1
        while True:
            if not new[H_DONE]:
                for i, agent in enumerate(self.opponents):
                    agent.reset(mix_seed(deal_seed, i + 1))
                owed = self._seat_reward(new, seat) + self._play_opponents(new, seat, others)
                if not new[H_DONE]:
                    break
            if deal is not None:
                raise DealError(f"{game.name}: this deal ends before seat {seat} (the learner) has a decision; "
                                f"a reset must leave it one. Deal: {deal!r}")
            if tries == MAX_DEALS:
                raise no_decision_error(game, tries, f" before seat {seat} (the learner) had a decision")
            deal_seed = int(next_seed(new, H_RNG))
            game.reset(new, deal_seed)
            tries += 1
        # everything checked: the new episode replaces the old one as a whole
        super().reset(seed=seed)
        self._state, self._scratch = new, self._state
        self._seed_base, self._episode = base, episode + 1
        self.seat, self._others, self._owed, self._over = seat, others, owed, False
        game.legal_mask(new, self._mask)
        return self._observation(), {"action_mask": self._mask.copy(), "seat": seat, "deal_seed": deal_seed}

    def step(self, action):
        game = self.game
        if self._over:
            raise IllegalActionError(f"{game.name}: the episode is over; reset() before stepping again",
                                     action, kind="over")
        a = game.action_as_int(action)
        if not 0 <= a < game.num_actions:  # before the compiled step: 2**64 must not reach it
            game._raise_step_error(self._state, a, ERR_RANGE)
        if self.illegal_action == "penalize" and not self._mask[a]:
            reward, self._owed, self._over = self._owed + self.illegal_reward, 0.0, True
            self._mask[:] = 0
            info = {"action_mask": self._mask.copy(), "seat": self.seat, "illegal_move": True}
            return self._observation(), reward, True, False, info
        s = self._state
        game.step(s, a)
        reward = self._owed + self._seat_reward(s, self.seat) + self._play_opponents(s, self.seat, self._others)
        self._owed = 0.0
        done = bool(s[H_DONE])
        if done:
            self._mask[:] = 0
            self._over = True
        else:
            game.legal_mask(s, self._mask)
        info = {"action_mask": self._mask.copy(), "seat": self.seat}
        truncated = done and bool(s[H_TRUNC])
        return self._observation(), reward, done and not truncated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now (bool), as MaskablePPO expects."""
        return self._mask.astype(bool)

    def render(self):
        """The table from the learner's view: returned as text ("ansi") or a picture ("rgb_array",
        uint8 H x W x 3; needs Pillow), or printed ("human")."""
        if self.render_mode is None:
            return None
        if self.render_mode == "rgb_array":
            from .pictures import picture

            return picture(self.game, self._state, self.seat)
        text = self.game.render(self._state, self.seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # ------------------------------------------------------------------ helpers
    def _seat_reward(self, s: np.ndarray, seat: int) -> float:
        return float(s[H_REWARD + seat]) / self.game.reward_scale

    def _play_opponents(self, s: np.ndarray, seat: int, others: list[int]) -> float:
        """Opponents act on row s until `seat` decides or the game ends; that seat's reward meanwhile."""
        game = self.game
        total = 0.0
        while not s[H_DONE] and int(s[H_TURN]) != seat:
            turn = int(s[H_TURN])
            agent = self.opponents[others.index(turn)]
            game.step(s, agent.act(game.observe(s, turn), game.legal_mask(s)))
            total += self._seat_reward(s, seat)
        return total

    def _observation(self) -> np.ndarray:
        return self.game.observe(self._state, self.seat)
