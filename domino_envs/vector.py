"""Batched self-play front over the same engines: thousands of games stepped in lockstep.

`VectorEnv(game, num_envs, seed, **config)` (or `domino_envs.make_vec(name, num_envs, seed, **config)`) steps one action per
game per call, for whichever seat is to act in that game, in one compiled loop:

    obs, masks, seats = venv.reset()
    obs, masks, seats, rewards, terminated, truncated, info = venv.step(actions)

- ``obs``: float32 ``[num_envs, obs_size]``, the observation of the seat to act in each game;
  ``masks``: int8 ``[num_envs, num_actions]``; ``seats``: int64 ``[num_envs]``.
- ``rewards``: float32 ``[num_envs, num_players]``: every seat's reward from that step (a seat's
  return is the sum of its column, whoever acted).
- A finished game is reset at once inside the same call (its next deal seeded from its own
  random stream, so a vector env is determined by its seed and the actions; a deal that forced
  moves alone play to the end is skipped and dealt again, since it holds no decision to learn
  from; after `fronts.MAX_DEALS` such deals in a row the config holds no decision: ConfigError
  naming it, the rows before the failing one stepped, the rest not); ``terminated`` /
  ``truncated`` flag it; the returned observation is already the new game's.
  ``info["final_states"]`` holds the finished games' last state rows (from which
  ``venv.game.observe(row, seat)`` gives any seat's final observation), ``info["final_index"]``
  their env indices.
- Seeds are None or integers 0..2**64-1 (ConfigError otherwise); actions an integer array of
  shape ``(num_envs,)`` whose values fit int64 (IllegalActionError otherwise).
- A VectorEnv pickles (Ray, multiprocessing): the copy continues exactly as the original would;
  its compiled entry points are looked up again on unpickling.
- All arrays, ``info``'s included, are numpy and reused between calls (copy what you keep);
  ``torch.from_numpy`` wraps them without copying.

Every game's kernels are reached through dispatch.py: the loops are compiled (and cached) once
per game, with that game's kernels inlined.
"""
from __future__ import annotations

import numpy as np
from numba import literally, njit

from .core import H_DONE, H_REWARD, H_RNG, H_TRUNC, H_TURN, MAX_SEATS, OK, ConfigError, Game, IllegalActionError
from .dispatch import game_id, mask_one, observe_one, reset_one, specialize, step_one
from .fronts import MAX_DEALS, no_decision_error
from .registry import resolve_game
from .rng import check_seed, next_seed, seed_from_generator

NO_DECISION = 100  # _vec_step's code for a row that found no decision in MAX_DEALS deals

_INT64_MAX = np.iinfo(np.int64).max


@njit(cache=True, _nrt=False)  # allocates nothing (dispatch.py's policy)
def next_episode_seed(s):
    """Seed of the game that follows a finished one, drawn from its own stream."""
    return next_seed(s, H_RNG)


@njit(cache=True, inline="always")  # inlined before typing, so gid stays the loop's literal
def _reset_to_decision(gid, s, seed, p):
    """Deal row s from seed; a deal played out by forced moves alone (no decision to learn from)
    is dealt again from its own stream, at most MAX_DEALS deals. False if none held a decision
    (the counter only runs on a deal that is over at once, off the step's usual path)."""
    reset_one(gid, s, seed, p)
    tries = 1
    while s[H_DONE] == 1:
        if tries == MAX_DEALS:
            return False
        reset_one(gid, s, next_seed(s, H_RNG), p)
        tries += 1
    return True


@njit(cache=True)
def _vec_reset(gid, states, seeds, p, obs, masks, seats):
    """Returns the index of a row that found no decision, or -1."""
    literally(gid)  # one compiled version per game (dispatch.py)
    g = gid
    for i in range(states.shape[0]):
        if not _reset_to_decision(g, states[i], seeds[i], p):
            return i
        seats[i] = states[i, H_TURN]
        observe_one(g, states[i], p, seats[i], obs[i])
        mask_one(g, states[i], p, masks[i])
    return -1


# _nrt=False: no reference counting in this loop. Every `states[i]` view and every array handed
# to an inlined kernel otherwise costs an NRT incref/decref pair (atomic), ~80 ns of a ~180 ns
# Draw decision at batch 1024. Safe because the loop (and every kernel inlined into it) allocates
# nothing and keeps no view past the call; kernels it calls out of line still count their own.
@njit(cache=True, _nrt=False)
def _vec_step(gid, states, actions, p, obs, masks, seats, rewards, terminated, truncated, scale,
              finals, final_index):
    """Returns (number of finished games, index of the first bad action or -1, its code)."""
    literally(gid)  # one compiled version per game (dispatch.py)
    g = gid
    n_players = rewards.shape[1]
    n_final = 0
    for i in range(states.shape[0]):
        s = states[i]
        code = step_one(g, s, actions[i], p)
        if code != OK:
            return n_final, i, code
        for k in range(MAX_SEATS):  # a fixed trip count unrolls (~1-2 ns faster than n_players)
            if k < n_players:
                r = s[H_REWARD + k]  # mostly 0: skip the division (a long-latency instruction)
                rewards[i, k] = r / scale if r != 0 else 0.0
        done = s[H_DONE] == 1
        terminated[i] = done and s[H_TRUNC] == 0
        truncated[i] = done and s[H_TRUNC] == 1
        if done:
            for q in range(s.shape[0]):  # (a slice assignment would allocate)
                finals[n_final, q] = s[q]
            final_index[n_final] = i
            n_final += 1
            if not _reset_to_decision(g, s, next_seed(s, H_RNG), p):
                return n_final, i, NO_DECISION
        seats[i] = s[H_TURN]
        observe_one(g, s, p, seats[i], obs[i])
        mask_one(g, s, p, masks[i])
    return n_final, -1, 0


