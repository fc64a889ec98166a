"""Domino Sum 7 (`sum7_v0`): required numbers that sum to seven, zero traps, and waiting.

The full text - every rule and its ruling, the config, actions, observation, rewards, deals and
the engine's notes on the layout and on sample_hidden - is docs/games/sum7.md (rules-spec
section 4, seed 003, a proposed house variant). This docstring is its summary, which
tests/docs/test_docs.py keeps in step with it.

Rules in brief (S-1..S-8 and S-10 are the spec's ids, S-9, S-11 and S-12 this engine's):
- S-1 double-six, 2-4 players, 7 tiles each (``deal="seven_up"``: 7/6/5); the rest is the market.
- S-2 the holder of the highest double 1-1..6-6 leads it (the engine plays the lead); S-3 with no
  such double, the heaviest zero-free tile leads.
- An open side showing e requires 7 - e: a tile goes there with its 7 - e half touching.
- S-4 zero tiles are placeable from the 7th placement on; S-5 x-0 goes on a side requiring x and
  closes it; S-6 0-0 goes on any open side and closes it; S-7 ``zero_rule`` strict / wild vary this.
- S-8 a seat with a placement places or waits (the pass action); one without draws until it can
  place and must; S-9 drawing is only ever forced and public (``lacks``).
- S-10 the hand ends at once when the line is closed, a seat goes out, or every seat passes in a
  row. S-11 fewest pips win: losers pay their pips, shared by the winners. S-12 ``match=True``
  plays hands until a match score reaches ``target``.
- Forced steps (the lead, draws, forced passes, a just-drawn tile with one placement) are the
  engine's; with waiting allowed no other decision is forced.

Actions: ``Discrete(57)``, the same for every config (tile ids: tiles.py):
    tile * 2 + 0   place the tile on side 0 (left)
    tile * 2 + 1   place it on side 1 (right; offered only while the open sides show different pips)
    56             pass: wait (S-8), or the forced pass

Observation (float32, seat-relative; n = num_players):
    hand         (28,)      my tiles
    played_by    (n, 28)    the tiles seat r placed
    required     (2, 6)     number required on side 0 / 1
    closed       (2,)       side closed by a zero trap
    traps_live   (1,)       zero tiles placeable now
    placements   (1,)       tiles in the line
    hand_sizes   (n,)       tiles held
    market       (1,)       tiles left in the market
    lacks        (n, 28)    tiles seat r showed it does not hold
    drawn        (n,)       tiles drawn this hand
    passes       (1,)       passes in a row
    won          (n,)       points received this match
    paid         (n,)       points paid this match
    to_move      (n,)       seat to act
    just_drew    (1,)       the seat to act drew: it must place the tile it drew

Deal format (``set_deal``; the page's "Deals"): ``{"hands": [[(a, b), ...] per seat], "stock":
[(a, b), ...] the market in draw order}``, every tile named.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..actions import ActionTable, tile_arm_table
from ..core import (
    H_DONE,
    H_HAND,
    H_REWARD,
    H_RNG,
    H_TRUNC,
    H_TURN,
    HEADER,
    DealError,
    Facts,
    Game,
    check_choice,
    check_int,
    check_match,
    draw_until_playable,
    legal_set,
    step_kernel,
)
from ..layout import (
    SPIN_NONE,
    lay_arm_end,
    lay_arm_open,
    lay_block,
    lay_close_arm,
    lay_history,
    lay_history_tiles,
    lay_init,
    lay_place_touching,
    lay_placed,
    lay_problem,
    lay_replay_problem,
)
from ..sampling import finish_redeal, redeal_attempt, shuffle_and_deal, unseen_setup
from ..slots import ObsLayout, Slots, last_seat, seats
from ..table import LinePlay, Table, hand_number
from ..tiles import (
    PIP_MASK,
    TILE_A,
    TILE_B,
    expand_bits,
    lowest_bit,
    mask_pips,
    popcount,
    tile_id,
    tile_name,
)

MAX_PLAYERS = 4
NT = 28  # double-six
FULL = (1 << NT) - 1
PASS = 2 * NT  # the wait / pass action
N_ACTIONS = PASS + 1
SEVEN = 7
UNIT = 12  # reward and score units per point (lcm of 1..3 winners sharing)
ZERO_TILES = int(PIP_MASK[0]) & FULL
ZR_TRAP, ZR_STRICT, ZR_WILD = 0, 1, 2
ZERO_RULES = ("trap", "strict", "wild")
DEALS = ("standard", "seven_up")
HAND_SIZES = {("standard", 2): 7, ("standard", 3): 7, ("standard", 4): 7,
              ("seven_up", 2): 7, ("seven_up", 3): 6, ("seven_up", 4): 5}

# S-2/S-3 lead rank of every double-six tile: doubles 1-1..6-6 above everything, then zero-free
# tiles by weight and high half; zero tiles never lead (rank -1)
LEAD_RANK = np.full(NT, -1, dtype=np.int64)
for _t in range(NT):
    _a, _b = int(TILE_A[_t]), int(TILE_B[_t])
    if _a == 0:
        continue
    LEAD_RANK[_t] = 1000 + _a if _a == _b else (_a + _b) * 8 + _b
# ABOVE[t]: the tiles ranked above tile t (what every seat showed it lacks when t leads)
ABOVE = np.array([sum(1 << u for u in range(NT) if LEAD_RANK[u] > LEAD_RANK[t]) for t in range(NT)],
                 dtype=np.int64)

# params
P_NP, P_HAND, P_ZERO, P_MATCH, P_TARGET, P_MAXHANDS = range(6)

# state slots (after the common header), declared once (slots.py): bounds are functions of the game
def _points(g):
    return UNIT * int(g.obs_high())


ROW = Slots("sum7", base=HEADER)
HANDS = ROW.slot("hands", MAX_PLAYERS, 0, FULL, used=seats, doc="tile bitmask per seat")
DECK = ROW.slot("deck", NT, -1, NT - 1, doc="the deal order of the tiles")
DECK_POS = ROW.slot("deck position", 1, 0, NT, doc="market = DECK[DECK_POS:NT]")
PLAYED_BY = ROW.slot("played by", NT, -1, last_seat, doc="per tile: seat that placed it, -1 if not placed")
LACKS = ROW.slot("lacks", MAX_PLAYERS, 0, FULL, doc="tile bitmask: tiles the seat showed it lacks")
DRAWN = ROW.slot("drawn", MAX_PLAYERS, 0, NT)
WON = ROW.slot("won", MAX_PLAYERS, 0, _points, doc="units of 1/UNIT point")
PAID = ROW.slot("paid", MAX_PLAYERS, 0, _points, doc="units of 1/UNIT point")
PASSES = ROW.slot("passes", 1, 0, seats, doc="passes in succession (S-10)")
JUST_DREW = ROW.slot("just drew", 1, 0, 1)
STARTER = ROW.slot("starter", 1, 0, last_seat)
WINNERS = ROW.slot("winners", 1, 0, lambda g: (1 << g.num_players) - 1,
                   doc="bitmask of the last hand's winners (rendering)")
PLAYED_MASK = ROW.slot("played", MAX_PLAYERS, 0, FULL, doc="per seat: bitmask of the tiles it placed this hand")
LAY = lay_block(ROW, 2, max_pip=6, n_tiles=NT)
STATE_SIZE = ROW.close()
DRAW_SLOTS = (DECK_POS, HANDS, DRAWN, LACKS, JUST_DREW)  # core.draw_until_playable's


@dataclass(frozen=True)
class Sum7Config:
    """Rule parameters of Domino Sum 7 (defaults: rules-spec section 4)."""

    num_players: int = 2
    deal: str = "standard"  # S-1: "standard" (7 each) or "seven_up" (7/6/5)
    zero_rule: str = "trap"  # S-7: "trap", "strict" or "wild"
    match: bool = False  # S-12
    target: int = 100
    max_hands: int = 1000

    def __post_init__(self):
        g = "sum7"
        check_int(g, "num_players", self.num_players, 2, MAX_PLAYERS)
        check_choice(g, "deal", self.deal, DEALS)
        check_choice(g, "zero_rule", self.zero_rule, ZERO_RULES)
        check_match(g, self)

    @property
    def hand_size(self) -> int:
        return HAND_SIZES[(self.deal, self.num_players)]


def _obs_shapes(n):
    """The observation's pieces (module docstring), declared once: `obs_pieces` (so `decode`) and
    the offsets `_obs_kernel` writes at (_obs_at) both come from here."""
    return [
        ("hand", (NT,)), ("played_by", (n, NT)), ("required", (2, 6)), ("closed", (2,)),
        ("traps_live", (1,)), ("placements", (1,)), ("hand_sizes", (n,)), ("market", (1,)),
        ("lacks", (n, NT)), ("drawn", (n,)), ("passes", (1,)), ("won", (n,)), ("paid", (n,)),
        ("to_move", (n,)), ("just_drew", (1,)),
    ]


OBS = ObsLayout(_obs_shapes, range(2, MAX_PLAYERS + 1))
OBS_C = OBS.affine()  # offsets affine in (n): see _obs_at
(I_PLAYED_BY, I_REQUIRED, I_CLOSED, I_TRAPS, I_PLACEMENTS, I_SIZES, I_MARKET, I_LACKS, I_DRAWN, I_PASSES,
 I_WON, I_PAID, I_TO_MOVE, I_JUST_DREW) = OBS.columns(
    "played_by", "required", "closed", "traps_live", "placements", "hand_sizes", "market", "lacks", "drawn",
    "passes", "won", "paid", "to_move", "just_drew")


# ------------------------------------------------------------------------------ kernels
@njit(cache=True, inline="always")
def _obs_at(n, i):
    """First observation entry of piece column i (an I_ constant) for these dimensions: OBS.at's
    value, as folded constants times the dimensions."""
    return OBS_C[0, i] + OBS_C[1, i] * n


@njit(cache=True, inline="always")
def _live(s, p):
    """Whether zero tiles may be placed now (S-4, S-7)."""
    # S-4: from the 7th placement on (6 tiles down); S-7 "wild": from the start
    return p[P_ZERO] == ZR_WILD or lay_placed(s, LAY) >= 6


@njit(cache=True, inline="always")
def _side_set(s, p, side):
    """Tiles (bitmask over all 28) that may go on `side` now."""
    if lay_placed(s, LAY) == 0 or not lay_arm_open(s, LAY, side):
        return 0
    r = SEVEN - lay_arm_end(s, LAY, side)  # an open side showing e requires 7 - e
    if _live(s, p):
        m = PIP_MASK[r] & FULL  # includes the x-0 trap (0, r) (S-5)
        if p[P_ZERO] != ZR_STRICT:  # S-7 "strict": 0-0 never goes down
            m |= 1  # S-6: 0-0 (tile id 0) on any open side
        return m
    return PIP_MASK[r] & FULL & ~ZERO_TILES


@njit(cache=True, inline="always")
def _placeable(s, p):
    return _side_set(s, p, 0) | _side_set(s, p, 1)


@njit(cache=True, inline="always")
def _offered_side_set(s, p, side):
    """The tiles the actions offer on `side`: ``_side_set``, except that side 1 offers none while
    both sides are open and show the same pip (its placements mirror side 0's: see the action
    encoding). The mask, the step's legality and the forced-placement count use this; the rules
    (drawing, lacks, PASS) use ``_side_set``."""
    if side == 1 and lay_arm_open(s, LAY, 0) and lay_arm_end(s, LAY, 0) == lay_arm_end(s, LAY, 1):
        return 0
    return _side_set(s, p, side)


@njit(cache=True, _nrt=False)
def _end_hand(s, p):
    """S-11 scoring, then the next hand (match) or the end (S-12)."""
    n = p[P_NP]
    # S-11: remaining pips; every seat tied for fewest wins, the losers pay their pips, shared
    best = 1 << 30
    for k in range(n):
        pk = mask_pips(s[HANDS + k])
        if pk < best:
            best = pk
    winners = 0
    nw = 0
    pot = 0
    for k in range(n):
        pk = mask_pips(s[HANDS + k])
        if pk == best:
            winners |= 1 << k
            nw += 1
        else:
            pot += pk
    if nw < n:
        share = pot * UNIT // nw
        for k in range(n):
            if (winners >> k) & 1:
                s[H_REWARD + k] += share
                s[WON + k] += share
            else:
                pk = mask_pips(s[HANDS + k]) * UNIT
                s[H_REWARD + k] -= pk
                s[PAID + k] += pk
    s[WINNERS] = winners
    s[H_HAND] += 1
    over = p[P_MATCH] == 0
    if not over:  # S-12: the match ends after the first hand where a seat's score reaches target
        for k in range(n):
            if s[WON + k] - s[PAID + k] >= p[P_TARGET] * UNIT:
                over = True
        if not over and s[H_HAND] >= p[P_MAXHANDS]:
            over = True
            s[H_TRUNC] = 1
    if over:
        s[H_DONE] = 1
        s[H_TURN] = -1
        s[JUST_DREW] = 0
    else:
        _deal(s, p)


@njit(cache=True, _nrt=False)
def _place(s, p, seat, t, side):
    """Put tile t from seat's hand on side (legality checked by the caller); S-5/S-6/S-10."""
    if TILE_A[t] == 0:  # S-5/S-6 zero tile: x-0 touches with x (0-0 with 0), the 0 faces out and closes
        lay_place_touching(s, LAY, t, side, TILE_B[t])
        lay_close_arm(s, LAY, side)
    else:
        lay_place_touching(s, LAY, t, side, SEVEN - lay_arm_end(s, LAY, side))
    s[HANDS + seat] &= ~(1 << t)
    s[PLAYED_BY + t] = seat
    s[PLAYED_MASK + seat] |= 1 << t
    s[PASSES] = 0
    s[JUST_DREW] = 0
    # S-10: the hand ends when the seat placed its last tile, or the other side is closed (both
    # sides closed now, or this placement went on the last open side)
    if s[HANDS + seat] == 0 or not lay_arm_open(s, LAY, 1 - side):
        _end_hand(s, p)
    else:
        s[H_TURN] = seat + 1 if seat + 1 < p[P_NP] else 0


