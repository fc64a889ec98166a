"""Tile sets, bit tables and the compiled bit helpers every engine uses.

Line-of-play sets (double-six, double-nine) number tile (a, b), a <= b, as ``b*(b+1)/2 + a``.
That order puts the 28 double-six tiles first, so one table serves both sets: a double-six hand
is a bitmask over ids 0..27, a double-nine hand over 0..54. Hands, played sets and masks are
int64 bitmasks (55 tiles fit; bit 63 is never used, so shifts and comparisons stay signed-safe).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

MAX_PIP = 9
MAX_TILES = (MAX_PIP + 1) * (MAX_PIP + 2) // 2  # 55

TILE_A = np.zeros(MAX_TILES, dtype=np.int64)  # low half
TILE_B = np.zeros(MAX_TILES, dtype=np.int64)  # high half
for _b in range(MAX_PIP + 1):
    for _a in range(_b + 1):
        _t = _b * (_b + 1) // 2 + _a
        TILE_A[_t] = _a
        TILE_B[_t] = _b
TILE_PIPS = TILE_A + TILE_B
TILE_IS_DOUBLE = (TILE_A == TILE_B).astype(np.int64)

# PIP_MASK[p]: bitmask of the tiles that show pip p on either half.
PIP_MASK = np.zeros(MAX_PIP + 1, dtype=np.int64)
for _t in range(MAX_TILES):
    PIP_MASK[TILE_A[_t]] |= 1 << _t
    PIP_MASK[TILE_B[_t]] |= 1 << _t
DOUBLES_MASK = int(sum(1 << t for t in range(MAX_TILES) if TILE_A[t] == TILE_B[t]))
# PIPS_BIT_MASK[k]: the tiles whose pip total has bit k set (totals are at most 18 < 2**5), so a
# hand's pip total is five popcounts (mask_pips) rather than a loop over its tiles.
PIPS_BIT_MASK = np.array([sum(1 << t for t in range(MAX_TILES) if (TILE_PIPS[t] >> k) & 1)
                          for k in range(5)], dtype=np.int64)


def num_tiles(max_pip: int) -> int:
    """How many tiles a double-``max_pip`` set has."""
    return (max_pip + 1) * (max_pip + 2) // 2


def tile_id(a: int, b: int) -> int:
    """Id of tile (a, b) in either order."""
    lo, hi = min(a, b), max(a, b)
    if lo < 0 or hi > MAX_PIP:
        raise ValueError(f"tile ({a}, {b}) has a half outside 0..{MAX_PIP}")
    return hi * (hi + 1) // 2 + lo


def tile_name(t: int) -> str:
    """'a-b' for tile id t."""
    return f"{TILE_A[t]}-{TILE_B[t]}"


def mask_to_tiles(mask: int) -> list[int]:
    """Tile ids of the set bits of mask, ascending."""
    mask = int(mask)
    return [t for t in range(64) if (mask >> t) & 1]


def tiles_to_mask(tiles) -> int:
    """Bitmask of an iterable of tile ids."""
    m = 0
    for t in tiles:
        m |= 1 << int(t)
    return m


# ---------------------------------------------------------------- compiled bit helpers
_DEBRUIJN = 0x03F79D71B4CB0A89
_DEBRUIJN_TABLE = np.zeros(64, dtype=np.int64)
for _i in range(64):
    _DEBRUIJN_TABLE[((((1 << _i) * _DEBRUIJN) & 0xFFFFFFFFFFFFFFFF) >> 58) & 63] = _i


# No multiplications that can overflow here: numba emits int64 `mul nsw`, so a wrapping product
# is undefined behaviour and LLVM may fold comparisons of the result wrongly (it did: a De Bruijn
# `lowest_bit` inlined into `f(...) == -1` in the Pete engine compared true for a result of 108).
@intrinsic
def _ctpop64(typingctx, x):
    """LLVM's ctpop on an int64 (one popcnt instruction where the CPU has it)."""
    sig = types.int64(types.int64)

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, args)

    return sig, codegen


@njit(cache=True, inline="always")
def popcount(x):
    """Number of set bits of a non-negative int64 (bit 63 clear)."""
    return _ctpop64(np.int64(x))


@njit(cache=True, inline="always")
def lowest_bit(x):
    """Index of the lowest set bit of x (x != 0): LLVM's cttz, no overflowing arithmetic."""
    return np.int64(trailing_zeros(x))


@njit(cache=True, inline="always")
def mask_pips(mask):
    """Sum of the pip values of the tiles in mask: each bit plane of the totals, counted."""
    total = 0
    for k in range(5):
        total += popcount(mask & PIPS_BIT_MASK[k]) << k
    return total


@njit(cache=True)
def nth_bit(mask, k):
    """Index of the k-th (0-based) set bit of mask."""
    for _ in range(k):
        mask &= mask - 1
    return lowest_bit(mask)


@njit(cache=True, inline="always")
def expand_bits(m, out, o, nbits):
    """out[o + i] = bit i of m for i < nbits (the observation kernels' workhorse; o >= 0). One
    plain loop with an unsigned index (no negative-index wraparound), which LLVM vectorizes:
    about twice as fast as expanding a byte at a time through a table."""
    for i in range(nbits):
        out[np.uint64(o + i)] = np.float32((m >> i) & 1)


@njit(cache=True, inline="always")
def pips_to_tiles(pips, n_pips):
    """Bitmask of the tiles showing any pip q < n_pips whose bit is set in `pips`."""
    m = 0
    for q in range(n_pips):
        if (pips >> q) & 1:
            m |= PIP_MASK[q]
    return m


# ---------------------------------------------------------------- bit streams (observations)
# An observation that is mostly 0/1 flags is written as one stream of bits: pieces are appended
# with `stream_bits`, every 64 bits become 64 floats in one vectorized pass, `stream_end` writes
# the rest. Counts and other values go in afterwards, over zero bits left for them. The state is
# a tuple (pending bits, how many are pending, offset in `out` of the first pending bit).
@njit(cache=True, _nrt=False)
def stream_bits(st, bits, nb, out):
    """Append the low `nb` bits of `bits` (0 <= nb <= 63; no higher bit set) to the stream."""
    acc, pending, o = st
    acc |= bits << pending
    pending += nb
    if pending >= 64:
        for i in range(64):
            out[np.uint64(o + i)] = np.float32((acc >> i) & 1)
        o += 64
        pending -= 64
        acc = bits >> (nb - pending)
    return acc, pending, o


@njit(cache=True, inline="always")
def stream_end(st, out):
    """Write the bits still pending; returns the offset past the stream."""
    acc, pending, o = st
    for i in range(pending):
        out[np.uint64(o + i)] = np.float32((acc >> i) & 1)
    return o + pending
