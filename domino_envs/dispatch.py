"""Compiled dispatch from a game id to that game's kernels, for compiled loops over many games.

numba cannot cache a function that receives other compiled functions as arguments, so batched
loops (vector.py, search rollouts) call a game's kernels through these branches on an integer id.
A new game adds one `GAME_IDS` entry and one branch per function here.
"""
from __future__ import annotations

from numba import njit

from .games import draw

# engine class name -> dispatch id
GAME_IDS = {"DrawGame": 0}


def game_id(game) -> int:
    """Dispatch id of an engine instance (ValueError naming the known engines if none)."""
    cls = type(game).__name__
    if cls not in GAME_IDS:
        raise ValueError(f"{game.name}: no compiled dispatch for {cls}; known: {sorted(GAME_IDS)}")
    return GAME_IDS[cls]


@njit(cache=True, inline="always")
def reset_one(gid, s, seed, p):
    if gid == 0:
        draw._reset_kernel(s, seed, p)


@njit(cache=True, inline="always")
def step_one(gid, s, a, p):
    if gid == 0:
        return draw._step_kernel(s, a, p)
    return -1


@njit(cache=True, inline="always")
def observe_one(gid, s, p, seat, obs):
    if gid == 0:
        draw._obs_kernel(s, p, seat, obs)


@njit(cache=True, inline="always")
def mask_one(gid, s, p, mask):
    if gid == 0:
        draw._mask_kernel(s, p, mask)


@njit(cache=True)
def sample_one(gid, s, p, seat, seed):
    if gid == 0:
        return draw._sample_kernel(s, p, seat, seed)
    return s.copy()
