"""What the engines share (domino_envs/core.py, slots.py), checked on its own, apart from any game:

- the step template: the gate (over, range), the game's legality check, a legal step's start
  (rewards cleared, the decision counted), the game's play and advance, in that order, the row
  untouched by a refused action; and the legality sweep;
- the draw until playable: draws stop at the first playable tile (the just-drew flag set) or at
  the stock's end, the lacks replaced after a kept tile and extended otherwise;
- the observation layout's affine form and columns, and the seat bounds of the slot tables;
- every registered engine's Facts are its class attributes.
"""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from domino_envs.core import (
    ERR_ILLEGAL,
    ERR_OVER,
    ERR_RANGE,
    H_DONE,
    H_REWARD,
    H_STEPS,
    HEADER_SIZE,
    OK,
    draw_until_playable,
    legal_set,
    step_kernel,
)
from domino_envs.registry import engine_classes
from domino_envs.slots import ObsLayout, high, last_seat, seats, tile_count, tile_mask

PLAYED = HEADER_SIZE  # the toy row: the last action played, and how often advance ran
ADVANCED = HEADER_SIZE + 1


@njit(cache=False, _nrt=False)
def _even_only(s, p, a):
    return a % 2 == 0


@njit(cache=False, _nrt=False)
def _play(s, p, a):
    s[PLAYED] = a
    s[H_REWARD] += 100  # after the step's start has cleared the rewards


@njit(cache=False, _nrt=False)
def _advance(s, p):
    s[ADVANCED] += 1


@njit(cache=False)
def _step(s, a, p):
    return step_kernel(s, a, p, 6, _even_only, _play, _advance)


@njit(cache=False)
def _legal_set(s, p, out):
    legal_set(s, p, out, 6, _even_only)


def _row():
    s = np.zeros(HEADER_SIZE + 2, dtype=np.int64)
    s[H_REWARD:H_REWARD + 2] = (7, -7)  # the previous step's rewards
    s[H_STEPS] = 3
    return s


def test_the_step_template_refuses_without_touching_the_row_then_plays_and_advances():
    p = np.zeros(1, dtype=np.int64)
    for a, code in ((6, ERR_RANGE), (-1, ERR_RANGE), (3, ERR_ILLEGAL)):
        s = _row()
        assert _step(s, a, p) == code
        assert np.array_equal(s, _row()), a
    s = _row()
    s[H_DONE] = 1
    assert _step(s, 2, p) == ERR_OVER and s[PLAYED] == 0 and s[H_STEPS] == 3
    s = _row()
    assert _step(s, 4, p) == OK
    assert s[PLAYED] == 4 and s[ADVANCED] == 1 and s[H_STEPS] == 4
    assert s[H_REWARD] == 100 and s[H_REWARD + 1] == 0  # cleared by the step's start, before the play


def test_the_legality_sweep_asks_the_games_check_and_is_empty_once_over():
    p = np.zeros(1, dtype=np.int64)
    out = np.full(6, 7, dtype=np.int8)
    s = _row()
    _legal_set(s, p, out)
    assert out.tolist() == [1, 0, 1, 0, 1, 0]
    s[H_DONE] = 1
    _legal_set(s, p, out)
    assert not out.any()


# the drawing row: position, hands (2 seats), drawn (2), lacks (2), just drew, then the stock
POS, HANDS, DRAWN, LACKS, JUST = 0, 1, 3, 5, 7
SLOTS = (POS, HANDS, DRAWN, LACKS, JUST)
STOCK = 8


def _draw(stock, end, fits, lacks=0b1, seat=1):
    s = np.zeros(STOCK + len(stock), dtype=np.int64)
    s[STOCK:] = stock
    s[LACKS + seat] = lacks
    got, kept = draw_until_playable(s, s, STOCK, end, SLOTS, seat, fits, 0b110)
    return s, got, kept


def test_the_draw_stops_at_the_first_playable_tile_and_replaces_the_lacks_after_a_kept_tile():
    s, got, kept = _draw([3, 9, 5, 4], end=4, fits=1 << 5)
    assert (got, kept) == (True, 2) and s[POS] == 3 and s[JUST] == 1
    assert s[HANDS + 1] == (1 << 3) | (1 << 9) | (1 << 5) and s[DRAWN + 1] == 3 and s[HANDS] == 0
    assert s[LACKS + 1] == 0b110  # kept tiles are unseen: only what it showed now holds


def test_a_playable_first_tile_keeps_the_lacks_and_adds_what_the_seat_showed():
    s, got, kept = _draw([5, 9], end=2, fits=1 << 5)
    assert (got, kept) == (True, 0) and s[POS] == 1 and s[LACKS + 1] == 0b111


def test_the_draw_stops_at_the_stocks_end_and_an_empty_stock_draws_nothing():
    s, got, kept = _draw([3, 9, 5], end=2, fits=1 << 5)  # a reserve of one tile stays
    assert (got, kept) == (False, 2) and s[POS] == 2 and s[JUST] == 0 and s[DRAWN + 1] == 2
    s, got, kept = _draw([3], end=0, fits=1 << 3)
    assert (got, kept) == (False, 0) and s[POS] == 0 and s[HANDS + 1] == 0 and s[LACKS + 1] == 0b111


def test_the_affine_form_is_refused_where_there_is_none_and_columns_name_pieces():
    lin = ObsLayout(lambda n: [("a", (n,)), ("b", (n, 3)), ("c", (1,))], range(2, 5))
    assert lin.affine() is lin.coef and lin.columns("c", "a") == (2, 0)
    with pytest.raises(ValueError, match="not affine"):
        ObsLayout(lambda n: [("a", (n, n)), ("b", (1,))], range(2, 5)).affine()


def test_the_seat_and_tile_bounds():
    class G:
        num_players, n_tiles = 3, 28

        def obs_high(self):
            return 250.0

    g = G()
    assert (seats(g), last_seat(g), high(g), tile_count(g), tile_mask(g)) == (3, 2, 250, 28, (1 << 28) - 1)


@pytest.mark.parametrize("cls", engine_classes(), ids=lambda c: c.__name__)
def test_every_engines_facts_are_its_class_attributes(cls):
    """The class line's Facts set what the base class leaves unset (no docs page, no slot table)."""
    assert cls.docs_page and cls.spec_prefix and cls.Config.__module__ == cls.__module__
    assert cls.slots.closed and cls.state_size == cls.slots.size
