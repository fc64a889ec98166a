"""The line of play shared by the line games (Draw, Block, Seven-Toed Pete, Racehorse; Sum 7 reads it).

A layout is a block of int64 slots inside a game's state row, starting at offset ``L``. It has
*arms*: arm 0 (left) and arm 1 (right) grow from the first tile (the centre); every spinner adds
two *branch* arms that take tiles only once both of the spinner's sides are covered. Each arm
records the pip its open end shows, whether the tile at that end is a double lying crosswise, how
many tiles it holds and whether it is open. The spinner policy is a layout setting:
``SPIN_NONE`` (doubles lie in line only), ``SPIN_FIRST`` (the first double played is the one
spinner) or ``SPIN_ALL`` (every double is a spinner).

Rule ids carried out here (rules-spec; each game's engine names the policy it picks): D-6, one line
and no spinner in the Draw/Block Game (``SPIN_NONE``); T-4, Racehorse's ``spinner`` flag (none,
the first double, every double); Seven-Toed Pete's one spinner, the first double played (spec
section 2, no id: ``SPIN_FIRST``); the count (``lay_count``) that P-1/P-3 (Pete's scoring plays)
and T-3 (Racehorse's set, counted like any placement) score.

The count (sum of the open ends, the fives games' score) follows rules-spec conventions: a double
crosswise at an end counts both halves; a lone first tile counts all its pips; a spinner counts
2d only while fewer than two of its sides are covered, after that only its branch ends count.

*Twins* are open arms that show the same pip with the same crosswise-double flag, both counted
(a line arm, or a branch holding a tile) or both not, and both line arms or both branches. A tile
placed on either of two twins gives the same game up to swapping the two arms (same count, same
spinner coverage: an uncovered spinner is the flagged end of its host arm, and no other arm ends
in the same double), so the mask (``lay_fill_mask``) and the single-action test offer it on the
lowest twin only (``lay_offered_arm``). Same-pip arms that are not twins are real choices.

Slots, relative to L:
    0 placed, 1 centre tile, 2 arms in use, 3 max arms, 4 spinner mode, 5 spinners placed,
    6 + 4*a + (0 end pip, 1 end is a crosswise double, 2 tiles on arm, 3 open)      per arm a
    6 + 4*max_arms + 4*k + (0 host arm or -1 for the centre, 1 host arm length when placed,
                            2 first branch arm, 3 branches opened)                   per spinner k
    6 + 4*max_arms + 4*max_spinners on: the history, int16 entries packed four per slot; entry
        i, tile*32 + arm of the i-th placement, is ``_history(s)[_hist(s, L) + i]`` (packed, a
        placement writes a cache line the row already uses instead of a cold one)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .slots import Entry, Slots, record_entries, resolve
from .tiles import MAX_TILES, PIP_MASK, TILE_A, TILE_B, expand_bits, lowest_bit, popcount

SPIN_NONE = 0
SPIN_FIRST = 1
SPIN_ALL = 2

HIST_STRIDE = 32  # history entry = tile * HIST_STRIDE + arm (int16)
_HIST_PER_SLOT = 4  # int16 history entries per int64 slot


@dataclass(frozen=True)
class LayoutDims:
    """What a layout's slot ranges depend on: the arms a game's config uses, the highest pip, the
    number of tiles."""

    max_arms: int
    max_pip: int
    n_tiles: int


# The layout's slots, declared once (slots.py), at offsets from the layout's first slot L: a header,
# then one record per arm, one per spinner, then the packed history. Bounds are functions of the
# LayoutDims of a game's config.
_LAYOUT = Slots("layout")
_PLACED = _LAYOUT.slot("placed", 1, 0, lambda d: d.n_tiles)
_CENTER = _LAYOUT.slot("centre tile", 1, -1, lambda d: d.n_tiles - 1)
_NARMS = _LAYOUT.slot("arms in use", 1, 0, lambda d: d.max_arms, doc="even (lay_problem)")
_MAXARMS = _LAYOUT.slot("max arms", 1, lambda d: d.max_arms, lambda d: d.max_arms)
_SPINMODE = _LAYOUT.slot("spinner mode", 1, SPIN_NONE, SPIN_ALL)
_NSPIN = _LAYOUT.slot("spinners", 1, 0, lambda d: (d.max_arms - 2) // 2)
_HDR = _LAYOUT.close()

_ARM = Slots("arm")  # one arm, at _arm(L, a)
_A_END = _ARM.slot("end", 1, 0, lambda d: d.max_pip, doc="pip its open end shows")
_A_DOUBLE = _ARM.slot("double", 1, 0, 1, doc="1: the tile at its end is a crosswise double")
_A_TILES = _ARM.slot("tiles", 1, 0, lambda d: d.n_tiles)
_A_OPEN = _ARM.slot("open", 1, 0, 1)
_ARM_SIZE = _ARM.close()

_SPIN = Slots("spinner")  # one spinner, at _spin(s, L, k)
_S_HOST = _SPIN.slot("host arm", 1, -1, lambda d: d.max_arms - 1, doc="-1: the centre tile")
_S_HOST_LEN = _SPIN.slot("host length", 1, 0, lambda d: d.n_tiles, doc="host arm's tiles when placed")
_S_FIRST = _SPIN.slot("first branch", 1, 0, lambda d: d.max_arms - 2)
_S_OPENED = _SPIN.slot("opened", 1, 0, 1, doc="1 once both its sides are covered")
_SPIN_SIZE = _SPIN.close()

_HIST_SLOTS = -(-MAX_TILES // _HIST_PER_SLOT)  # the history: MAX_TILES int16 entries


def _before_hist(max_arms: int) -> int:
    """Slots of a layout with ``max_arms`` arms before its history (header, arms, spinners)."""
    return _HDR + _ARM_SIZE * max_arms + _SPIN_SIZE * ((max_arms - 2) // 2)


def lay_size(max_arms: int) -> int:
    """Slots a layout with up to ``max_arms`` arms needs (2 line arms + 2 per spinner)."""
    return _before_hist(max_arms) + _HIST_SLOTS


@njit(cache=True, inline="always")
def _arm(L, a):
    return L + _HDR + _ARM_SIZE * a


@njit(cache=True, inline="always")
def _spin(s, L, k):
    return L + _HDR + _ARM_SIZE * s[L + _MAXARMS] + _SPIN_SIZE * k


@njit(cache=True, inline="always")
def _hist(s, L):
    """Index of the first history entry in ``_history(s)``."""
    m = s[L + _MAXARMS]
    return _HIST_PER_SLOT * (L + _HDR + _ARM_SIZE * m + _SPIN_SIZE * ((m - 2) // 2))


@njit(cache=True, inline="always")
def _history(s):
    """The row as int16 entries, where the history lives (a view: no copy, no allocation)."""
    return s.view(np.int16)


@njit(cache=True, inline="always")
def lay_init(s, L, max_arms, spin_mode):
    """Empty layout. The history slots are left as they are: only entries below `placed` are
    ever read, and not clearing them keeps a reset from touching cold cache lines."""
    n = _HDR + _ARM_SIZE * max_arms + _SPIN_SIZE * ((max_arms - 2) // 2)
    for i in range(n):
        s[L + i] = 0
    s[L + _CENTER] = -1
    s[L + _MAXARMS] = max_arms
    s[L + _SPINMODE] = spin_mode


@njit(cache=True, inline="always")
def lay_placed(s, L):
    return s[L + _PLACED]


@njit(cache=True, inline="always")
def lay_center(s, L):
    return s[L + _CENTER]


@njit(cache=True, inline="always")
def lay_num_arms(s, L):
    return s[L + _NARMS]


@njit(cache=True, inline="always")
def lay_arm_open(s, L, a):
    return a < s[L + _NARMS] and s[_arm(L, a) + _A_OPEN] == 1


@njit(cache=True, inline="always")
def lay_arm_end(s, L, a):
    return s[_arm(L, a) + _A_END]


@njit(cache=True, inline="always")
def lay_arm_len(s, L, a):
    return s[_arm(L, a) + _A_TILES]


@njit(cache=True, inline="always")
def lay_arm_double(s, L, a):
    return s[_arm(L, a) + _A_DOUBLE]


@njit(cache=True)
def lay_open_pips(s, L):
    """Bitmask over pips (bit p) of the numbers showing on open ends."""
    m = 0
    for a in range(s[L + _NARMS]):
        if s[_arm(L, a) + _A_OPEN] == 1:
            m |= 1 << s[_arm(L, a) + _A_END]
    return m


@njit(cache=True)
def lay_playable(s, L, hand):
    """Tiles of `hand` that fit some open end (every tile while the layout is empty)."""
    if s[L + _PLACED] == 0:
        return hand
    m = 0
    for a in range(s[L + _NARMS]):
        if s[_arm(L, a) + _A_OPEN] == 1:
            m |= PIP_MASK[s[_arm(L, a) + _A_END]]
    return hand & m


@njit(cache=True, inline="always")
def _twin_key(s, L, a):
    """What the rules can tell about open arm a, as a number below 64 (pips 0..9): its end pip
    and its kind: a line arm plain (0) or ending in a crosswise double (1); a branch still empty
    (2: it counts nothing, its end is the spinner's pip, never flagged), or holding tiles, plain
    (3) or ending in a crosswise double (4). Open arms with equal keys are *twins*: a tile placed
    on either gives the same game up to swapping the two arms."""
    ar = _arm(L, a)
    if a < 2:
        kind = s[ar + _A_DOUBLE]
    elif s[ar + _A_TILES] == 0:
        kind = 2
    else:
        kind = 3 + s[ar + _A_DOUBLE]
    return s[ar + _A_END] * 5 + kind


@njit(cache=True, _nrt=False)
def lay_fill_mask(s, L, hand, lead, stride, out):
    """Set out[t * stride + a] = 1 for every tile t of `hand` that fits open arm a, on the lowest
    arm of each group of twins only (``lay_offered_arm``); while the layout is empty,
    out[t * stride] = 1 for every tile of ``hand & lead`` (the lead goes on arm 0). Only sets
    entries: the caller zeroes `out` first. (The action mask of the spinner games.)"""
    if s[L + _PLACED] == 0:
        m = hand & lead
        while m:
            out[lowest_bit(m) * stride] = 1
            m &= m - 1
        return
    seen = 0  # twin keys of the arms offered so far
    for a in range(s[L + _NARMS]):
        ar = _arm(L, a)
        if s[ar + _A_OPEN] == 1:
            k = _twin_key(s, L, a)
            if (seen >> k) & 1:
                continue
            seen |= 1 << k
            m = hand & PIP_MASK[s[ar + _A_END]]
            while m:
                out[lowest_bit(m) * stride + a] = 1
                m &= m - 1


@njit(cache=True, _nrt=False)
def lay_single_action(s, L, hand, lead, stride):
    """The one legal placement ``t * stride + arm`` of `hand` (as in ``lay_fill_mask``: twins
    offer one placement), -1 if it has several, -2 if none."""
    if s[L + _PLACED] == 0:
        m = hand & lead
        if m == 0:
            return -2
        if m & (m - 1):
            return -1
        return lowest_bit(m) * stride
    found = -2
    seen = 0
    for a in range(s[L + _NARMS]):
        ar = _arm(L, a)
        if s[ar + _A_OPEN] != 1:
            continue
        k = _twin_key(s, L, a)
        if (seen >> k) & 1:
            continue
        seen |= 1 << k
        m = hand & PIP_MASK[s[ar + _A_END]]
        if m == 0:
            continue
        if found != -2 or (m & (m - 1)) != 0:
            return -1
        found = lowest_bit(m) * stride + a
    return found


@njit(cache=True)
def lay_offered_arm(s, L, a):
    """Whether open arm a is offered: no lower open arm is its twin (``_twin_key``). The mask and
    the single-action test offer a tile that fits a group of twins on the lowest one only."""
    k = _twin_key(s, L, a)
    for b in range(a):
        if s[_arm(L, b) + _A_OPEN] == 1 and _twin_key(s, L, b) == k:
            return False
    return True


@njit(cache=True, _nrt=False)
def lay_obs_arms(s, L, n_arms, n_pips, out, o):
    """Write the arm observation pieces of arms 0..n_arms-1 at out[o:], every slot once:
    ``arm_ends (n_arms, n_pips)`` one-hot end pip of each open arm, ``arm_tiles (n_arms,)`` tiles
    on each arm in use, ``arm_double (n_arms,)`` 1 where an open arm ends in a crosswise double
    (zeros for arms not open / not in use). Returns the offset past the three pieces."""
    na = s[L + _NARMS]
    ot = o + n_arms * n_pips
    for a in range(n_arms):
        ar = _arm(L, a)
        used = a < na
        op = used and s[ar + _A_OPEN] == 1
        expand_bits((1 << s[ar + _A_END]) if op else 0, out, o + a * n_pips, n_pips)
        out[ot + a] = s[ar + _A_TILES] if used else 0
        out[ot + n_arms + a] = s[ar + _A_DOUBLE] if op else 0
    return ot + 2 * n_arms


@njit(cache=True)
def lay_can_place(s, L, t, a):
    """Whether tile t may go on arm a (the first tile goes on arm 0)."""
    if s[L + _PLACED] == 0:
        return a == 0
    if a < 0 or a >= s[L + _NARMS] or s[_arm(L, a) + _A_OPEN] != 1:
        return False
    e = s[_arm(L, a) + _A_END]
    return TILE_A[t] == e or TILE_B[t] == e


@njit(cache=True)
def _add_spinner(s, L, host, d):
    k = s[L + _NSPIN]
    sp = _spin(s, L, k)
    b = s[L + _NARMS]
    s[sp + _S_HOST] = host
    s[sp + _S_HOST_LEN] = s[_arm(L, host) + _A_TILES] if host >= 0 else 0
    s[sp + _S_FIRST] = b
    s[sp + _S_OPENED] = 0
    for j in range(2):
        ar = _arm(L, b + j)
        s[ar + _A_END] = d
        s[ar + _A_DOUBLE] = 0
        s[ar + _A_TILES] = 0
        s[ar + _A_OPEN] = 0
    s[L + _NARMS] = b + 2
    s[L + _NSPIN] = k + 1


@njit(cache=True)
def _spinner_allowed(s, L):
    # T-4 (Racehorse's spinner flag), Pete's first double (SPIN_FIRST), D-6 (no spinner: SPIN_NONE)
    mode = s[L + _SPINMODE]
    if mode == SPIN_NONE:
        return False
    if s[L + _NARMS] + 2 > s[L + _MAXARMS]:
        return False
    return mode == SPIN_ALL or s[L + _NSPIN] == 0


@njit(cache=True)
def lay_place(s, L, t, a):
    """Place tile t on arm a (caller checked lay_can_place)."""
    ta = TILE_A[t]
    tb = TILE_B[t]
    dbl = 1 if ta == tb else 0
    _history(s)[_hist(s, L) + s[L + _PLACED]] = t * HIST_STRIDE + a
    if s[L + _PLACED] == 0:
        s[L + _CENTER] = t
        for j in range(2):
            ar = _arm(L, j)
            s[ar + _A_END] = ta if j == 0 else tb
            s[ar + _A_DOUBLE] = dbl
            s[ar + _A_TILES] = 0
            s[ar + _A_OPEN] = 1
        s[L + _NARMS] = 2
        s[L + _PLACED] = 1
        if dbl == 1 and _spinner_allowed(s, L):
            _add_spinner(s, L, -1, ta)
        return
    ar = _arm(L, a)
    e = s[ar + _A_END]
    s[ar + _A_END] = tb if ta == e else ta
    s[ar + _A_DOUBLE] = dbl
    s[ar + _A_TILES] += 1
    s[L + _PLACED] += 1
    # a spinner's branches open once both its sides are covered
    for k in range(s[L + _NSPIN]):
        sp = _spin(s, L, k)
        if s[sp + _S_OPENED] == 1:
            continue
        host = s[sp + _S_HOST]
        if host == -1:
            covered = s[_arm(L, 0) + _A_TILES] > 0 and s[_arm(L, 1) + _A_TILES] > 0
        else:
            covered = s[_arm(L, host) + _A_TILES] > s[sp + _S_HOST_LEN]
        if covered:
            s[sp + _S_OPENED] = 1
            b = s[sp + _S_FIRST]
            s[_arm(L, b) + _A_OPEN] = 1
            s[_arm(L, b + 1) + _A_OPEN] = 1
    if dbl == 1 and _spinner_allowed(s, L):
        _add_spinner(s, L, a, ta)


# ---- the plain line: a 2-arm layout without spinners (``lay_init(s, L, 2, SPIN_NONE)``), the
# Draw/Block hot path. Both arms are open once the first tile is down, so these helpers read the
# two ends directly instead of looping over arms; each gives what its general form above gives,
# except that the mask and single action treat two ends showing the same pip as twins whatever
# their crosswise-double flags (Draw/Block read no flag and no count: only end 0 is offered).
_LINE_HIST = _HIST_PER_SLOT * _before_hist(2)  # _hist of a 2-arm layout at L = 0
_E0 = _HDR + _A_END  # arm 0's end, from L
_E1 = _HDR + _ARM_SIZE + _A_END  # arm 1's end


@njit(cache=True, inline="always")
def lay_line_fits(s, L):
    """Tiles that fit an open end of a plain line (every tile while it is empty)."""
    if s[L + _PLACED] == 0:
        return (1 << MAX_TILES) - 1
    return PIP_MASK[s[L + _E0]] | PIP_MASK[s[L + _E1]]


@njit(cache=True, inline="always")
def lay_line_open_pips(s, L):
    """``lay_open_pips`` of a non-empty plain line."""
    return (1 << s[L + _E0]) | (1 << s[L + _E1])


@njit(cache=True, _nrt=False)
def lay_line_single_action(s, L, hand):
    """The one legal action ``tile * 2 + end`` of a plain line (any tile leads), -1 if there are
    several, -2 if none: ``lay_single_action(s, L, hand, -1, 2)``, except that two ends showing
    the same pip are always twins here (end 0 offered), crosswise double or not."""
    if s[L + _PLACED] == 0:
        if hand == 0:
            return -2
        if hand & (hand - 1):
            return -1
        return lowest_bit(hand) * 2
    e0 = s[L + _E0]
    e1 = s[L + _E1]
    m0 = hand & PIP_MASK[e0]
    m1 = hand & PIP_MASK[e1] if e1 != e0 else 0  # equal ends: end 0 only
    count = popcount(m0) + popcount(m1)  # legal actions (a tile fitting two different ends: twice)
    only = lowest_bit(m0 | m1 | (1 << 62)) * 2 + (1 if m0 == 0 else 0)
    return only if count == 1 else (-1 if count > 1 else -2)


@njit(cache=True, _nrt=False)
def lay_line_fill_mask(s, L, hand, out, n_actions):
    """The action mask ``tile * 2 + end`` of a plain line (any tile leads, on end 0; with both
    ends showing one pip, end 0 only), every entry of out[:n_actions] written (no zeroing first:
    one branch-free loop LLVM vectorizes)."""
    if s[L + _PLACED] == 0:
        m0 = hand
        m1 = 0
    else:
        e0 = s[L + _E0]
        e1 = s[L + _E1]
        m0 = hand & PIP_MASK[e0]
        m1 = hand & PIP_MASK[e1] if e1 != e0 else 0  # equal ends: end 0 only
    for i in range(n_actions):
        m = m1 if i & 1 else m0
        out[np.uint64(i)] = (m >> (i >> 1)) & 1


@njit(cache=True, _nrt=False)
def lay_place_line(s, L, t, a):
    """``lay_place`` for a plain line: the same slots written, no spinner bookkeeping."""
    ta = TILE_A[t]
    tb = TILE_B[t]
    n = s[L + _PLACED]
    _history(s)[np.uint64(_HIST_PER_SLOT * L + _LINE_HIST + n)] = t * HIST_STRIDE + a
    s[L + _PLACED] = n + 1
    if n == 0:
        dbl = 1 if ta == tb else 0
        s[L + _CENTER] = t
        a0 = L + _HDR
        a1 = L + _HDR + _ARM_SIZE
        s[a0 + _A_END] = ta
        s[a0 + _A_DOUBLE] = dbl
        s[a0 + _A_TILES] = 0
        s[a0 + _A_OPEN] = 1
        s[a1 + _A_END] = tb
        s[a1 + _A_DOUBLE] = dbl
        s[a1 + _A_TILES] = 0
        s[a1 + _A_OPEN] = 1
        s[L + _NARMS] = 2
        return
    ar = _arm(L, a)
    s[ar + _A_END] = tb if ta == s[ar + _A_END] else ta
    s[ar + _A_DOUBLE] = 1 if ta == tb else 0
    s[ar + _A_TILES] += 1


@njit(cache=True)
def lay_place_touching(s, L, t, a, touch):
    """Place tile t on arm a with its half ``touch`` against the open end whatever pip the end
    shows (for matching rules other than equality, e.g. Sum 7's halves summing to 7); the other
    half becomes the arm's new end. The first tile is placed as by ``lay_place``."""
    if s[L + _PLACED] > 0:
        s[_arm(L, a) + _A_END] = touch
    lay_place(s, L, t, a)


@njit(cache=True)
def lay_close_arm(s, L, a):
    """Close arm a: it takes no more tiles (its end pip stays recorded)."""
    s[_arm(L, a) + _A_OPEN] = 0


@njit(cache=True)
def lay_count(s, L):
    """Sum of the open ends (see module docstring)."""
    # P-1/P-3 (Pete: a lone lead counts all its pips; a count > 0 and a multiple of 5 scores), T-3
    # (Racehorse: the set counts like any placement); a spinner counts 2d until both sides are covered
    if s[L + _PLACED] == 0:
        return 0
    c = s[L + _CENTER]
    total = 0
    for a in range(2):
        ar = _arm(L, a)
        if s[ar + _A_TILES] > 0:
            total += s[ar + _A_END] * (1 + s[ar + _A_DOUBLE])
    if TILE_A[c] == TILE_B[c]:
        if s[_arm(L, 0) + _A_TILES] == 0 or s[_arm(L, 1) + _A_TILES] == 0:
            total += 2 * TILE_A[c]
    else:
        for a in range(2):
            ar = _arm(L, a)
            if s[ar + _A_TILES] == 0:
                total += s[ar + _A_END]
    for a in range(2, s[L + _NARMS]):
        ar = _arm(L, a)
        if s[ar + _A_OPEN] == 1 and s[ar + _A_TILES] > 0:
            total += s[ar + _A_END] * (1 + s[ar + _A_DOUBLE])
    return total


@njit(cache=True)
def lay_history_entry(s, L, i):
    """(tile, arm) of the i-th placement."""
    v = np.int64(_history(s)[_hist(s, L) + i])
    return v // HIST_STRIDE, v % HIST_STRIDE


def lay_history(s, L) -> list[tuple[int, int]]:
    """All placements so far as (tile, arm), in order (Python side, for rendering)."""
    return [lay_history_entry(s, L, i) for i in range(int(s[L + _PLACED]))]


def render_line(history: list[tuple[int, int]]) -> str:
    """The two line arms as text, e.g. ``[3|5][5|5][5|1]`` (branch arms listed after)."""
    if not history:
        return "(empty)"
    t0 = history[0][0]
    arms: dict[int, list[str]] = {}
    ends = {0: int(TILE_A[t0]), 1: int(TILE_B[t0])}
    double_pips = {int(TILE_A[t0])} if TILE_A[t0] == TILE_B[t0] else set()
    for t, a in history[1:]:
        x, y = int(TILE_A[t]), int(TILE_B[t])
        e = ends.get(a)
        if e is None:  # first tile on a branch: it matches a spinner's pip
            e = x if x in double_pips else y
        if x == y:
            double_pips.add(x)
        inner, outer = (x, y) if x == e else (y, x)
        ends[a] = outer
        arms.setdefault(a, []).append(f"[{inner}|{outer}]")
    left = "".join(tile[::-1].replace("[", "#").replace("]", "[").replace("#", "]")
                   for tile in reversed(arms.get(0, [])))
    right = "".join(arms.get(1, []))
    line = f"{left}<{TILE_A[t0]}|{TILE_B[t0]}>{right}"
    extra = [f"  arm {a}: " + "".join(v) for a, v in sorted(arms.items()) if a >= 2]
    return "\n".join([line] + extra)


def lay_arms(s, L) -> dict:
    """Python view of a layout, rebuilt by replaying its history through ``lay_place`` (so it can
    never disagree with the compiled rules): ``{"center": tile or -1, "arms": {arm: [(inner, outer),
    ...] from the centre outwards}, "spinners": [(tile, host arm or -1 for the centre, index on the
    host arm or -1, first branch arm)]}``. For rendering and tests."""
    import numpy as np

    max_arms = int(s[L + _MAXARMS])
    scratch = np.zeros(lay_size(max_arms), dtype=np.int64)
    lay_init(scratch, 0, max_arms, int(s[L + _SPINMODE]))
    arms: dict[int, list[tuple[int, int]]] = {a: [] for a in range(max_arms)}
    spinners = []
    center = -1
    for t, a in lay_history(s, L):
        before = int(scratch[_NARMS])
        if scratch[_PLACED] == 0:
            center = t
            host, idx = -1, -1
        else:
            e = int(scratch[_arm(0, a) + _A_END])
            x, y = int(TILE_A[t]), int(TILE_B[t])
            arms[a].append((x, y) if x == e else (y, x))
            host, idx = a, len(arms[a]) - 1
        lay_place(scratch, 0, t, a)
        after = int(scratch[_NARMS])
        if after > max(before, 2):
            spinners.append((t, host, idx, after - 2))
    return {"center": center, "arms": arms, "spinners": spinners}


def render_cross(s, L, count: int | None = None) -> str:
    """The layout drawn as a cross: the line (left arm, centre, right arm) across, the first
    spinner's two branches up (its first branch arm) and down (its second) in the spinner's column.
    Line tiles read left to right; branch tiles read outwards from the spinner (``[inner|outer]``).
    The spinner is drawn ``{d|d}``, the first tile ``<a|b>`` (``{d|d}`` if it is the spinner).
    Branches of further spinners (SPIN_ALL) are listed below. A legend names every arm's open end."""
    view = lay_arms(s, L)
    if view["center"] < 0:
        return "(empty)"
    spin = view["spinners"]
    first_spin = spin[0] if spin else None

    def text(tile_pips, is_spinner, is_center):
        a, b = tile_pips
        if is_spinner:
            return "{" + f"{a}|{b}" + "}"
        if is_center:
            return f"<{a}|{b}>"
        return f"[{a}|{b}]"

    c = view["center"]
    cells = []  # (text, is first spinner)
    for i, (inner, outer) in reversed(list(enumerate(view["arms"][0]))):
        sp = first_spin is not None and first_spin[1] == 0 and first_spin[2] == i
        cells.append((text((outer, inner), sp, False), sp))
    csp = first_spin is not None and first_spin[1] == -1
    cells.append((text((int(TILE_A[c]), int(TILE_B[c])), csp, True), csp))
    for i, (inner, outer) in enumerate(view["arms"][1]):
        sp = first_spin is not None and first_spin[1] == 1 and first_spin[2] == i
        cells.append((text((inner, outer), sp, False), sp))
    line = ""
    col = -1
    for t, sp in cells:
        if sp:
            col = len(line)
        line += t
    rows = [line]
    names = {0: "left", 1: "right"}
    if first_spin is not None and col >= 0:
        up, down = first_spin[3], first_spin[3] + 1
        names[up], names[down] = "up", "down"
        above = [" " * col + f"[{o}|{i}]" for i, o in reversed(view["arms"][up])]
        below = [" " * col + f"[{i}|{o}]" for i, o in view["arms"][down]]
        rows = above + [line] + below
    for k, (_, _, _, b) in enumerate(spin):
        if k == 0 and col >= 0:
            continue
        for a in (b, b + 1):
            names[a] = f"branch {a}"
            rows.append(f"  arm {a}: " + "".join(f"[{i}|{o}]" for i, o in view["arms"][a]))
    ends = []
    for a in range(int(s[L + _NARMS])):
        state = str(int(lay_arm_end(s, L, a))) if lay_arm_open(s, L, a) else "closed"
        ends.append(f"{a} {names.get(a, f'arm {a}')}: {state}")
    legend = "open ends  " + " | ".join(ends)
    if count is not None:
        legend += f"   count {count}"
    return "\n".join(rows + [legend])



# ---- the layout's part of a game's row (slots.py) and checking one read from outside the engine
def lay_block(row: Slots, capacity: int, *, arms=None, max_pip, n_tiles, name: str = "layout") -> int:
    """Reserve ``lay_size(capacity)`` slots of `row` for a layout; return its first slot L. The
    block's entries for a game come from the layout's tables: `arms` (an int or a function of
    the game; default `capacity`), `max_pip` and `n_tiles` (ints or functions) set the ranges."""
    arms = capacity if arms is None else arms
    start = row.size

    def expand(game) -> list[Entry]:
        dims = LayoutDims(resolve(arms, game), resolve(max_pip, game), resolve(n_tiles, game))
        if not 2 <= dims.max_arms <= capacity:
            raise ValueError(f"{name}: {dims.max_arms} arms do not fit a block sized for {capacity}")
        return lay_entries(start, dims, capacity, name)

    return row.block(name, lay_size(capacity), expand,
                     doc=f"layout block for up to {capacity} arms (layout.py)")


def lay_entries(L: int, dims: LayoutDims, capacity: int | None = None, name: str = "layout") -> list[Entry]:
    """The entries (slots.Entry) of a layout at L with ``dims.max_arms`` arms: header, arms and
    spinners with their ranges, the packed history (checked by ``lay_problem``), and the slots
    the config leaves unused in a block sized for `capacity` arms."""
    m = dims.max_arms
    out = record_entries(_LAYOUT, dims, L, f"{name} ")
    for a in range(m):
        out += record_entries(_ARM, dims, L + _HDR + _ARM_SIZE * a, f"{name} arm {a} ")
    for k in range((m - 2) // 2):
        out += record_entries(_SPIN, dims, L + _HDR + _ARM_SIZE * m + _SPIN_SIZE * k, f"{name} spinner {k} ")
    h = L + _before_hist(m)
    out.append(Entry(f"{name} history", h, _HIST_SLOTS,
                     doc=f"int16 entries tile * {HIST_STRIDE} + arm, {_HIST_PER_SLOT} a slot; only those "
                         f"below placed are read (lay_problem checks them)"))
    spare = lay_size(capacity if capacity is not None else m) - lay_size(m)
    if spare:
        out.append(Entry(f"{name} spare", h + _HIST_SLOTS, spare, doc=f"unused with {m} arms"))
    return out


def lay_problem(s, L: int, max_arms: int, n_tiles: int) -> str | None:
    """What is wrong with a layout whose slots are within `lay_slot_ranges` (arms in use odd, or a
    history entry below `placed` naming no tile or arm), or None."""
    if s[L + _NARMS] % 2:
        return f"layout arms in use is {int(s[L + _NARMS])} (an even number)"
    first = _HIST_PER_SLOT * (L + _before_hist(max_arms))
    entries = s.view(np.int16)[first:first + int(s[L + _PLACED])]
    bad = np.flatnonzero((entries < 0) | (entries // HIST_STRIDE >= n_tiles) | (entries % HIST_STRIDE >= max_arms))
    if bad.size:
        return f"layout history entry {int(bad[0])} is {int(entries[bad[0]])} (tile * {HIST_STRIDE} + arm)"
    return None


def lay_replay_problem(s, L: int, max_arms: int, spin_mode: int, place=None) -> str | None:
    """What is wrong with a layout (already past `lay_problem`) as its history tells it, or None.

    The history below `placed` is replayed into a fresh layout on a copy of the row, each placement
    checked (no tile twice; by default the first tile on arm 0, every later one on an open arm whose
    end it matches: ``lay_can_place``, then ``lay_place``). ``place(scratch, t, arm)`` replaces that
    for a game with other rules: it places the tile on the scratch row (its layout at L) and
    returns None, or says why the placement is impossible. Then every slot before the history
    (header, arms, spinners; unused arms zero) must equal the replayed one: the ends, counts,
    open flags and spinner records the kernels index with are exactly what the tiles placed give,
    and the row's arms and spinner mode are the game's (`max_arms`, `spin_mode`)."""
    scratch = s.copy()
    lay_init(scratch, L, max_arms, spin_mode)
    seen = 0
    for i, (t, a) in enumerate(lay_history(s, L)):
        t, a = int(t), int(a)
        if (seen >> t) & 1:
            return f"layout history entry {i} places tile {t} a second time"
        seen |= 1 << t
        if place is not None:
            why = place(scratch, t, a)
        else:
            why = None if lay_can_place(scratch, L, t, a) else "it does not match that arm's open end"
            if why is None:
                lay_place(scratch, L, t, a)
        if why is not None:
            return f"layout history entry {i} (tile {t} on arm {a}) cannot be played: {why}"
    n = _before_hist(max_arms)
    diff = np.flatnonzero(scratch[L:L + n] != s[L:L + n])
    if diff.size:
        d = int(diff[0])
        dims = LayoutDims(max_arms, MAX_TILES, MAX_TILES)
        name = next((e.name for e in lay_entries(L, dims) if e.start <= L + d < e.start + e.size), "layout")
        return (f"{name} (slot {L + d}) is {int(s[L + d])}, but the {int(s[L + _PLACED])} tiles of the layout's "
                f"history give {int(scratch[L + d])}")
    return None


def lay_history_tiles(s, L) -> int:
    """Bitmask of the tiles in the history below `placed` (the tiles on the table)."""
    m = 0
    for t, _ in lay_history(s, L):
        m |= 1 << int(t)
    return m
