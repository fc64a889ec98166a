"""Compiled dispatch from a game id to that game's kernels, for compiled loops over many games.

numba cannot cache a function that receives other compiled functions as arguments, so batched
loops (vector.py, search rollouts) call a game's kernels through these branches on an integer id.
A new game adds one `GAME_IDS` entry and one branch per function here (owner: the vector env).
"""
from __future__ import annotations

from numba import njit

from .games import draw, magic7, pete, racehorse, sum7

# engine class name -> dispatch id
GAME_IDS = {"DrawGame": 0, "Sum7Game": 1, "PeteGame": 2, "RacehorseGame": 3, "Magic7Game": 4}


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
    elif gid == 1:
        sum7._reset_kernel(s, seed, p)
    elif gid == 2:
        pete._reset_kernel(s, seed, p)
    elif gid == 3:
        racehorse._reset_kernel(s, seed, p)
    else:
        magic7._reset_kernel(s, seed, p)


@njit(cache=True, inline="always")
def step_one(gid, s, a, p):
    if gid == 0:
        return draw._step_kernel(s, a, p)
    elif gid == 1:
        return sum7._step_kernel(s, a, p)
    elif gid == 2:
        return pete._step_kernel(s, a, p)
    elif gid == 3:
        return racehorse._step_kernel(s, a, p)
    return magic7._step_kernel(s, a, p)


@njit(cache=True, inline="always")
def observe_one(gid, s, p, seat, obs):
    if gid == 0:
        draw._obs_kernel(s, p, seat, obs)
    elif gid == 1:
        sum7._obs_kernel(s, p, seat, obs)
    elif gid == 2:
        pete._obs_kernel(s, p, seat, obs)
    elif gid == 3:
        racehorse._obs_kernel(s, p, seat, obs)
    else:
        magic7._obs_kernel(s, p, seat, obs)


@njit(cache=True, inline="always")
def mask_one(gid, s, p, mask):
    if gid == 0:
        draw._mask_kernel(s, p, mask)
    elif gid == 1:
        sum7._mask_kernel(s, p, mask)
    elif gid == 2:
        pete._mask_kernel(s, p, mask)
    elif gid == 3:
        racehorse._mask_kernel(s, p, mask)
    else:
        magic7._mask_kernel(s, p, mask)


@njit(cache=True)
def sample_one(gid, s, p, seat, seed):
    if gid == 0:
        return draw._sample_kernel(s, p, seat, seed)
    elif gid == 1:
        return sum7._sample_kernel(s, p, seat, seed)
    elif gid == 2:
        return pete._sample_kernel(s, p, seat, seed)
    elif gid == 3:
        return racehorse._sample_kernel(s, p, seat, seed)
    return magic7._sample_kernel(s, p, seat, seed)