class VectorEnv:
    """Lockstep self-play over `num_envs` games of one registered game (see module doc)."""

    MAX_DEALS = MAX_DEALS

    def __init__(self, game: str | Game, num_envs: int, seed: int | None = None, **config):
        game = resolve_game(game, config, "VectorEnv")
        if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ConfigError(f"{game.name}: num_envs={num_envs!r} must be a positive integer")
        self.game = game
        self.num_envs = int(num_envs)
        self.num_players = game.num_players
        self._gid = game_id(game)
        self._rng = np.random.default_rng(check_seed(seed, game.name))
        n = self.num_envs
        self.states = np.zeros((n, game.state_size), dtype=np.int64)
        self.obs = np.zeros((n, game.obs_size), dtype=np.float32)
        self.masks = np.zeros((n, game.num_actions), dtype=np.int8)
        self.seats = np.zeros(n, dtype=np.int64)
        self.rewards = np.zeros((n, game.num_players), dtype=np.float32)
        self.terminated = np.zeros(n, dtype=np.bool_)
        self.truncated = np.zeros(n, dtype=np.bool_)
        self._finals = np.zeros((n, game.state_size), dtype=np.int64)
        self._final_index = np.zeros(n, dtype=np.int64)
        self._bind_compiled()

    def _bind_compiled(self) -> None:
        """This game's machine code, called directly (dispatch.specialize): the arrays passed to
        it are always these, or of these exact types."""
        game = self.game
        self._reset_fn = specialize(_vec_reset, self._gid, self.states, self.seats, game.params,
                                    self.obs, self.masks, self.seats)
        self._step_fn = specialize(_vec_step, self._gid, self.states, self.seats, game.params,
                                   self.obs, self.masks, self.seats, self.rewards, self.terminated,
                                   self.truncated, 1.0, self._finals, self._final_index)

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_reset_fn"], state["_step_fn"]  # compiled handles: rebuilt on unpickling
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._bind_compiled()

    @property
    def observation_size(self) -> int:
        return self.game.obs_size

    @property
    def num_actions(self) -> int:
        return self.game.num_actions

    def reset(self, seed: int | None = None):
        seed = check_seed(seed, self.game.name)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        seeds = np.array([seed_from_generator(self._rng) for _ in range(self.num_envs)], dtype=np.int64)
        bad = self._reset_fn(self._gid, self.states, seeds, self.game.params, self.obs, self.masks, self.seats)
        if bad >= 0:
            raise no_decision_error(self.game, MAX_DEALS, f" (env {bad})")
        return self.obs, self.masks, self.seats

    def step(self, actions):
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or actions.dtype.kind not in "iu":
            raise IllegalActionError(
                f"{self.game.name}: actions must be an integer array of shape ({self.num_envs},), "
                f"got {actions.dtype} {actions.shape}", actions, kind="type")
        if actions.dtype == np.uint64 and actions.size and actions.max() > _INT64_MAX:
            # would wrap to a negative int64 and be reported as another value
            bad = int(np.argmax(actions > _INT64_MAX))
            raise IllegalActionError(
                f"env {bad}: {self.game.name}: action {int(actions[bad])} is out of range; actions are "
                f"0..{self.game.num_actions - 1}", int(actions[bad]), kind="range")
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        n_final, bad, code = self._step_fn(
            self._gid, self.states, actions, self.game.params, self.obs, self.masks, self.seats,
            self.rewards, self.terminated, self.truncated, float(self.game.reward_scale),
            self._finals, self._final_index,
        )
        if bad >= 0:
            if code == NO_DECISION:
                raise no_decision_error(self.game, MAX_DEALS, f" (env {bad}, envs 0..{bad - 1} of this batch "
                                                              f"were stepped)")
            # games before `bad` have stepped; say exactly which action failed and why
            try:
                self.game._raise_step_error(self.states[bad], int(actions[bad]), code)
            except IllegalActionError as err:
                raise IllegalActionError(
                    f"env {bad}: {err} (envs 0..{bad - 1} of this batch were stepped)",
                    err.action, err.legal, err.kind) from None
        info = {"final_states": self._finals[:n_final], "final_index": self._final_index[:n_final]}
        return self.obs, self.masks, self.seats, self.rewards, self.terminated, self.truncated, info


def make_vec(name: str, num_envs: int, seed: int | None = None, **config) -> VectorEnv:
    """Vector env of a registered game (config keys as for `domino_envs.make`)."""
    return VectorEnv(name, num_envs, seed, **config)


__all__ = ["VectorEnv", "make_vec", "next_episode_seed"]