@njit(cache=True, _nrt=False)
def _start(s, p):
    """S-2/S-3: find the lead, record what it shows, and let the engine place it."""
    n = p[P_NP]
    # S-2/S-3: the holder of the highest LEAD_RANK tile (a double 1-1..6-6, else the heaviest
    # zero-free tile) leads it; every seat thereby shows it held no tile ranked above (lacks)
    best = -1
    seat = -1
    lead = -1
    for k in range(n):
        h = s[HANDS + k]
        while h:
            t = lowest_bit(h)
            h &= h - 1
            if LEAD_RANK[t] > best:
                best = LEAD_RANK[t]
                seat = k
                lead = t
    above = ABOVE[lead]
    for k in range(n):
        s[LACKS + k] = above
    s[STARTER] = seat
    # the lead (placement 1) cannot close a side or end the line; a starter left without tiles
    # (only in a hand-set deal) ends the hand in _advance
    lay_place_touching(s, LAY, lead, 0, 0)
    s[HANDS + seat] &= ~(1 << lead)
    s[PLAYED_BY + lead] = seat
    s[PLAYED_MASK + seat] |= 1 << lead
    s[H_TURN] = seat + 1 if seat + 1 < n else 0


@njit(cache=True, _nrt=False)
def _deal(s, p):
    n = p[P_NP]
    hs = p[P_HAND]
    for k in range(MAX_PLAYERS):
        s[HANDS + k] = 0
        s[LACKS + k] = 0
        s[DRAWN + k] = 0
    # S-1: hs tiles each (deal="standard": 7; "seven_up": 7/6/5), the rest is the market
    s[DECK_POS] = shuffle_and_deal(s, H_RNG, s, DECK, NT, HANDS, n, hs)
    _new_hand(s, p)


