"""A counter-based generator (splitmix64) that lives inside a state row.

Engines keep their random stream in one int64 slot of the state, so a game is fully determined by
its seed and the actions taken, a state copy carries its own future, and no global RNG is touched.
All arithmetic stays in uint64 (numba would otherwise promote mixed signs to float64).
"""
from __future__ import annotations

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def rng_next(s, slot):
    """Advance the stream stored at s[slot]; return 64 random bits (uint64)."""
    x = np.uint64(s[slot]) + _GOLDEN
    s[slot] = np.int64(x)
    z = (x ^ (x >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def rng_below(s, slot, n):
    """Uniform integer in [0, n) (1 <= n < 2**32) from the stream at s[slot] (multiply-shift,
    no division: bias below 2**-32 for the small n used here)."""
    return np.int64(((rng_next(s, slot) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@njit(cache=True, inline="always")
def rng_shuffle(s, slot, arr, n, off=0):
    """Fisher-Yates shuffle of arr[off:off + n] in place (an offset rather than a slice: a slice
    view is a reference-counted object, which a deal in the hot path should not build; `arr` may
    be the row `s` itself)."""
    for i in range(n - 1, 0, -1):
        j = off + rng_below(s, slot, i + 1)
        tmp = arr[off + i]
        arr[off + i] = arr[j]
        arr[j] = tmp


def seed_from_generator(rng: np.random.Generator) -> int:
    """An engine seed drawn from a numpy Generator (the only way seeds enter an engine)."""
    return int(rng.integers(0, 2**63 - 1, dtype=np.int64))


def mix_seed(base: int, counter: int) -> int:
    """Engine seed for episode `counter` of a stream seeded with `base` (splitmix64, pure Python:
    cheaper than building a numpy Generator per reset, and just as deterministic)."""
    mask = (1 << 64) - 1
    x = (int(base) * 0x9E3779B97F4A7C15 + (int(counter) + 1) * 0xD1B54A32D192ED03) & mask
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & mask
    return (x ^ (x >> 31)) >> 1


@njit(cache=True, inline="always")
def next_seed(s, slot):
    """A fresh engine seed (0..2**63-1) drawn from the stream at s[slot]: how a front deals again
    after a finished game, so the retry is determined by the row itself."""
    return np.int64(rng_next(s, slot) >> np.uint64(1))


SEED_MAX = 2**64 - 1  # seeds are the integers 0..SEED_MAX (a uint64), as numpy's own seeds


def check_seed(value, who: str):
    """`value` if it is None or an integer seed in 0..SEED_MAX, else the front's ConfigError naming
    it. Nothing is coerced: 1.7, True or 2**64 would otherwise play another seed silently."""
    from .errors import ConfigError

    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not 0 <= value <= SEED_MAX:
        raise ConfigError(f"{who}: seed={value!r} is not allowed; a seed is None or an integer in 0..2**64-1")
    return int(value)


def entropy_seed() -> int:
    """An unseeded front's seed: 64 bits of OS entropy (never a global RNG)."""
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
