"""Scripted tests of the shared line of play (domino_envs/layout.py): arms, the spinner, the count.

Every case builds a layout in a bare int64 array and places tiles by hand, asserting the open arms,
their ends, which placements are allowed and the count (rules-spec conventions: a double crosswise
at an end counts both halves, a lone first tile counts all its pips, a spinner counts 2d only while
fewer than two of its sides are covered, after that only its branch ends count)."""
from __future__ import annotations

import numpy as np
import pytest

from domino_envs.layout import (
    SPIN_ALL,
    SPIN_FIRST,
    SPIN_NONE,
    lay_arm_double,
    lay_arm_end,
    lay_arm_len,
    lay_arm_open,
    lay_arms,
    lay_can_place,
    lay_count,
    lay_history,
    lay_init,
    lay_num_arms,
    lay_open_pips,
    lay_place,
    lay_placed,
    lay_playable,
    lay_size,
    render_cross,
)
from domino_envs.tiles import tile_id, tiles_to_mask

L = 3  # a non-zero offset, as inside a game's state row


def new(max_arms=4, mode=SPIN_FIRST):
    s = np.zeros(L + lay_size(max_arms) + 2, dtype=np.int64)
    s[:] = 99  # garbage around and inside: lay_init must clear what it owns
    lay_init(s, L, max_arms, mode)
    return s


def put(s, a, b, arm):
    t = tile_id(a, b)
    assert lay_can_place(s, L, t, arm), f"{a}-{b} should fit arm {arm}"
    lay_place(s, L, t, arm)


def open_ends(s):
    return {a: int(lay_arm_end(s, L, a)) for a in range(int(lay_num_arms(s, L))) if lay_arm_open(s, L, a)}


def test_init_leaves_the_rest_of_the_row_alone():
    s = new()
    assert s[0] == 99 and s[L - 1] == 99 and s[-1] == 99
    assert lay_placed(s, L) == 0 and lay_count(s, L) == 0 and lay_num_arms(s, L) == 0
    # anything may be led, on arm 0 only
    assert lay_can_place(s, L, tile_id(2, 3), 0) and not lay_can_place(s, L, tile_id(2, 3), 1)
    assert lay_playable(s, L, 0b1011) == 0b1011


@pytest.mark.parametrize("mode", [SPIN_NONE, SPIN_FIRST, SPIN_ALL])
@pytest.mark.parametrize("a,b,count", [(2, 3, 5), (0, 5, 5), (4, 6, 10), (1, 2, 3), (5, 5, 10), (6, 6, 12),
                                       (0, 0, 0), (3, 3, 6)])
def test_count_of_a_lone_first_tile_is_all_its_pips(mode, a, b, count):
    s = new(mode=mode)
    put(s, a, b, 0)
    assert lay_count(s, L) == count
    assert open_ends(s) == {0: a, 1: b}
    assert lay_open_pips(s, L) == (1 << a) | (1 << b)


def test_lead_double_is_the_spinner_sides_before_branches():
    s = new()
    put(s, 5, 5, 0)
    assert lay_num_arms(s, L) == 4  # the spinner brought its two branches ...
    assert open_ends(s) == {0: 5, 1: 5}  # ... closed until both sides are covered
    assert not lay_can_place(s, L, tile_id(5, 1), 2) and not lay_can_place(s, L, tile_id(5, 1), 3)
    assert lay_count(s, L) == 10
    put(s, 5, 1, 0)  # first side
    assert open_ends(s) == {0: 1, 1: 5}
    assert lay_count(s, L) == 1 + 10  # the spinner still counts 2d: one side uncovered
    assert not lay_can_place(s, L, tile_id(5, 3), 2)
    put(s, 5, 3, 1)  # second side: branches open, the spinner stops counting
    assert open_ends(s) == {0: 1, 1: 3, 2: 5, 3: 5}
    assert lay_count(s, L) == 1 + 3  # an empty branch adds nothing
    put(s, 5, 0, 2)
    assert lay_count(s, L) == 1 + 3 + 0
    put(s, 5, 6, 3)
    assert lay_count(s, L) == 1 + 3 + 0 + 6
    assert open_ends(s) == {0: 1, 1: 3, 2: 0, 3: 6}
    assert [lay_arm_len(s, L, a) for a in range(4)] == [1, 1, 1, 1]
    # the spinner's pip is no longer open anywhere
    assert lay_playable(s, L, tiles_to_mask([tile_id(2, 5)])) == 0
    assert lay_playable(s, L, tiles_to_mask([tile_id(0, 2)])) != 0