@njit(cache=True, _nrt=False)
def _new_hand(s, p):
    for t in range(NT):
        s[PLAYED_BY + t] = -1
    for k in range(MAX_PLAYERS):
        s[PLAYED_MASK + k] = 0
    s[PASSES] = 0
    s[JUST_DREW] = 0
    lay_init(s, LAY, 2, SPIN_NONE)
    _start(s, p)


@njit(cache=True, _nrt=False)
def _advance(s, p):
    """Take forced steps (draws, forced passes, a drawn tile that fits one side) until a real
    decision or the end."""
    n = p[P_NP]
    while s[H_DONE] == 0:
        if s[HANDS + s[STARTER]] == 0:  # the starter went out with its lead (hand-set deal)
            _end_hand(s, p)
            continue
        seat = s[H_TURN]
        hand = s[HANDS + seat]
        m0 = hand & _side_set(s, p, 0)
        m1 = hand & _offered_side_set(s, p, 1)
        c = popcount(m0) + popcount(m1)
        if s[JUST_DREW] == 1:
            if c > 1:
                return
            if m0 != 0:
                _place(s, p, seat, lowest_bit(m0), 0)
            else:
                _place(s, p, seat, lowest_bit(m1), 1)
            continue
        if c > 0:
            return  # S-8: place or wait: a real decision
        # S-8/S-9: no placement: draw until a placeable tile comes (placed at once), market
        # empty: a forced pass; drawing is never a choice, and the market can be drawn dry
        pl = _placeable(s, p)
        got, _ = draw_until_playable(s, s, DECK, NT, DRAW_SLOTS, seat, pl, pl)
        if got:
            continue
        s[PASSES] += 1  # forced pass
        if s[PASSES] >= n:  # S-10: every seat passed once in succession
            _end_hand(s, p)
        else:
            s[H_TURN] = seat + 1 if seat + 1 < n else 0


