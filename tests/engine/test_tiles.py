"""The compiled bit helpers in domino_envs/tiles.py against plain-Python references."""
from __future__ import annotations

import numpy as np
from numba import njit

from domino_envs.tiles import MAX_TILES, TILE_PIPS, lowest_bit, mask_pips, popcount, stream_bits, stream_end


@njit(cache=True)
def _stream(pieces, widths, out):
    st = (0, 0, 0)
    for k in range(pieces.shape[0]):
        st = stream_bits(st, pieces[k], widths[k], out)
    return stream_end(st, out)


def test_popcount_and_lowest_bit():
    rng = np.random.default_rng(3)
    for x in [1, 2, 3, (1 << 62), (1 << 63) - 1] + [int(v) for v in rng.integers(1, 1 << 62, 500)]:
        assert popcount(x) == bin(x).count("1")
        assert lowest_bit(x) == (x & -x).bit_length() - 1
    assert popcount(0) == 0


def test_mask_pips_sums_the_tiles_pips():
    rng = np.random.default_rng(5)
    masks = [0, 1, (1 << 28) - 1, (1 << MAX_TILES) - 1] + [int(v) for v in rng.integers(0, 1 << MAX_TILES, 500)]
    for m in masks:
        assert mask_pips(m) == sum(int(TILE_PIPS[t]) for t in range(MAX_TILES) if (m >> t) & 1)
    assert mask_pips((1 << MAX_TILES) - 1) == 495  # a double-nine set holds 495 pips


def test_stream_bits_writes_every_piece_in_order():
    """Random pieces of 0..63 bits: the floats are exactly the pieces' bits, concatenated; nothing is
    written past the stream's end."""
    rng = np.random.default_rng(4)
    for _ in range(500):
        k = int(rng.integers(1, 12))
        widths = rng.integers(0, 64, k).astype(np.int64)
        pieces = np.array([int(rng.integers(0, 1 << 62)) & ((1 << int(w)) - 1) for w in widths], dtype=np.int64)
        total = int(widths.sum())
        out = np.full(total + 70, -1.0, dtype=np.float32)
        assert _stream(pieces, widths, out) == total
        want = [float((int(p) >> i) & 1) for p, w in zip(pieces, widths) for i in range(int(w))]
        assert out[:total].tolist() == want
        assert np.all(out[total:] == -1.0)