def test_one_side_covered_twice_does_not_open_the_branches():
    s = new()
    put(s, 4, 4, 0)
    put(s, 4, 2, 0)
    put(s, 2, 2, 0)  # a later double: crosswise, in line only (no second spinner)
    put(s, 2, 6, 0)
    assert lay_num_arms(s, L) == 4
    assert open_ends(s) == {0: 6, 1: 4}
    assert lay_count(s, L) == 6 + 8
    put(s, 4, 1, 1)
    assert open_ends(s) == {0: 6, 1: 1, 2: 4, 3: 4}


def test_mid_line_first_double_becomes_the_spinner():
    s = new()
    put(s, 3, 5, 0)
    put(s, 5, 5, 1)  # first double played: the spinner, lying at the right end
    assert lay_num_arms(s, L) == 4
    assert open_ends(s) == {0: 3, 1: 5}
    assert lay_arm_double(s, L, 1) == 1
    assert lay_count(s, L) == 3 + 10  # lone centre half + the uncovered spinner's 2d
    put(s, 3, 3, 0)  # second double: crosswise at its end (counts 6) but no branches
    assert lay_num_arms(s, L) == 4
    assert lay_count(s, L) == 6 + 10
    assert not lay_can_place(s, L, tile_id(5, 4), 2)
    put(s, 5, 2, 1)  # covers the spinner's outer side: both sides covered
    assert open_ends(s) == {0: 3, 1: 2, 2: 5, 3: 5}
    assert lay_count(s, L) == 6 + 2  # the spinner no longer counts
    put(s, 5, 4, 2)
    assert lay_count(s, L) == 6 + 2 + 4
    put(s, 3, 1, 0)
    assert lay_count(s, L) == 1 + 2 + 4


def test_mid_line_spinner_on_the_left_arm():
    s = new()
    put(s, 1, 2, 0)
    put(s, 1, 1, 0)
    assert open_ends(s) == {0: 1, 1: 2}
    assert lay_count(s, L) == 2 + 2
    put(s, 2, 6, 1)  # the other arm does not cover the spinner
    assert open_ends(s) == {0: 1, 1: 6}
    put(s, 1, 4, 0)
    assert open_ends(s) == {0: 4, 1: 6, 2: 1, 3: 1}
    assert lay_count(s, L) == 4 + 6


def test_crosswise_double_at_an_end_counts_both_halves_without_spinners():
    s = new(max_arms=2, mode=SPIN_NONE)  # the Draw layout
    put(s, 2, 4, 0)
    put(s, 4, 4, 1)
    assert lay_num_arms(s, L) == 2
    assert lay_count(s, L) == 2 + 8
    put(s, 4, 1, 1)
    assert lay_count(s, L) == 2 + 1
    put(s, 2, 2, 0)
    assert lay_count(s, L) == 4 + 1
    assert open_ends(s) == {0: 2, 1: 1}


def test_lone_double_lead_without_spinner_counts_2d_until_both_sides_covered():
    s = new(max_arms=2, mode=SPIN_NONE)
    put(s, 6, 6, 0)
    assert lay_count(s, L) == 12
    put(s, 6, 3, 1)
    assert lay_count(s, L) == 3 + 12
    put(s, 6, 0, 0)
    assert lay_count(s, L) == 3 + 0


def test_branch_ends_count_and_a_branch_double_counts_both_halves():
    s = new()
    put(s, 6, 6, 0)
    put(s, 6, 1, 0)
    put(s, 6, 2, 1)
    assert lay_count(s, L) == 1 + 2
    put(s, 6, 3, 2)
    assert lay_count(s, L) == 1 + 2 + 3
    put(s, 3, 3, 2)
    assert lay_count(s, L) == 1 + 2 + 6
    assert lay_arm_double(s, L, 2) == 1
    put(s, 6, 4, 3)
    assert lay_count(s, L) == 1 + 2 + 6 + 4
    assert open_ends(s) == {0: 1, 1: 2, 2: 3, 3: 4}


