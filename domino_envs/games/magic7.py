"""Magic-7 (`magic7_v0`): the Poker Domino game of four suit rows grown from the 7s.

The full text - every rule and its ruling, the config, actions, observation, rewards, deals and
the engine's notes on hidden information and sample_hidden - is docs/games/magic7.md
(rules-spec section 5, seed 000). This docstring is its summary, which tests/docs/test_docs.py keeps
in step with it.

Rules in brief (M7-2, M7-3, M7-4, M7-6 and M7-7 are the spec's ids; M7-1, M7-5, M7-8 and M7-9
this engine's):
- 54 tiles: 52 cards (card id ``suit * 13 + rank - 1``, suits C D H S) and 2 jokers (52, 53);
  2-6 players (deal 25/16/12/9/8 each), the rest is the pile. M7-1 every 7 goes face up at once
  and starts its suit's row; rows grow one rank at a time towards A and K.
- M7-7 the starter is random in game 1 (or ``first_seat``), then the seat that went out (else the
  lowest penalty). A turn is one of: play a playable card (M7-3: a joker never is one); M7-5 play
  a joker on the slot next to a row end, M7-4 its target card then placed at once by its live
  holder; M7-6 draw (no playable card, pile not empty); M7-9 kill a live tile (no playable card,
  pile empty); pass (no live tiles, forced).
- M7-8 the game ends when a seat holds no tiles, else when nobody holds a live tile. Table-1
  penalties for every tile left (killed ones too): A=1 (M7-2), 2..10, J=11, Q=12, K=13, joker 20;
  lowest wins. Rewards: mean penalty minus one's own. ``num_games`` games are one episode.
- Forced steps (every lone legal action) are the engine's.

Actions: ``Discrete(115)``, the same for every player count:
    0..51      play card id c
    52..59     play a joker on slot 52 + 2 * suit + end (end 0: below the low end, 1: above the high)
    60         draw one tile
    61..112    kill card id c = action - 61
    113        kill a joker
    114        pass (forced)

Observation (float32, seat-relative per-seat pieces; n = num_players):
    hand            (4, 13)    my live cards (suit, rank - 1)
    hand_jokers     (1,)       my live jokers
    killed          (4, 13)    my killed cards
    killed_jokers   (1,)       my killed jokers
    rows            (4, 13)    cards lying in the rows
    row_ends        (4, 2)     lowest and highest rank of each row
    jokers          (4, 13)    where a joker lies
    covered         (4, 2)     row ends covered by an unfilled joker
    played_by       (n, 52)    the cards seat r placed
    jokers_played   (n,)       jokers seat r played
    live_counts     (n,)       live tiles held
    killed_counts   (n,)       killed tiles held
    drawn           (n,)       tiles drawn this game
    lacks           (n, 52)    cards seat r's live hand is known to lack
    pile            (1,)       tiles left in the pile
    penalties       (n,)       penalty totals of the finished games
    last_penalties  (n,)       penalties of the last finished game
    games_played    (1,)       games finished so far
    to_move         (n,)       seat to act

Deal format (``set_deal``; the page's "Deals"): ``{"hands": [[card, ...] per seat], "stock":
[card, ...] the pile in draw order, "first": starter}``, cards by name ('7H', 'JK') or id.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..actions import DRAW, JOKER, KILL, PASS, ActionTable, empty_columns
from ..core import (
    H_DONE,
    H_HAND,
    H_REWARD,
    H_RNG,
    H_TURN,
    HEADER,
    MAX_SEATS,
    DealError,
    Facts,
    Game,
    check_int,
    legal_set,
    step_kernel,
)
from ..rng import rng_below, rng_shuffle
from ..sampling import deal_consistent, shuffle_and_deal
from ..slots import ObsLayout, Slots, high, last_seat, seats
from ..table import RowsPlay, Table, hand_number
from ..tiles import lowest_bit, popcount, stream_bits, stream_end

MAX_PLAYERS = 6
N_TILES = 54
N_CARDS = 52
JOKER0 = 52
JOKER1 = 53
SUITS = "CDHS"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")

ALL_MASK = (1 << N_TILES) - 1
CARD_MASK = (1 << N_CARDS) - 1
JOKER_MASK = (1 << JOKER0) | (1 << JOKER1)
SEVENS_MASK = sum(1 << (su * 13 + 6) for su in range(4))

# Table-1 penalty per tile id: A=1, 2..10 face value, J=11, Q=12, K=13, joker=20 (M7-2: the Ace of
# Spades is 1 like every ace, not the strategy note's 15)
PENALTY = np.array([r + 1 for su in range(4) for r in range(13)] + [20, 20], dtype=np.int64)

DEAL_TABLE = {2: 25, 3: 16, 4: 12, 5: 9, 6: 8}

# actions
A_JOKER = 52
A_DRAW = 60
A_KILL = 61
A_KILL_JOKER = 113
A_PASS = 114
NUM_ACTIONS = 115

# params
P_NP, P_HAND, P_GAMES, P_FIRST = range(4)

# state slots (after the common header), declared once (slots.py): bounds are functions of the game
ROW = Slots("magic7", base=HEADER)
LIVE = ROW.slot("live", MAX_SEATS, 0, ALL_MASK, used=seats, doc="live-tile bitmask per seat")
KILLED = ROW.slot("killed", MAX_SEATS, 0, ALL_MASK, used=seats, doc="killed-tile bitmask per seat")
PILE = ROW.slot("pile", N_TILES, -1, N_TILES - 1, doc="deal order; pile = PILE[PILE_POS:PILE_END]; -1 blanked")
PILE_POS = ROW.slot("pile position", 1, 0, N_TILES)
PILE_END = ROW.slot("pile end", 1, 0, N_TILES)
OUT = ROW.slot("out of play", 1, 0, ALL_MASK, doc="tiles out of play (only hand-set deals name fewer than 54)")
LO = ROW.slot("row low", 4, 0, 13, doc="lowest rank per row (0 while the 7 is not out)")
HI = ROW.slot("row high", 4, 0, 13, doc="highest rank per row")
COVER = ROW.slot("cover", 8, -1, N_CARDS - 1, doc="suit*2+end -> target card of an unfilled joker there, or -1")
JOKER_AT = ROW.slot("joker at", 1, 0, CARD_MASK, doc="mask over card ids of the slots where a joker lies")
PLAYED_BY = ROW.slot("played by", N_CARDS, -1, last_seat, doc="per card: seat that placed it, -1 if not placed")
JPLAYED = ROW.slot("jokers played", MAX_SEATS, 0, 2)
DRAWN = ROW.slot("drawn", MAX_SEATS, 0, N_TILES, doc="tiles drawn this game")
LACK = ROW.slot("lacks", MAX_SEATS, 0, CARD_MASK, doc="cards the seat's live hand is known to lack")
NKILL = ROW.slot("kills", 1, 0, N_TILES, doc="kill events this game")
KSEAT = ROW.slot("kill seat", N_TILES, 0, last_seat, doc="seat of the i-th kill")
KMASK = ROW.slot("kill mask", N_TILES, 0, ALL_MASK, doc="what the i-th killed tile cannot be (public)")
PEN_TOTAL = ROW.slot("penalty totals", MAX_SEATS, 0, high, doc="match penalty totals")
LAST_PEN = ROW.slot("last penalties", MAX_SEATS, 0, high, doc="penalties of the last finished game")
STARTER = ROW.slot("starter", 1, 0, last_seat, doc="starter of the current game")
WENT_OUT = ROW.slot("went out", 1, -1, last_seat, doc="seat that went out in the last finished game, -1 if none")
PLAYABLE = ROW.slot("playable", 1, 0, CARD_MASK,
                    doc="cache of _calc_playable(s), refreshed whenever a row or cover changes")
PLACED = ROW.slot("placed", 1, 0, CARD_MASK, doc="mask of the cards lying in the rows (PLAYED_BY >= 0)")
PLAYED_MASK = ROW.slot("played", MAX_SEATS, 0, CARD_MASK, doc="mask of the cards each seat placed")
STATE_SIZE = ROW.close()


@dataclass(frozen=True)
class Magic7Config:
    """Rule parameters of Magic-7 (defaults: rules-spec section 5)."""

    num_players: int = 4
    num_games: int = 1
    first_seat: int | None = None  # None: random starter in game 1 (M7-7)

    def __post_init__(self):
        g = "magic7"
        check_int(g, "num_players", self.num_players, 2, MAX_PLAYERS)
        check_int(g, "num_games", self.num_games, 1, 1000)
        if self.first_seat is not None:
            check_int(g, "first_seat", self.first_seat, 0, self.num_players - 1)


def _obs_shapes(n):
    """The observation's pieces (module docstring), declared once: `obs_pieces` (so `decode`) and
    the offsets `_obs_kernel` writes at (_obs_at) both come from here."""
    return [
        ("hand", (4, 13)), ("hand_jokers", (1,)), ("killed", (4, 13)), ("killed_jokers", (1,)),
        ("rows", (4, 13)), ("row_ends", (4, 2)), ("jokers", (4, 13)), ("covered", (4, 2)),
        ("played_by", (n, N_CARDS)), ("jokers_played", (n,)), ("live_counts", (n,)),
        ("killed_counts", (n,)), ("drawn", (n,)), ("lacks", (n, N_CARDS)), ("pile", (1,)),
        ("penalties", (n,)), ("last_penalties", (n,)), ("games_played", (1,)), ("to_move", (n,)),
    ]


OBS = ObsLayout(_obs_shapes, range(2, MAX_PLAYERS + 1))
OBS_C = OBS.affine()  # offsets affine in (n): see _obs_at
(I_HAND_JOKERS, I_KILLED_JOKERS, I_ROW_ENDS, I_JPLAYED, I_LIVE, I_KILLED, I_DRAWN, I_PILE, I_PEN, I_LAST,
 I_GAMES) = OBS.columns(
    "hand_jokers", "killed_jokers", "row_ends", "jokers_played", "live_counts", "killed_counts", "drawn", "pile",
    "penalties", "last_penalties", "games_played")


# ------------------------------------------------------------------------------ kernels
@njit(cache=True, inline="always")
def _obs_at(n, i):
    """First observation entry of piece column i (an I_ constant) for these dimensions: OBS.at's
    value, as folded constants times the dimensions."""
    return OBS_C[0, i] + OBS_C[1, i] * n


@njit(cache=True, _nrt=False)
def _penalty(mask):
    total = 0
    while mask:
        total += PENALTY[lowest_bit(mask)]
        mask &= mask - 1
    return total


@njit(cache=True, _nrt=False)
def _slot_card(s, su, e):
    """Card id of the open position at end e (0 low, 1 high) of row su, -1 if there is none."""
    lo = s[LO + su]
    if lo == 0 or s[COVER + 2 * su + e] >= 0:
        return -1
    if e == 0:
        return su * 13 + lo - 2 if lo > 1 else -1
    hi = s[HI + su]
    return su * 13 + hi if hi < 13 else -1


@njit(cache=True, _nrt=False)
def _playable(s):
    """Mask of the card positions open for play (also the joker slots' targets)."""
    return s[PLAYABLE]


@njit(cache=True, _nrt=False)
def _calc_playable(s):
    """_playable computed from the rows and covers (what the PLAYABLE slot caches)."""
    m = 0
    for su in range(4):
        for e in range(2):
            c = _slot_card(s, su, e)
            if c >= 0:
                m |= 1 << c
    return m


SUIT_CARDS = np.array([((1 << 13) - 1) << (13 * su) for su in range(4)], dtype=np.int64)


@njit(cache=True, _nrt=False)
def _refresh_playable(s, su):
    """Refresh the PLAYABLE cache after row su (its ends or covers) changed: only that suit's
    two open positions can differ from what the cache holds."""
    m = s[PLAYABLE] & ~SUIT_CARDS[su]
    for e in range(2):
        c = _slot_card(s, su, e)
        if c >= 0:
            m |= 1 << c
    s[PLAYABLE] = m


@njit(cache=True, _nrt=False)
def _pending(s):
    """Mask of the targets of unfilled jokers."""
    m = 0
    for i in range(8):
        if s[COVER + i] >= 0:
            m |= 1 << s[COVER + i]
    return m


@njit(cache=True, _nrt=False)
def _lay(s, c, k):
    """Seat k places card c on its row."""
    su = c // 13
    r = c - 13 * su + 1
    if r == 7:
        s[LO + su] = 7
        s[HI + su] = 7
    elif r < 7:
        s[LO + su] = r
        if s[COVER + 2 * su] == c:
            s[COVER + 2 * su] = -1
    else:
        s[HI + su] = r
        if s[COVER + 2 * su + 1] == c:
            s[COVER + 2 * su + 1] = -1
    s[PLAYED_BY + c] = k
    s[PLACED] |= 1 << c
    s[PLAYED_MASK + k] |= 1 << c
    _refresh_playable(s, su)


@njit(cache=True, _nrt=False)
def _deal(s, p, first):
    """Shuffle and deal a new game; the 7s in hand go out; `first` is to act."""
    n = p[P_NP]
    hs = p[P_HAND]
    for k in range(MAX_SEATS):
        s[LIVE + k] = 0
    s[PILE_POS] = shuffle_and_deal(s, H_RNG, s, PILE, N_TILES, LIVE, n, hs)
    s[PILE_END] = N_TILES
    s[OUT] = 0
    _setup(s, p, first)


@njit(cache=True, _nrt=False)
def _setup(s, p, first):
    """Clear the per-game state (hands and pile already set) and put the 7s out (M7-1)."""
    for k in range(MAX_SEATS):
        s[KILLED + k] = 0
        s[JPLAYED + k] = 0
        s[DRAWN + k] = 0
        s[LACK + k] = 0
        s[PLAYED_MASK + k] = 0
    s[PLACED] = 0
    for su in range(4):
        s[LO + su] = 0
        s[HI + su] = 0
    for i in range(8):
        s[COVER + i] = -1
    s[JOKER_AT] = 0
    for c in range(N_CARDS):
        s[PLAYED_BY + c] = -1
    s[NKILL] = 0
    for i in range(N_TILES):
        s[KSEAT + i] = 0
        s[KMASK + i] = 0
    for k in range(p[P_NP]):  # M7-1: every 7 in a hand goes face up at once and starts its row
        sev = s[LIVE + k] & SEVENS_MASK
        s[LIVE + k] &= ~SEVENS_MASK
        while sev:
            _lay(s, lowest_bit(sev), k)
            sev &= sev - 1
    s[PLAYABLE] = _calc_playable(s)
    s[STARTER] = first
    s[H_TURN] = first
    s[H_DONE] = 0


@njit(cache=True, _nrt=False)
def _end_game(s, p, out_seat):
    """Score the game (out_seat: who went out, -1 if nobody did); deal the next or finish."""
    n = p[P_NP]
    tot = 0
    for k in range(n):  # Table-1 penalties of every tile left in hand, killed ones included
        pk = _penalty(s[LIVE + k] | s[KILLED + k])
        s[LAST_PEN + k] = pk
        s[PEN_TOTAL + k] += pk
        tot += pk
    for k in range(n):
        s[H_REWARD + k] += tot - n * s[LAST_PEN + k]
    s[WENT_OUT] = out_seat
    s[H_HAND] += 1
    if s[H_HAND] >= p[P_GAMES]:
        s[H_DONE] = 1
        s[H_TURN] = -1
        return
    first = out_seat  # M7-7: the seat that went out starts the next game
    if first < 0:  # M7-7: lowest penalty, ties to the first in turn order from the starter
        best = 1 << 30
        k = s[STARTER]
        for i in range(n):
            if i > 0:
                k = k + 1 if k + 1 < n else 0
            if s[LAST_PEN + k] < best:
                best = s[LAST_PEN + k]
                first = k
    _deal(s, p, first)


# Legality, written once: _legal_words is the only statement of what the seat to act may do;
# _is_legal (the step's check), _count_legal (forced moves, sampling) and _mask_kernel read it.
# An action a < A_KILL is bit a of the first word, a >= A_KILL bit a - A_KILL of the second.
LOW_TARGETS = (1 << 6) - 1  # within a suit's 13 bits: ranks A..6, the low end's open positions
HIGH_TARGETS = LOW_TARGETS << 7  # ranks 8..K, the high end's


@njit(cache=True, inline="always")
def _joker_slots(pm):
    """Bit 2 * suit + end of every joker slot that exists, read off the open positions `pm`
    (_playable: each open row end has exactly one, below 7 for the low end, above for the high)."""
    m = 0
    for su in range(4):
        r = pm >> (13 * su)
        if r & LOW_TARGETS:
            m |= 1 << (2 * su)
        if r & HIGH_TARGETS:
            m |= 2 << (2 * su)
    return m


@njit(cache=True, inline="always")
def _legal_words(s):
    """The legal actions of the seat to act (episode running) as two bitmasks (lo, hi): bit a of
    lo for actions 0..60 (play a card, a joker slot, draw), bit a - A_KILL of hi for 61..114
    (kill a card, kill a joker, pass)."""
    h = s[LIVE + s[H_TURN]]
    if h == 0:
        return 0, 1 << (A_PASS - A_KILL)  # pass: only with no live tiles (always forced)
    pm = _playable(s)
    # M7-3: jokers never count as playable (pm holds card positions only, never a joker's bit)
    can = h & pm
    lo = can
    # M7-5: a joker may be played whenever its slot exists, whatever else the seat could do
    if h & JOKER_MASK:
        lo |= _joker_slots(pm) << A_JOKER
    if can != 0:
        return lo, 0
    # M7-6: draw only with no playable card and a non-empty pile
    if s[PILE_POS] < s[PILE_END]:
        return lo | (1 << A_DRAW), 0
    # M7-9: no playable card and an empty pile: kill one live tile ("kill a joker" is one action)
    hi = h & CARD_MASK
    if h & JOKER_MASK:
        hi |= 1 << (A_KILL_JOKER - A_KILL)
    return lo, hi


@njit(cache=True, inline="always")
def _count_legal(s, p):
    """(number of legal actions, the action if exactly one) for the seat to act (_legal_words)."""
    lo, hi = _legal_words(s)
    c = popcount(lo) + popcount(hi)
    if c != 1:
        return c, -1
    return 1, (lowest_bit(lo) if lo != 0 else A_KILL + lowest_bit(hi))


@njit(cache=True, inline="always")
def _is_legal(s, p, a):
    """Whether action a (0..NUM_ACTIONS-1) is legal for the seat to act (_legal_words)."""
    lo, hi = _legal_words(s)
    if a < A_KILL:
        return (lo >> a) & 1 == 1
    return (hi >> (a - A_KILL)) & 1 == 1


@njit(cache=True, inline="always")
def _finish_turn(s, p, seat):
    """After seat's turn: end the game if someone is out or no live tile is left, else pass on."""
    n = p[P_NP]
    # M7-8: the game ends at once when a seat holds no tiles at all (it went out), else when no
    # seat holds a live tile; play passes to seat (i+1) mod n (M7-1)
    if (s[LIVE + seat] | s[KILLED + seat]) == 0:
        _end_game(s, p, seat)
        return
    anyone = False
    for k in range(n):
        if s[LIVE + k] != 0:
            anyone = True
    if not anyone:
        _end_game(s, p, -1)
        return
    s[H_TURN] = seat + 1 if seat + 1 < n else 0


@njit(cache=True, inline="always")
def _apply(s, p, a):
    """Carry out legal action a of the seat to act (turn passing and game end included)."""
    seat = s[H_TURN]
    n = p[P_NP]
    if a < N_CARDS:
        s[LIVE + seat] &= ~(1 << a)
        _lay(s, a, seat)
    elif a < A_DRAW:
        su = (a - A_JOKER) >> 1
        e = (a - A_JOKER) & 1
        c = _slot_card(s, su, e)
        jk = JOKER0 if (s[LIVE + seat] >> JOKER0) & 1 else JOKER1
        s[LIVE + seat] &= ~(1 << jk)
        s[JOKER_AT] |= 1 << c
        s[JPLAYED + seat] += 1
        holder = -1
        for k in range(n):
            if (s[LIVE + k] >> c) & 1:
                holder = k
        if holder >= 0:  # M7-4: placed at once, out of turn
            s[LIVE + holder] &= ~(1 << c)
            _lay(s, c, holder)
        else:  # M7-4: in the pile (pending) or killed (wasted): the end is covered
            s[COVER + 2 * su + e] = c
            _refresh_playable(s, su)
        # M7-5: a joker that was its player's last tile: that player went out (the move completes
        # first); M7-8: a holder whose last tile was the target went out
        if (s[LIVE + seat] | s[KILLED + seat]) != 0 and holder >= 0 and (s[LIVE + holder] | s[KILLED + holder]) == 0:
            _end_game(s, p, holder)
            return
    elif a == A_DRAW:
        pm = _playable(s)
        t = s[PILE + s[PILE_POS]]
        s[PILE_POS] += 1
        s[DRAWN + seat] += 1
        if t < N_CARDS and ((SEVENS_MASK >> t) & 1 == 1 or ((pm >> t) & 1) == 1 or ((_pending(s) >> t) & 1) == 1):
            _lay(s, t, seat)  # M7-6: a playable draw, a 7 (M7-1) or a joker's target goes out at once
            s[LACK + seat] |= pm
        else:
            s[LIVE + seat] |= 1 << t
            s[LACK + seat] = pm  # the kept tile is unseen: earlier lacks no longer hold
    elif a < A_PASS:  # M7-9: the killed tile stays in the hand for scoring, dead for good
        if a == A_KILL_JOKER:
            t = JOKER0 if (s[LIVE + seat] >> JOKER0) & 1 else JOKER1
        else:
            t = a - A_KILL
        s[LIVE + seat] &= ~(1 << t)
        s[KILLED + seat] |= 1 << t
        s[LACK + seat] |= _playable(s)
        i = s[NKILL]
        s[KSEAT + i] = seat
        s[KMASK + i] = s[LACK + seat] | _pending(s) | SEVENS_MASK
        s[NKILL] = i + 1
    _finish_turn(s, p, seat)


@njit(cache=True, inline="always")
def _advance(s, p):
    """Take every lone legal action (forced passes, draws, kills, plays) until a real decision."""
    while s[H_DONE] == 0:
        c, a = _count_legal(s, p)
        if c != 1:
            return
        _apply(s, p, a)


@njit(cache=True, _nrt=False)
def _reset_kernel(s, seed, p):
    for i in range(s.shape[0]):
        s[i] = 0
    s[H_RNG] = seed
    s[WENT_OUT] = -1
    # M7-7: the starter of game 1 is random (seeded) unless first_seat fixes it
    first = p[P_FIRST] if p[P_FIRST] >= 0 else rng_below(s, H_RNG, p[P_NP])
    _deal(s, p, first)
    _advance(s, p)


@njit(cache=True, inline="always")
def _step_kernel(s, a, p):
    return step_kernel(s, a, p, NUM_ACTIONS, _is_legal, _apply, _advance)


@njit(cache=True, inline="always")
def _mask_kernel(s, p, out):
    """The legal actions (_legal_words) as an int8 mask; zeros once over."""
    out[:] = 0
    if s[H_DONE] == 1:
        return
    lo, hi = _legal_words(s)
    while lo:
        out[lowest_bit(lo)] = 1
        lo &= lo - 1
    while hi:
        out[A_KILL + lowest_bit(hi)] = 1
        hi &= hi - 1


@njit(cache=True)
def _legal_set_kernel(s, p, out):
    """Legality action by action through the step's own check. Here the step and the mask read
    the same _legal_words, so tests/games/test_magic7_legality.py checks it against the rules."""
    legal_set(s, p, out, NUM_ACTIONS, _is_legal)


@njit(cache=True)
def _check_code(s, p):
    """0 if fine, else the number of the broken check. Tile conservation (hands, kills, pile, rows,
    jokers, out of play partition the 54 tiles)
    and the row, joker, lack and turn invariants."""
    n = p[P_NP]
    seen = 0
    for k in range(MAX_SEATS):
        lv = s[LIVE + k]
        kd = s[KILLED + k]
        if k >= n:
            if lv != 0 or kd != 0:
                return 1
            continue
        if lv < 0 or kd < 0 or ((lv | kd) >> N_TILES) != 0:
            return 2
        if (lv & kd) or (seen & (lv | kd)):
            return 3
        if (lv | kd) & SEVENS_MASK:
            return 4  # M7-1: a 7 is never held
        if lv & s[LACK + k]:
            return 5
        seen |= lv | kd
    pos = s[PILE_POS]
    end = s[PILE_END]
    if pos < 0 or pos > end or end > N_TILES:
        return 6
    for i in range(pos, end):
        t = s[PILE + i]
        if t < 0 or t >= N_TILES or (seen >> t) & 1:
            return 7
        seen |= 1 << t
    if pos < end:
        for k in range(n):
            if s[KILLED + k] != 0:
                return 8  # kills only happen with an empty pile
    if seen & s[OUT]:
        return 9
    seen |= s[OUT]
    placed = 0
    for su in range(4):
        lo = s[LO + su]
        hi = s[HI + su]
        if lo == 0:
            if hi != 0:
                return 10
        elif not (1 <= lo <= 7 and 7 <= hi <= 13):
            return 11
        for r in range(1, 14):
            c = su * 13 + r - 1
            inrow = lo != 0 and lo <= r <= hi
            if inrow != (s[PLAYED_BY + c] >= 0):
                return 12
            if inrow:
                placed |= 1 << c
    if seen & placed:
        return 13
    seen |= placed
    pend = _pending(s)
    if s[JOKER_AT] & ~(placed | pend):
        return 14
    for su in range(4):
        for e in range(2):
            c = s[COVER + 2 * su + e]
            if c < 0:
                continue
            if c // 13 != su or ((s[JOKER_AT] >> c) & 1) == 0:
                return 15
            r = c % 13 + 1
            if (e == 0 and r != s[LO + su] - 1) or (e == 1 and r != s[HI + su] + 1):
                return 16
            for k in range(n):
                if (s[LIVE + k] >> c) & 1:
                    return 17
    jokers_away = popcount(JOKER_MASK & ~seen)
    if jokers_away != popcount(s[JOKER_AT]):
        return 18
    seen |= JOKER_MASK
    if seen != ALL_MASK:
        return 19
    nk = 0
    for k in range(n):
        kc = 0
        for i in range(s[NKILL]):
            if s[KSEAT + i] == k:
                kc += 1
        if kc != popcount(s[KILLED + k]):
            return 20
        nk += kc
    if nk != s[NKILL]:
        return 21
    if s[PLAYABLE] != _calc_playable(s):
        return 24
    placed_by = 0
    for k in range(MAX_SEATS):
        if s[PLAYED_MASK + k] & placed_by:
            return 25
        placed_by |= s[PLAYED_MASK + k]
    if placed_by != placed or s[PLACED] != placed:
        return 25
    if s[H_DONE] == 0 and not (0 <= s[H_TURN] < n):
        return 22
    if s[H_DONE] == 1 and s[H_TURN] != -1:
        return 23
    return 0


@njit(cache=True)
def _check_kernel(s, p):
    """Tile conservation and state invariants (see _check_code)."""
    return _check_code(s, p) == 0


@njit(cache=True, inline="always")
def _obs_kernel(s, p, v, out):
    """One bit stream (tiles.stream_bits) in layout order, zero bits left for the counts and
    other values, which are written after it."""
    n = p[P_NP]
    h = s[LIVE + v]
    kd = s[KILLED + v]
    placed = s[PLACED]
    cov = 0
    for i in range(8):
        if s[COVER + i] >= 0:
            cov |= 1 << i
    st = stream_bits((0, 0, 0), h & CARD_MASK, N_CARDS + 1, out)  # hand, hand_jokers
    st = stream_bits(st, kd & CARD_MASK, N_CARDS + 1, out)  # killed, killed_jokers
    st = stream_bits(st, placed, N_CARDS + 8, out)  # rows, row_ends
    st = stream_bits(st, s[JOKER_AT] | (cov << N_CARDS), N_CARDS + 8, out)  # jokers, covered
    for r in range(n):
        st = stream_bits(st, s[PLAYED_MASK + (v + r if v + r < n else v + r - n)], N_CARDS, out)
    st = stream_bits(st, 0, 4 * n, out)  # jokers_played, live_counts, killed_counts, drawn
    unplaced = CARD_MASK & ~placed
    for r in range(n):
        st = stream_bits(st, s[LACK + (v + r if v + r < n else v + r - n)] & unplaced, N_CARDS, out)
    to_move = 0
    if s[H_DONE] == 0:
        t = s[H_TURN] - v
        to_move = 1 << (t if t >= 0 else t + n)
    # pile, penalties, last_penalties, games_played (zeros), to_move
    stream_end(stream_bits(st, to_move << (2 * n + 2), 3 * n + 2, out), out)
    out[_obs_at(n, I_HAND_JOKERS)] = popcount(h & JOKER_MASK)
    out[_obs_at(n, I_KILLED_JOKERS)] = popcount(kd & JOKER_MASK)
    o_ends = _obs_at(n, I_ROW_ENDS)
    for su in range(4):
        out[o_ends + 2 * su] = s[LO + su]
        out[o_ends + 1 + 2 * su] = s[HI + su]
    o_jplayed = _obs_at(n, I_JPLAYED)
    o_live = _obs_at(n, I_LIVE)
    o_killed = _obs_at(n, I_KILLED)
    o_drawn = _obs_at(n, I_DRAWN)
    o_pen = _obs_at(n, I_PEN)
    o_last = _obs_at(n, I_LAST)
    out[np.uint64(_obs_at(n, I_PILE))] = s[PILE_END] - s[PILE_POS]
    out[np.uint64(_obs_at(n, I_GAMES))] = s[H_HAND]
    for r in range(n):
        j = v + r if v + r < n else v + r - n
        out[np.uint64(o_jplayed + r)] = s[JPLAYED + j]
        out[np.uint64(o_live + r)] = popcount(s[LIVE + j])
        out[np.uint64(o_killed + r)] = popcount(s[KILLED + j])
        out[np.uint64(o_drawn + r)] = s[DRAWN + j]
        out[np.uint64(o_pen + r)] = s[PEN_TOTAL + j]
        out[np.uint64(o_last + r)] = s[LAST_PEN + j]


@njit(cache=True)
def _sample_kernel(s, p, v, seed):
    """Redeal what seat v cannot see: opponents' live and killed tiles and the pile.

    Constraints (all public): live counts, killed counts, pile size; a live hand holds none of its
    seat's `lacks`, no 7 and no unfilled joker's target; the i-th killed tile avoids the mask
    recorded at that kill (its seat's lacks then, the pending targets then, the 7s); an opponent
    to act has at least two legal actions (rejection). Jokers are relabelled canonically (they are
    alike): v's live ones take the lowest free ids, then v's killed ones, then the unseen ones."""
    n = p[P_NP]
    ns = s.copy()
    rng_arr = np.empty(1, dtype=np.int64)
    rng_arr[0] = seed
    placed = s[PLACED]
    # jokers, canonically
    free_j = JOKER_MASK & ~s[OUT]
    unseen_j = 0
    for k in range(n):
        if k != v:
            unseen_j += popcount((s[LIVE + k] | s[KILLED + k]) & JOKER_MASK)
    for i in range(s[PILE_POS], s[PILE_END]):
        if s[PILE + i] >= N_CARDS:
            unseen_j += 1
    vl = popcount(s[LIVE + v] & JOKER_MASK)
    vk = popcount(s[KILLED + v] & JOKER_MASK)
    ids = np.empty(2, dtype=np.int64)
    nid = 0
    m = free_j
    while m:
        ids[nid] = lowest_bit(m)
        nid += 1
        m &= m - 1
    vlive = s[LIVE + v] & ~JOKER_MASK
    vkill = s[KILLED + v] & ~JOKER_MASK
    j = 0
    for _ in range(vl):
        vlive |= 1 << ids[j]
        j += 1
    for _ in range(vk):
        vkill |= 1 << ids[j]
        j += 1
    unseen = CARD_MASK & ~placed & ~s[OUT] & ~s[LIVE + v] & ~s[KILLED + v]
    for _ in range(unseen_j):
        unseen |= 1 << ids[j]
        j += 1
    tiles = np.empty(N_TILES, dtype=np.int64)
    nt = 0
    m = unseen
    while m:
        tiles[nt] = lowest_bit(m)
        nt += 1
        m &= m - 1
    # groups: live hands 0..n-1, one per opponent kill, the pile last
    nkill = s[NKILL]
    ng = n + nkill + 1
    allowed = np.zeros(ng, dtype=np.int64)
    cap = np.zeros(ng, dtype=np.int64)
    gseat = np.full(ng, -1, dtype=np.int64)
    banned = _pending(s) | SEVENS_MASK
    for k in range(n):
        if k != v:
            allowed[k] = unseen & ~s[LACK + k] & ~banned
            cap[k] = popcount(s[LIVE + k])
    g = n
    for i in range(nkill):
        if s[KSEAT + i] != v:
            allowed[g] = unseen & ~s[KMASK + i]
            cap[g] = 1
            gseat[g] = s[KSEAT + i]
            g += 1
    pile_g = g
    ng = g + 1
    allowed[pile_g] = unseen
    cap[pile_g] = s[PILE_END] - s[PILE_POS]
    mover = s[H_TURN]
    pile_tiles = np.empty(N_TILES, dtype=np.int64)
    # fails closed: an empty row if no consistent redeal exists (sampling.py), never the true state
    dealt = False
    for _attempt in range(20_000):
        assign = deal_consistent(tiles, nt, allowed, cap, ng, rng_arr)
        if nt > 0 and assign[0] < 0:
            break  # deal_consistent is exact: no consistent deal exists
        dealt = True
        for k in range(n):
            ns[LIVE + k] = 0
            ns[KILLED + k] = 0
        ns[LIVE + v] = vlive
        ns[KILLED + v] = vkill
        npile = 0
        for i in range(nt):
            gi = assign[i]
            t = tiles[i]
            if gi < n:
                ns[LIVE + gi] |= 1 << t
            elif gi == pile_g:
                pile_tiles[npile] = t
                npile += 1
            else:
                ns[KILLED + gseat[gi]] |= 1 << t
        rng_shuffle(rng_arr, 0, pile_tiles, npile)
        for i in range(s[PILE_POS]):
            ns[PILE + i] = -1  # dealt or drawn: not part of what the seat may know
        for i in range(npile):
            ns[PILE + s[PILE_POS] + i] = pile_tiles[i]
        for i in range(s[PILE_END], N_TILES):
            ns[PILE + i] = -1
        if s[H_DONE] == 1 or mover == v:
            break
        c, _a = _count_legal(ns, p)
        if c >= 2:  # an opponent stopped at a decision visibly has a choice
            break
    if not dealt:
        return np.empty(0, dtype=np.int64)
    ns[H_RNG] = rng_arr[0]
    return ns


# ------------------------------------------------------------------------------ Python side
def card_id(name) -> int:
    """Tile id of a card name ('AC', '10H', 'QS', 'JK' = the first joker) or an int id 0..53."""
    if isinstance(name, (int, np.integer)) and not isinstance(name, (bool, np.bool_)):
        if 0 <= int(name) < N_TILES:
            return int(name)
        raise ValueError(f"tile id {name!r} is outside 0..{N_TILES - 1}")
    if not isinstance(name, str):
        raise ValueError(f"{name!r} is not a card name like 'AC', '10H', 'QS' or 'JK'")
    u = name.strip().upper()
    if u in ("JK", "JOKER"):
        return JOKER0
    if len(u) >= 2 and u[-1] in SUITS and u[:-1] in RANKS:
        return SUITS.index(u[-1]) * 13 + RANKS.index(u[:-1])
    raise ValueError(f"{name!r} is not a card name like 'AC', '10H', 'QS' or 'JK'")


def tile_name(t: int) -> str:
    """'7H', 'AS', 'JK' ..."""
    t = int(t)
    if t >= N_CARDS:
        return "JK"
    return RANKS[t % 13] + SUITS[t // 13]


def _mask_names(mask: int) -> list[str]:
    return [tile_name(t) for t in range(N_TILES) if (int(mask) >> t) & 1]


# heuristic: domino_agents.heuristic_magic7.Magic7Heuristic
class Magic7Game(Game, kernels=globals(), facts=Facts(Magic7Config, ROW, "magic7.md", "M7", "magic7", "first_seat")):
    """Magic-7 engine bound to one config (see the module docstring for rules and encodings)."""

    num_actions = NUM_ACTIONS

    def __init__(self, config: Magic7Config, name: str = "magic7_v0"):
        c = config
        self.num_players = c.num_players
        self.reward_scale = float(c.num_players)  # integer units: sum(pen) - n * pen_k
        self.params = np.array(
            [c.num_players, DEAL_TABLE[c.num_players], c.num_games,
             -1 if c.first_seat is None else c.first_seat],
            dtype=np.int64,
        )
        super().__init__(config, name)

    def obs_pieces(self):
        return OBS.pieces(self.num_players)

    def obs_high(self) -> float:
        # all 54 tiles but the 7s are worth 4 * (91 - 7) + 40 = 376 penalty points
        return float(max(376 * self.config.num_games, 100))

    def max_decisions(self) -> int:
        # per game: <= 48 card plays + 54 draws + 54 kills + 2 jokers (passes are forced)
        return 160 * self.config.num_games

    # ---- actions
    def encode_action(self, kind: str, what=None, end=None) -> int:
        """Action id: ("play", card), ("joker", suit, "low"|"high"|0|1), ("draw",),
        ("kill", card or "JK"), ("pass",). Cards by name ('9H') or id."""
        if kind == "play":
            c = card_id(what)
            if c >= N_CARDS:
                raise ValueError(f"{self.name}: a joker is not played as a card; use ('joker', suit, end)")
            return c
        if kind == "joker":
            su = SUITS.index(what.upper()) if isinstance(what, str) and what.upper() in SUITS else what
            if not isinstance(su, (int, np.integer)) or not 0 <= su < 4:
                raise ValueError(f"{self.name}: joker suit {what!r} must be one of {list(SUITS)} or 0..3")
            e = {"low": 0, "high": 1, 0: 0, 1: 1}.get(end)
            if e is None:
                raise ValueError(f"{self.name}: joker end {end!r} must be 'low', 'high', 0 or 1")
            return A_JOKER + 2 * int(su) + e
        if kind == "draw":
            return A_DRAW
        if kind == "kill":
            c = card_id(what)
            return A_KILL_JOKER if c >= N_CARDS else A_KILL + c
        if kind == "pass":
            return A_PASS
        raise ValueError(f"{self.name}: action kind {kind!r} must be one of ['play', 'joker', 'draw', 'kill', 'pass']")

    def describe_action(self, action: int) -> str:
        a = int(action)
        if not 0 <= a < NUM_ACTIONS:
            return f"out of range (0..{NUM_ACTIONS - 1})"
        if a < N_CARDS:
            return f"play {tile_name(a)}"
        if a < A_DRAW:
            su, e = divmod(a - A_JOKER, 2)
            return f"joker on the {'low' if e == 0 else 'high'} end of {SUIT_NAMES[su]}"
        if a == A_DRAW:
            return "draw"
        if a < A_KILL_JOKER:
            return f"kill {tile_name(a - A_KILL)}"
        if a == A_KILL_JOKER:
            return "kill a joker"
        return "pass"

    def action_table(self) -> ActionTable:
        """Play a card (0..51), a joker on a slot (52..59), draw (60), kill a card (61..112) or a
        joker (113), pass (114); a card or joker sheds its Table-1 penalty (core.Game.action_table)."""
        kind, tile, arm, weight = empty_columns(NUM_ACTIONS)
        penalty = PENALTY[:JOKER0 + 1].astype(np.float64)  # card ids, then 52: a joker (either)
        tile[:N_CARDS] = np.arange(N_CARDS)
        weight[:N_CARDS] = penalty[:N_CARDS]
        kind[A_JOKER:A_DRAW] = JOKER
        tile[A_JOKER:A_DRAW] = JOKER0
        arm[A_JOKER:A_DRAW] = np.arange(A_DRAW - A_JOKER)  # 2 * suit + end
        weight[A_JOKER:A_DRAW] = penalty[JOKER0]
        kind[A_DRAW] = DRAW
        kind[A_KILL:A_PASS] = KILL
        tile[A_KILL:A_PASS] = np.arange(N_CARDS + 1)  # the cards, then A_KILL_JOKER: a joker
        kind[A_PASS] = PASS
        return ActionTable("magic7", 0, kind, tile, arm, weight, penalty)

    # ---- pictures (core.Game.describe_table)
    def describe_table(self, state: np.ndarray, table: Table, face_up: list[bool]) -> None:
        s = state
        pen = self.penalties(s)
        for k, seat in enumerate(table.seats):
            live = [card_id(c) for c in self.hand(s, k)]  # a joker is 'JK' (id 52: both jokers look alike)
            dead = [card_id(c) for c in self.killed(s, k)]
            seat.count, seat.killed = len(live), len(dead)
            seat.lines.append(f"penalty {pen[k]}")
            if face_up[k]:
                seat.tiles, seat.killed_tiles = live, dead
        table.info += [f"game {hand_number(s)}/{self.config.num_games}", f"pile {len(self.pile(s))}"]
        waiting = {}
        for (suit, end), target in self.covered(s).items():
            waiting[(SUITS.index(suit), 0 if end == "low" else 1)] = card_id(target)
        table.play = RowsPlay(self.rows(s), {card_id(c) for c in self.joker_cards(s)}, waiting)

    # ---- deals
    def set_deal(self, state: np.ndarray, deal: dict) -> None:
        """Start a new episode from a given deal (module docstring, "Deal format")."""
        self._check_row(state)
        hands, stock, first = self._deal_parts(deal, first=self.config.first_seat or 0)
        seen: set[int] = set()

        def ids(seq, where):
            out = []
            for name in seq:
                try:
                    t = card_id(name)
                except ValueError as err:
                    raise DealError(f"{self.name}: {where}: {err}") from None
                if t == JOKER0 and t in seen and isinstance(name, str):
                    t = JOKER1  # the second 'JK'
                if t in seen:
                    raise DealError(f"{self.name}: {where}: {name!r} is dealt twice")
                seen.add(t)
                out.append(t)
            return out

        hand_ids = [ids(h, f"hand {k}") for k, h in enumerate(hands)]
        for k, h in enumerate(hand_ids):
            if not any(t % 13 != 6 or t >= N_CARDS for t in h):
                raise DealError(f"{self.name}: hand {k} needs at least one tile besides 7s")
        stock_ids = ids(stock, "stock")
        s = state
        self._fresh_row(s)
        s[WENT_OUT] = -1
        order = [t for h in hand_ids for t in h] + stock_ids
        s[PILE:PILE + N_TILES] = -1
        s[PILE:PILE + len(order)] = order
        s[PILE_POS] = sum(len(h) for h in hand_ids)
        s[PILE_END] = len(order)
        for k in range(self.num_players):
            s[LIVE + k] = sum(1 << t for t in hand_ids[k])
        s[OUT] = ALL_MASK & ~sum(1 << t for t in seen)
        _setup(s, self.params, first)
        _advance(s, self.params)

    def deal_of(self, state: np.ndarray) -> dict:
        """The deal of the game in play, in the format `set_deal` takes: what was dealt, read from
        the pile slots (which keep the deal order all game) and each seat's live, killed and placed
        cards (the 7s that went out at once included) plus the jokers it played; the stock is the
        pile in draw order. Cards by name, jokers by id (52, 53: two 'JK' names would give the first
        joker to whichever hand comes first). `set_deal` of it on a fresh row gives the same
        decision (for a later game of a match: the same cards, the penalty totals are no part of a
        deal)."""
        self._check_state(state)
        s, n = state, self.num_players
        pile = s[PILE:PILE + N_TILES]
        dealt_end = int(s[PILE_POS]) - int(s[DRAWN:DRAWN + n].sum())
        dealt = [int(t) for t in self._dealt(pile, dealt_end, int(s[PILE_POS]), N_TILES)]
        owned = [int(s[LIVE + k] | s[KILLED + k] | s[PLAYED_MASK + k]) for k in range(n)]
        hands = [[t for t in dealt if (owned[k] >> t) & 1] for k in range(n)]
        played_jokers = [t for t in dealt if t >= N_CARDS and not any((m >> t) & 1 for m in owned)]
        for k in range(n):  # a played joker is in no mask: JPLAYED counts them per seat
            for _ in range(int(s[JPLAYED + k])):
                if played_jokers:
                    hands[k].append(played_jokers.pop(0))

        def names(ids):
            return [int(t) if t >= N_CARDS else tile_name(t) for t in sorted(ids)]

        stock = [int(t) for t in pile[dealt_end:s[PILE_END]]]
        return {"hands": [names(h) for h in hands], "stock": [t if t >= N_CARDS else tile_name(t) for t in stock],
                "first": int(s[STARTER])}

    # ---- validate (core.Game.validate: the ranges of `slots`, then these)
    def _validate_more(self, state):
        s = state
        problem = None
        if not s[PILE_POS] <= s[PILE_END]:
            problem = f"pile position {int(s[PILE_POS])} is past the pile end {int(s[PILE_END])}"
        elif np.any(s[PILE + s[PILE_POS]:PILE + s[PILE_END]] < 0):
            problem = "the pile holds an empty slot (-1) between its position and its end"
        if problem:
            self._refuse(problem)
        n = self.num_players
        drawn = int(s[DRAWN:DRAWN + n].sum())
        if drawn > s[PILE_POS]:
            self._refuse(f"drawn counts (slots {DRAWN}..{DRAWN + n - 1}) add up to {drawn}; allowed: at most the "
                         f"{int(s[PILE_POS])} tiles dealt and drawn from the pile (M7-6)")
        jokers = int(s[JPLAYED:JPLAYED + n].sum())
        if jokers != popcount(int(s[JOKER_AT])) or s[JPLAYED + n:JPLAYED + MAX_SEATS].any():
            self._refuse(f"jokers played (slots {JPLAYED}..{JPLAYED + MAX_SEATS - 1}) add up to {jokers}, but "
                         f"{popcount(int(s[JOKER_AT]))} jokers lie in the rows (joker at, slot {JOKER_AT}; M7-5)")
        if s[H_DONE] == 0 and _check_code(s, self.params) == 0 and _count_legal(s, self.params)[0] < 2:
            self._refuse(f"seat {int(s[H_TURN])} to act has no real decision (one legal action): the engine takes "
                         f"forced steps itself")

    # ---- inspection helpers (tests, rendering)
    def hand(self, state, seat) -> list[str]:
        return _mask_names(state[LIVE + seat])

    def killed(self, state, seat) -> list[str]:
        return _mask_names(state[KILLED + seat])

    def pile(self, state) -> list[str]:
        return [tile_name(t) for t in state[PILE + state[PILE_POS]:PILE + state[PILE_END]]]

    def rows(self, state) -> list[tuple[int, int]]:
        """(lowest, highest) rank of each suit's row, (0, 0) while its 7 is not out."""
        return [(int(state[LO + su]), int(state[HI + su])) for su in range(4)]

    def covered(self, state) -> dict[tuple[str, str], str]:
        """{(suit letter, 'low'|'high'): target card} of the ends covered by unfilled jokers."""
        out = {}
        for i in range(8):
            if state[COVER + i] >= 0:
                out[(SUITS[i // 2], "low" if i % 2 == 0 else "high")] = tile_name(state[COVER + i])
        return out

    def played_by(self, state, card) -> int:
        return int(state[PLAYED_BY + card_id(card)])

    def penalties(self, state) -> list[int]:
        """Match penalty totals."""
        return [int(x) for x in state[PEN_TOTAL:PEN_TOTAL + self.num_players]]

    def last_penalties(self, state) -> list[int]:
        return [int(x) for x in state[LAST_PEN:LAST_PEN + self.num_players]]

    def joker_cards(self, state) -> list[str]:
        """Cards lying on a joker in the rows (the joker's target placed on it), for pictures."""
        return _mask_names(state[JOKER_AT])

    def render(self, state: np.ndarray, seat: int) -> str:
        s = state
        n = self.num_players
        game_no = int(s[H_HAND]) + (0 if s[H_DONE] else 1)
        lines = [f"{self.name}  game {game_no}/{self.config.num_games}  pile {int(s[PILE_END] - s[PILE_POS])}  "
                 f"penalties {self.penalties(s)}"]
        for su in range(4):
            lo, hi = int(s[LO + su]), int(s[HI + su])
            if lo == 0:
                lines.append(f"{SUIT_NAMES[su]:>8}: (7 not out)")
                continue
            cells = []
            if s[COVER + 2 * su] >= 0:
                cells.append(f"[JK>{tile_name(s[COVER + 2 * su])}]")
            for r in range(lo, hi + 1):
                c = su * 13 + r - 1
                cells.append(RANKS[r - 1] + ("*" if (int(s[JOKER_AT]) >> c) & 1 else ""))
            if s[COVER + 2 * su + 1] >= 0:
                cells.append(f"[JK>{tile_name(s[COVER + 2 * su + 1])}]")
            lines.append(f"{SUIT_NAMES[su]:>8}: " + " ".join(cells))
        lines.append("  (* = card lying on a joker; [JK>x] = joker waiting for x, which is in the pile or killed)")
        for k in range(n):
            mark = " <- to move" if (not s[H_DONE] and s[H_TURN] == k) else ""
            lines.append(f"seat {k}: {popcount(s[LIVE + k])} live, {popcount(s[KILLED + k])} killed, "
                         f"drew {int(s[DRAWN + k])}, jokers played {int(s[JPLAYED + k])}{mark}")
        h = int(s[LIVE + seat])
        parts = []
        for su in range(4):
            cards = [RANKS[r] for r in range(13) if (h >> (su * 13 + r)) & 1]
            parts.append(f"{SUITS[su]}: {' '.join(cards) if cards else '-'}")
        nj = popcount(h & JOKER_MASK)
        lines.append(f"seat {seat} holds: " + " | ".join(parts) + (f" | jokers: {nj}" if nj else ""))
        if s[KILLED + seat]:
            lines.append(f"seat {seat} killed: {' '.join(self.killed(s, seat))}")
        if s[H_DONE]:
            w = int(s[WENT_OUT])
            lines.append(("over: " + (f"seat {w} went out" if w >= 0 else "nobody went out"))
                         + f"; last game's penalties {self.last_penalties(s)}")
        return "\n".join(lines)


__all__ = ["Magic7Config", "Magic7Game", "card_id", "tile_name"]
