"""The reset and option policy every front shares: the AEC env (env.py), the batched vector env
(vector.py) and the single-seat view (wrappers.py).

- A reset always hands back a live decision. A seeded deal that forced moves alone play to the end
  (no decision in it) is dealt again from the finished row's own random stream, so the episode is
  still determined by the seed; the skipped deal's rewards belong to no episode. After `MAX_DEALS`
  such deals in a row the config itself leaves nothing to decide (``hand_size=1``, say): ConfigError
  naming the config.
- A hand-set deal (``options={"deal": ...}``) that is over before any decision is refused with a
  DealError (it cannot be dealt again: it is the user's).
- A reset is atomic: the seed, options and deal are checked and the new episode is dealt on a
  scratch row first; only then are the row, episode counter, agents and rewards replaced, so a
  rejected reset leaves the env exactly as it was.
- Seeds are None or integers 0..2**64-1 (as numpy's); anything else (1.7, True, -1, 2**64) is a
  ConfigError, never coerced. Episode k of a stream seeded with s is dealt from ``mix_seed(s, k)``.
"""
from __future__ import annotations

import math

import numpy as np

from .core import H_DONE, H_RNG, Game
from .errors import ConfigError
from .rng import check_seed, entropy_seed, next_seed

RENDER_MODES = ("ansi", "human", "rgb_array")
MAX_DEALS = 1000  # deals tried for one reset before a config is declared to hold no decision


def no_decision_error(game: Game, tries: int, detail: str = "") -> ConfigError:
    """The error of a reset that found no decision in `tries` deals in a row."""
    return ConfigError(
        f"{game.name}: {tries} deals in a row were played to the end by forced moves{detail}, so this "
        f"config leaves nothing to decide: {game.config}"
    )


def deal_to_decision(game: Game, state: np.ndarray, seed: int) -> int:
    """Deal `state` from `seed`; a deal that forced moves play to the end is dealt again from the
    row's own stream (deterministic), at most MAX_DEALS deals, then `no_decision_error`. Returns
    the engine seed of the deal kept (``game.reset(row, that_seed)`` deals it again: a replay's seed)."""
    game.reset(state, seed)
    tries = 1
    while state[H_DONE]:
        if tries == MAX_DEALS:
            raise no_decision_error(game, tries)
        seed = int(next_seed(state, H_RNG))
        game.reset(state, seed)
        tries += 1
    return seed


def episode_stream(game: Game, seed, seed_base: int | None, episode: int) -> tuple[int, int]:
    """(stream base, episode number) a reset deals from: a seed (checked) starts its stream at
    episode 0; without one the current stream goes on, and an env never seeded takes OS entropy
    (never a global RNG). Episode k of stream s is dealt from ``mix_seed(s, k)``."""
    seed = check_seed(seed, game.name)
    if seed is not None:
        return seed, 0
    if seed_base is None:
        return entropy_seed(), 0
    return seed_base, episode


def check_front_options(game: Game, render_mode, illegal_action, illegal_reward) -> float:
    """ConfigError for a bad render_mode / illegal_action / illegal_reward; the reward as a float."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ConfigError(f"{game.name}: render_mode={render_mode!r} is not supported; allowed: "
                          f"{[None, *RENDER_MODES]}")
    if illegal_action not in ("raise", "penalize"):
        raise ConfigError(
            f"{game.name}: illegal_action={illegal_action!r} is not allowed; allowed values: ['raise', 'penalize']"
        )
    if isinstance(illegal_reward, (bool, np.bool_)) or not isinstance(illegal_reward, (int, float, np.integer, np.floating)) \
            or not math.isfinite(illegal_reward):
        raise ConfigError(f"{game.name}: illegal_reward={illegal_reward!r} must be a finite number")
    return float(illegal_reward)