def test_spin_all_makes_every_double_a_spinner_while_arms_last():
    s = new(max_arms=6, mode=SPIN_ALL)
    put(s, 2, 2, 0)
    put(s, 2, 5, 1)
    put(s, 5, 5, 1)  # second spinner, on the right arm
    assert lay_num_arms(s, L) == 6
    assert open_ends(s) == {0: 2, 1: 5}
    assert lay_count(s, L) == 4 + 10  # centre spinner uncovered on the left; 5-5 uncovered
    put(s, 2, 0, 0)  # covers the centre spinner: its branches (2, 3) open
    assert open_ends(s) == {0: 0, 1: 5, 2: 2, 3: 2}
    put(s, 5, 1, 1)  # covers 5-5: branches 4, 5 open
    assert open_ends(s) == {0: 0, 1: 1, 2: 2, 3: 2, 4: 5, 5: 5}
    put(s, 2, 4, 2)
    put(s, 5, 6, 5)
    assert lay_count(s, L) == 0 + 1 + 4 + 6
    put(s, 4, 4, 2)  # no arms left: a crosswise double in line
    assert lay_num_arms(s, L) == 6
    assert lay_count(s, L) == 0 + 1 + 8 + 6


def test_history_and_arms_view():
    s = new()
    moves = [((3, 5), 0), ((5, 5), 1), ((3, 3), 0), ((5, 2), 1), ((5, 4), 2), ((5, 0), 3), ((4, 1), 2)]
    for (a, b), arm in moves:
        put(s, a, b, arm)
    assert lay_history(s, L) == [(tile_id(a, b), arm) for (a, b), arm in moves]
    view = lay_arms(s, L)
    assert view["center"] == tile_id(3, 5)
    assert view["arms"][0] == [(3, 3)]
    assert view["arms"][1] == [(5, 5), (5, 2)]
    assert view["arms"][2] == [(5, 4), (4, 1)]
    assert view["arms"][3] == [(5, 0)]
    assert view["spinners"] == [(tile_id(5, 5), 1, 0, 2)]


def test_render_cross_puts_the_branches_in_the_spinner_column():
    s = new()
    for (a, b), arm in [((3, 5), 0), ((5, 5), 1), ((3, 3), 0), ((5, 2), 1), ((5, 4), 2), ((4, 1), 2),
                        ((5, 0), 3)]:
        put(s, a, b, arm)
    text = render_cross(s, L, count=int(lay_count(s, L)))
    line = "[3|3]<3|5>{5|5}[5|2]"
    col = line.index("{")
    assert text.splitlines() == [
        " " * col + "[1|4]",  # up branch, farthest tile on top, read towards the spinner
        " " * col + "[4|5]",
        line,
        " " * col + "[5|0]",  # down branch, read away from the spinner
        "open ends  0 left: 3 | 1 right: 2 | 2 up: 1 | 3 down: 0   count 9",  # 3-3 crosswise 6 + 2 + 1 + 0
    ]
    assert render_cross(new(), L) == "(empty)"


def test_render_cross_lead_spinner_with_closed_branches():
    s = new()
    put(s, 4, 4, 0)
    put(s, 4, 6, 0)
    text = render_cross(s, L)
    assert text.splitlines() == ["[6|4]{4|4}", "open ends  0 left: 6 | 1 right: 4 | 2 up: closed | 3 down: closed"]


def test_plain_line_helpers_agree_with_the_general_forms():
    """The Draw/Block fast path (lay_line_*, lay_place_line) gives exactly what the general layout
    functions give, on random plain lines (double-nine set, random hands, every stage of a line).
    One documented difference: the plain line's mask and single action treat two ends showing one
    pip as twins whatever their crosswise-double flags (Draw/Block read no flag), so they are
    compared with the general forms on the line with those flags cleared."""
    from domino_envs.layout import (
        lay_fill_mask,
        lay_line_fill_mask,
        lay_line_fits,
        lay_line_open_pips,
        lay_line_single_action,
        lay_place_line,
        lay_single_action,
    )
    rng = np.random.default_rng(7)
    nt = 55
    checked = 0
    for _ in range(300):
        line = new(max_arms=2, mode=SPIN_NONE)
        ref = new(max_arms=2, mode=SPIN_NONE)
        free = (1 << nt) - 1
        for _ in range(12):
            flagless = ref.copy()
            if lay_placed(ref, L) > 0 and lay_arm_end(ref, L, 0) == lay_arm_end(ref, L, 1):
                flagless[L + 6 + 1] = flagless[L + 6 + 4 + 1] = 0  # arms 0 and 1: crosswise flag
            for _ in range(4):  # random hands against this line
                hand = int(rng.integers(0, 1 << nt)) & free & int(rng.integers(0, 1 << nt))
                assert lay_line_single_action(line, L, hand) == lay_single_action(flagless, L, hand, -1, 2)
                mask, want = np.full(2 * nt, 7, np.int8), np.zeros(2 * nt, np.int8)
                lay_line_fill_mask(line, L, hand, mask, 2 * nt)
                lay_fill_mask(flagless, L, hand, -1, 2, want)
                assert np.array_equal(mask, want)
                assert hand & lay_line_fits(line, L) == lay_playable(ref, L, hand)
                checked += 1
            if lay_placed(ref, L) > 0:
                assert lay_line_open_pips(line, L) == lay_open_pips(ref, L)
            fits = [(t, a) for t in range(nt) if (free >> t) & 1 for a in range(2) if lay_can_place(ref, L, t, a)]
            if not fits:
                break
            t, a = fits[int(rng.integers(len(fits)))]
            lay_place_line(line, L, t, a)
            lay_place(ref, L, t, a)
            free &= ~(1 << t)
            assert np.array_equal(line, ref)
    assert checked > 5000