@njit(cache=True, _nrt=False)
def _reset_kernel(s, seed, p):
    for i in range(s.shape[0]):
        s[i] = 0
    s[H_RNG] = seed
    _deal(s, p)
    _advance(s, p)


@njit(cache=True, _nrt=False)
def _is_legal(s, p, a):
    hand = s[HANDS + s[H_TURN]]
    if a == PASS:  # S-8: waiting is allowed only to a seat holding a placement (not after a draw)
        return s[JUST_DREW] == 0 and (hand & _placeable(s, p)) != 0
    t = a >> 1
    if (hand >> t) & 1 == 0:
        return False
    return (_offered_side_set(s, p, a & 1) >> t) & 1 == 1


@njit(cache=True)
def _legal_set_kernel(s, p, out):
    """Legality action by action through the step's own check (tests compare it with the mask)."""
    legal_set(s, p, out, N_ACTIONS, _is_legal)


@njit(cache=True, _nrt=False)
def _step_kernel(s, a, p):
    return step_kernel(s, a, p, N_ACTIONS, _is_legal, _play, _advance)


@njit(cache=True, inline="always")
def _play(s, p, a):
    seat = s[H_TURN]
    if a == PASS:  # S-8: a wait; S-10: it counts towards n passes in succession
        s[PASSES] += 1
        if s[PASSES] >= p[P_NP]:
            _end_hand(s, p)
        else:
            s[H_TURN] = seat + 1 if seat + 1 < p[P_NP] else 0
    else:
        _place(s, p, seat, a >> 1, a & 1)


@njit(cache=True, _nrt=False)
def _mask_kernel(s, p, out):
    out[:] = 0
    if s[H_DONE] == 1:
        return
    hand = s[HANDS + s[H_TURN]]
    m0 = hand & _side_set(s, p, 0)
    m1 = hand & _offered_side_set(s, p, 1)
    if (m0 | m1) != 0 and s[JUST_DREW] == 0:
        out[PASS] = 1
    while m0:
        out[lowest_bit(m0) * 2] = 1
        m0 &= m0 - 1
    while m1:
        out[lowest_bit(m1) * 2 + 1] = 1
        m1 &= m1 - 1