def _offered(s, hand, stride=4):
    """(tile pips, arm) pairs of lay_fill_mask for `hand` (tiles as (a, b))."""
    from domino_envs.layout import lay_fill_mask
    from domino_envs.tiles import TILE_A, TILE_B
    out = np.zeros(28 * stride, np.int8)
    lay_fill_mask(s, L, sum(1 << tile_id(a, b) for a, b in hand), -1, stride, out)
    return {((int(TILE_A[a // stride]), int(TILE_B[a // stride])), a % stride) for a in np.flatnonzero(out)}


def test_twin_arms_offer_a_tile_once_and_same_pip_arms_that_differ_keep_both():
    """Issue 13 item 9: open arms alike for every rule (same end pip, crosswise-double flag, counted
    status, line or branch) offer a tile on the lowest one only, in the mask, the single action and
    lay_offered_arm; same-pip arms that differ (a crosswise double vs a plain end, an empty branch
    vs a line end) keep both placements."""
    from domino_envs.layout import lay_offered_arm, lay_single_action
    s = new()
    put(s, 4, 4, 0)  # the lone spinner: both sides show 4 with the double flag, both count
    assert _offered(s, [(2, 4), (4, 6)]) == {((2, 4), 0), ((4, 6), 0)}
    assert lay_offered_arm(s, L, 0) and not lay_offered_arm(s, L, 1)
    assert lay_single_action(s, L, 1 << tile_id(2, 4), -1, 4) == tile_id(2, 4) * 4 + 0
    put(s, 4, 6, 0)
    put(s, 1, 4, 1)  # both sides covered: the branches open, both empty and showing 4
    assert open_ends(s) == {0: 6, 1: 1, 2: 4, 3: 4}
    assert _offered(s, [(3, 4), (1, 6)]) == {((3, 4), 2), ((1, 6), 0), ((1, 6), 1)}
    assert lay_offered_arm(s, L, 2) and not lay_offered_arm(s, L, 3)
    assert lay_single_action(s, L, 1 << tile_id(3, 4), -1, 4) == tile_id(3, 4) * 4 + 2
    put(s, 2, 4, 2)  # branch 2 now holds a tile, ends 2; branch 3 empty
    assert lay_offered_arm(s, L, 3)
    # a crosswise double at one end and a plain end with the same pip: different counts, both kept
    t = new(max_arms=2, mode=SPIN_NONE)
    put(t, 3, 5, 0)
    put(t, 5, 5, 1)  # right end: 5-5 crosswise (counts 10)
    put(t, 1, 3, 0)  # left end 1
    put(t, 1, 5, 0)  # left end: a plain 5 (counts 5)
    assert open_ends(t) == {0: 5, 1: 5} and lay_arm_double(t, L, 1) == 1 and lay_arm_double(t, L, 0) == 0
    assert _offered(t, [(2, 5)], stride=2) == {((2, 5), 0), ((2, 5), 1)}
    assert lay_single_action(t, L, 1 << tile_id(2, 5), -1, 2) == -1
    assert lay_offered_arm(t, L, 1)
    # the same ends without the flag are twins
    u = new(max_arms=2, mode=SPIN_NONE)
    put(u, 3, 5, 0)
    put(u, 3, 6, 0)
    put(u, 5, 6, 0)  # ends 5 | 5, no double
    assert open_ends(u) == {0: 5, 1: 5}
    assert _offered(u, [(2, 5)], stride=2) == {((2, 5), 0)}
    assert lay_single_action(u, L, 1 << tile_id(2, 5), -1, 2) == tile_id(2, 5) * 2
    assert not lay_offered_arm(u, L, 1)