@njit(cache=True)
def _check_kernel(s, p):
    """Tile conservation (hands, line, market partition the set) and the state's invariants:
    lacks agree with the hands, the run of passes is short of n, a decision has >= 2 actions."""
    n = p[P_NP]
    seen = 0
    for k in range(n):
        h = s[HANDS + k]
        if seen & h:
            return False
        seen |= h
    placed = 0
    for t in range(NT):
        if s[PLAYED_BY + t] >= 0:
            if (seen >> t) & 1:
                return False
            seen |= 1 << t
            placed += 1
    if placed != lay_placed(s, LAY):
        return False
    for i in range(s[DECK_POS], NT):
        t = s[DECK + i]
        if t < 0 or t >= NT or (seen >> t) & 1:
            return False
        seen |= 1 << t
    if seen != FULL:
        return False
    if s[H_DONE] == 1:
        return s[H_TURN] == -1
    mover = s[H_TURN]
    if s[PASSES] >= n:
        return False
    for k in range(n):
        bad = s[HANDS + k] & s[LACKS + k]
        if k == mover and s[JUST_DREW] == 1:
            # exactly the drawn tile, which fits both sides (else the engine had placed it)
            if popcount(bad) != 1 or (bad & _side_set(s, p, 0)) == 0 or (bad & _side_set(s, p, 1)) == 0:
                return False
        elif bad != 0:
            return False
    return (s[HANDS + mover] & _placeable(s, p)) != 0


@njit(cache=True, _nrt=False)
def _obs_kernel(s, p, v, out):
    """Every slot written once (no clearing pass); bitmask pieces expanded bit by bit by tiles.expand_bits (one vectorizable loop)."""
    n = p[P_NP]
    expand_bits(s[HANDS + v], out, 0, NT)
    o_req = _obs_at(n, I_REQUIRED)
    o_closed = _obs_at(n, I_CLOSED)
    placed = lay_placed(s, LAY)
    for side in range(2):
        op = placed > 0 and lay_arm_open(s, LAY, side)
        # an open side showing e requires 7 - e: column 6 - e (ends of open sides are 1..6)
        expand_bits((1 << (SEVEN - 1 - lay_arm_end(s, LAY, side))) if op else 0, out, o_req + side * 6, 6)
        out[o_closed + side] = 1 if placed > 0 and not op else 0
    out[_obs_at(n, I_TRAPS)] = 1 if _live(s, p) else 0
    out[_obs_at(n, I_PLACEMENTS)] = placed
    o_played = _obs_at(n, I_PLAYED_BY)
    o_sizes = _obs_at(n, I_SIZES)
    out[_obs_at(n, I_MARKET)] = NT - s[DECK_POS]
    o_lacks = _obs_at(n, I_LACKS)
    o_drawn = _obs_at(n, I_DRAWN)
    out[_obs_at(n, I_PASSES)] = s[PASSES]
    o_won = _obs_at(n, I_WON)
    o_paid = _obs_at(n, I_PAID)
    o_to_move = _obs_at(n, I_TO_MOVE)
    turn = s[H_TURN] if s[H_DONE] == 0 else -1
    j = v
    for r in range(n):
        expand_bits(s[PLAYED_MASK + j], out, o_played + r * NT, NT)
        out[o_sizes + r] = popcount(s[HANDS + j])
        expand_bits(s[LACKS + j], out, o_lacks + r * NT, NT)
        out[o_drawn + r] = s[DRAWN + j]
        out[o_won + r] = s[WON + j] / UNIT
        out[o_paid + r] = s[PAID + j] / UNIT
        out[o_to_move + r] = 1 if j == turn else 0
        j = j + 1 if j + 1 < n else 0
    out[_obs_at(n, I_JUST_DREW)] = s[JUST_DREW]


@njit(cache=True)
def _sample_kernel(s, p, v, seed):
    """Redeal every tile seat v cannot see: opponents' hands avoid their public lacks; the seat to
    act (if not v) keeps a real decision: a just-drawn tile that fits both sides, or else at least
    one placeable tile. Depends only on v's information (dealt deck slots are blanked)."""
    n = p[P_NP]
    ns = s.copy()
    # stock = the market
    unseen, tiles, k, allowed, cap = unseen_setup(s, v, n, HANDS, PLAYED_MASK, NT, s[DECK_POS])
    for j in range(n):
        if j != v:
            allowed[j] &= ~s[LACKS + j]
    rng_arr = np.empty(1, dtype=np.int64)
    rng_arr[0] = seed
    mover = s[H_TURN]
    active = s[H_DONE] == 0 and mover != v
    pending = active and s[JUST_DREW] == 1
    pl = _placeable(s, p)
    if pending:  # the drawn tile: fits both sides (the decision is real)
        candidates = unseen & _side_set(s, p, 0) & _side_set(s, p, 1)
    else:  # after many rejections: reserve one placeable tile for the mover
        candidates = unseen & pl & ~s[LACKS + mover] if active else 0
    pool = np.empty(NT, dtype=np.int64)
    # fails closed: an empty row if no consistent redeal exists (sampling.py), never the true state
    dealt = False
    for attempt in range(100_000):
        reserve = pending or (active and attempt >= 200 and candidates != 0)
        if not redeal_attempt(ns, v, n, tiles, k, allowed, cap, rng_arr, HANDS, ns, DECK, s[DECK_POS],
                              mover if reserve else -1, candidates, pool):
            if not reserve:
                break  # deal_consistent is exact: no consistent deal exists
            continue
        dealt = True
        if not active or pending or (ns[HANDS + mover] & pl) != 0:
            break
    if not dealt:
        return np.empty(0, dtype=np.int64)
    finish_redeal(ns, rng_arr, H_RNG, ns, DECK, s[DECK_POS], NT)
    return ns


# ------------------------------------------------------------------------------ Python side
# heuristic: domino_agents.heuristic_sum7.Sum7Heuristic
class Sum7Game(Game, kernels=globals(), facts=Facts(Sum7Config, ROW, "sum7.md", "S", "sum7", None, float(UNIT))):
    """Domino Sum 7 engine bound to one config."""

    PASS = PASS

    def __init__(self, config: Sum7Config, name: str = "sum7_v0"):
        c = config
        self.num_players = c.num_players
        self.n_tiles = NT
        self.num_actions = N_ACTIONS
        self.params = np.array(
            [c.num_players, c.hand_size, ZERO_RULES.index(c.zero_rule), int(c.match), c.target,
             c.max_hands],
            dtype=np.int64,
        )
        super().__init__(config, name)

    def obs_pieces(self):
        return OBS.pieces(self.num_players)

    def obs_high(self) -> float:
        """Bound of every observation entry: won/paid add at most 168 points (every pip) per hand."""
        hands = self.config.max_hands if self.config.match else 1
        return float(max(NT, 168 * hands))

    def max_decisions(self) -> int:
        """Decisions per hand <= (placements + 1) * n: at most n - 1 passes between placements."""
        hands = self.config.max_hands if self.config.match else 1
        return hands * (NT + 1) * self.num_players

    # ---- actions
    def encode_action(self, a, b: int | None = None, side: int | None = None) -> int:
        """Action id of tile (a, b) on side 0 (left) or 1 (right); ``encode_action("pass")`` (or
        "wait") is the pass action."""
        if isinstance(a, str):
            if a in ("pass", "wait") and b is None and side is None:
                return PASS
            raise ValueError(f"{self.name}: encode_action takes (a, b, side) or 'pass'/'wait', got {a!r}")
        if side not in (0, 1):
            raise ValueError(f"{self.name}: side must be 0 (left) or 1 (right), got {side!r}")
        t = tile_id(a, b)
        if t >= NT:
            raise ValueError(f"{self.name}: tile ({a}, {b}) is not in the double-six set")
        return t * 2 + side

    def describe_action(self, action: int) -> str:
        if not 0 <= action < self.num_actions:
            return f"out of range (0..{self.num_actions - 1})"
        if action == PASS:
            return "pass (wait)"
        t, side = divmod(int(action), 2)
        return f"place {tile_name(t)} on the {'left' if side == 0 else 'right'} side"

    def action_table(self) -> ActionTable:
        """Action ``tile * 2 + side`` places tile id ``tile`` on a side; the last one is the pass
        (core.Game.action_table)."""
        return tile_arm_table("sum7", NT, 2, self.num_actions)

    # ---- pictures (core.Game.describe_table)
    def describe_table(self, state: np.ndarray, table: Table, face_up: list[bool]) -> None:
        s = state
        for k, seat in enumerate(table.seats):
            hand = self.hand(s, k)
            seat.count = len(hand)
            if face_up[k]:
                seat.tiles = hand
            if self.config.match:
                seat.lines.append(f"score {self.scores(s)[k]:g}")
        req = self.required(s)
        table.info += [f"hand {hand_number(s)}", f"market {len(self.market(s))}"]
        if self.placements(s):
            table.info.append(", ".join(f"{side} " + ("closed" if r is None else f"needs {r}")
                                        for side, r in zip(("left", "right"), req)))
        table.info.append("zero traps live" if self.traps_live(s) else "zero traps not yet")
        line = self.line(s)
        if line:
            a, b, _ = line[0]
            table.play = LinePlay((a, b), [(arm, i, o) for i, o, arm in line[1:]], {},
                                  {k for k in (0, 1) if req[k] is not None}, {k for k in (0, 1) if req[k] is None})

    # ---- deals
    def set_deal(self, state: np.ndarray, deal: dict) -> None:
        """Start a new episode from a given deal (module docstring, "Deal format")."""
        self._check_row(state)
        if isinstance(deal, dict) and "first" in deal:
            raise DealError(f"{self.name}: a deal cannot name 'first': the starter is the holder of the "
                            f"highest double, else of the heaviest zero-free tile (S-2/S-3)")
        n = self.num_players
        hand_ids, stock_ids, seen = self._deal_ids(*self._deal_parts(deal, ("hands", "stock"))[:2])
        if all(LEAD_RANK[t] < 0 for h in hand_ids for t in h):
            raise DealError(f"{self.name}: no hand holds a tile that can lead (a double 1-1..6-6 or a zero-free tile; S-2/S-3)")
        missing = [tile_name(t) for t in range(NT) if t not in seen]
        if missing:
            raise DealError(f"{self.name}: every tile is in play (a hand or the stock, the market drawn from); "
                            f"the deal leaves out {missing}")
        s = state
        self._fresh_row(s)
        s[DECK:DECK + NT] = [t for h in hand_ids for t in h] + stock_ids
        for k in range(n):
            s[HANDS + k] = sum(1 << t for t in hand_ids[k])
        s[DECK_POS] = sum(len(h) for h in hand_ids)
        _new_hand(s, self.params)
        _advance(s, self.params)

    def deal_of(self, state: np.ndarray) -> dict:
        """The deal of the hand in play, in the format `set_deal` takes: what was dealt, read from
        the deck (which keeps its order all hand) and each seat's hand and placed tiles, so it works
        after the forced lead too; the market is the rest of the deck in draw order. `set_deal` of
        it on a fresh row gives the same decision (for a later hand of a match: the same tiles, the
        match's points are no part of a deal)."""
        self._check_state(state)
        s, n = state, self.num_players
        deck = s[DECK:DECK + NT]
        dealt_end = int(s[DECK_POS]) - int(s[DRAWN:DRAWN + n].sum())
        dealt = sum(1 << int(t) for t in self._dealt(deck, dealt_end, int(s[DECK_POS]), NT))
        hands = [[(int(TILE_A[t]), int(TILE_B[t])) for t in range(NT)
                  if ((dealt & int(s[HANDS + k] | s[PLAYED_MASK + k])) >> t) & 1] for k in range(n)]
        stock = [(int(TILE_A[t]), int(TILE_B[t])) for t in deck[dealt_end:]]
        return {"hands": hands, "stock": stock}

    # ---- validate (core.Game.validate: the ranges of `slots`, then these)
    def _validate_more(self, state):
        """The relations the kernels rely on: the line what its history gives under Sum 7's rules
        (S-2/S-3 a zero-free lead by the starter, S-4..S-7 every later tile where it may go, zero
        traps closing sides), the played masks and played-by slots naming the tiles on it, the
        draws within the deck dealt, a just-drawn tile only in play, and match scores below the
        target in play (S-12). Tile conservation, lacks and the real decision: `_check_kernel`."""
        s, n = state, self.num_players
        problem = lay_problem(s, LAY, 2, NT) or lay_replay_problem(s, LAY, 2, SPIN_NONE, self._replay_place)
        if problem:
            self._refuse(problem)
        line = lay_history(s, LAY)
        if not line:
            self._refuse("the layout is empty: every hand starts with its lead placed (S-2)")
        self._check_played(s, PLAYED_MASK, MAX_PLAYERS, lay_history_tiles(s, LAY), PLAYED_BY, NT)
        if s[PLAYED_BY + line[0][0]] != s[STARTER]:
            self._refuse(f"starter (slot {STARTER}) is {int(s[STARTER])}, but seat {int(s[PLAYED_BY + line[0][0]])} "
                         f"placed the lead (S-2)")
        drawn = int(s[DRAWN:DRAWN + n].sum())
        if drawn > s[DECK_POS]:
            self._refuse(f"drawn counts (slots {DRAWN}..{DRAWN + n - 1}) add up to {drawn}; allowed: at most the "
                         f"{int(s[DECK_POS])} tiles dealt and drawn from the deck")
        if s[H_DONE] == 1:
            if s[JUST_DREW]:
                self._refuse(f"just drew (slot {JUST_DREW}) is 1 in a finished episode (allowed: 0)")
            return
        if sum(not lay_arm_open(s, LAY, side) for side in range(2)) > 1:
            self._refuse("both sides are closed in a hand in play (S-10: a closed line ends the hand)")
        scores = [int(s[WON + k] - s[PAID + k]) for k in range(n)]
        if self.config.match and max(scores) >= self.config.target * UNIT:
            self._refuse(f"match scores {[x / UNIT for x in scores]} (won minus paid): a match in play has every "
                         f"seat below target={self.config.target} (S-12)")
        if not self.config.match and s[H_HAND] != 0:
            self._refuse(f"hands done (slot {H_HAND}) is {int(s[H_HAND])}: a single hand in play has none finished")

    def _replay_place(self, scratch, t: int, side: int) -> str | None:
        """One placement of the history on the scratch row (layout.lay_replay_problem): placed as
        `_place` places it, or why it cannot be."""
        if lay_placed(scratch, LAY) == 0:
            if side != 0 or TILE_A[t] == 0:
                return "the lead is a zero-free tile on side 0 (S-2, S-3)"
            lay_place_touching(scratch, LAY, t, 0, 0)
            return None
        if not (int(_side_set(scratch, self.params, side)) >> t) & 1:
            return "it may not go on that side now (S-4..S-7: it must show the number required there)"
        if TILE_A[t] == 0:  # S-5/S-6: a zero tile closes the side
            lay_place_touching(scratch, LAY, t, side, TILE_B[t])
            lay_close_arm(scratch, LAY, side)
        else:
            lay_place_touching(scratch, LAY, t, side, SEVEN - lay_arm_end(scratch, LAY, side))
        return None

    # ---- inspection helpers (tests, rendering)
    def _tiles(self, mask) -> list[tuple[int, int]]:
        return [(int(TILE_A[t]), int(TILE_B[t])) for t in range(NT) if (int(mask) >> t) & 1]

    def hand(self, state, seat) -> list[tuple[int, int]]:
        return self._tiles(state[HANDS + seat])

    def lacks(self, state, seat) -> list[tuple[int, int]]:
        return self._tiles(state[LACKS + seat])

    def market(self, state) -> list[tuple[int, int]]:
        return [(int(TILE_A[t]), int(TILE_B[t])) for t in state[DECK + state[DECK_POS]:DECK + NT]]

    def required(self, state) -> tuple[int | None, int | None]:
        """Required number of side 0 and side 1 (None where closed or before the lead)."""
        if lay_placed(state, LAY) == 0:
            return None, None
        return tuple(int(SEVEN - lay_arm_end(state, LAY, a)) if lay_arm_open(state, LAY, a) else None
                     for a in range(2))

    def placements(self, state) -> int:
        return int(lay_placed(state, LAY))

    def traps_live(self, state) -> bool:
        return bool(_live(state, self.params))

    def passes(self, state) -> int:
        return int(state[PASSES])

    def just_drew(self, state) -> bool:
        return bool(state[JUST_DREW])

    def drawn(self, state) -> list[int]:
        return [int(x) for x in state[DRAWN:DRAWN + self.num_players]]

    def starter(self, state) -> int:
        return int(state[STARTER])

    def winners(self, state) -> list[int]:
        return [k for k in range(self.num_players) if (int(state[WINNERS]) >> k) & 1]

    def scores(self, state) -> list[float]:
        """Match score per seat (points won minus points paid; S-12)."""
        return [float(state[WON + k] - state[PAID + k]) / UNIT for k in range(self.num_players)]

    def line(self, state) -> list[tuple[int, int, int]]:
        """Placements in order as (inner half, outer half, side); the lead as (a, b, -1)."""
        out = []
        ends = {}
        for t, arm in lay_history(state, LAY):
            a, b = int(TILE_A[t]), int(TILE_B[t])
            if not ends:
                ends = {0: a, 1: b}
                out.append((a, b, -1))
                continue
            inner = b if a == 0 else SEVEN - ends[arm]  # x-0 and 0-0 touch with their high half
            outer = a if inner == b else b
            ends[arm] = outer
            out.append((inner, outer, int(arm)))
        return out

    def render_line(self, state) -> str:
        """The line with the required number (or 'closed') at each end, e.g. ``(4) [3|1]<1|1>[6|2] (5)``."""
        line = self.line(state)
        if not line:
            return "(empty)"
        left = "".join(f"[{o}|{i}]" for i, o, a in reversed(line) if a == 0)
        right = "".join(f"[{i}|{o}]" for i, o, a in line if a == 1)
        a, b, _ = line[0]
        req = self.required(state)
        tag = ["closed" if r is None else str(r) for r in req]
        return f"({tag[0]}) {left}<{a}|{b}>{right} ({tag[1]})"

    def render(self, state: np.ndarray, seat: int) -> str:
        s = state
        live = "live" if self.traps_live(s) else "not yet"
        lines = [f"{self.name}  hand {int(s[H_HAND]) + (0 if s[H_DONE] else 1)}  market {int(NT - s[DECK_POS])}  "
                 f"placements {self.placements(s)}  zero traps {live} ({self.config.zero_rule})  "
                 f"passes in a row {int(s[PASSES])}"]
        req = self.required(s)
        lines.append("required: " + " | ".join(
            f"{name} {'closed' if r is None else r}" for name, r in zip(("left", "right"), req)))
        lines.append("line: " + self.render_line(s))
        for k in range(self.num_players):
            mark = " <- to move" + (" (must place the drawn tile)" if s[JUST_DREW] else "") \
                if (not s[H_DONE] and s[H_TURN] == k) else ""
            lines.append(f"seat {k}: {popcount(s[HANDS + k])} tiles, drew {int(s[DRAWN + k])}{mark}")
        lines.append(f"seat {seat} holds: " + " ".join(f"[{a}|{b}]" for a, b in self.hand(s, seat)))
        if self.config.match:
            lines.append(f"match scores {self.scores(s)}")
        if s[H_DONE]:
            w = self.winners(s)
            pips = [mask_pips(s[HANDS + k]) for k in range(self.num_players)]
            lines.append(f"over: remaining pips {pips}; winner(s) {w}")
        return "\n".join(lines)
