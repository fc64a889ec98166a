"""Seven-Toed Pete (`seven_toed_pete_v0`): the chips game of the Fives family.

The full text - every rule and its ruling, the config, actions, observation, rewards, deals - is
docs/games/seven_toed_pete.md (rules-spec section 2, seed 001, pagat's East-Coast version). This
docstring is its summary, which tests/docs/test_docs.py keeps in step with it.

Rules in brief (P-2..P-5 are the spec's ids, P-1, P-6, P-7 this engine's):
- Double-six, exactly 4 players, 7 tiles each: everything is dealt, nobody draws, a seat that
  cannot play passes. P-5 the designated leader (random in hand 1, or ``first_leader``; then one
  seat on each hand) must lead a double or a scoring tile, else the duty passes on (public).
- The first double played is the only spinner: its branches (arms 2, 3) open once both its sides
  are covered. The count is the sum of the open ends; P-1 a lone lead counts all its pips.
- P-3 a placement after which the count is a positive multiple of 5 gives another turn, again and
  again; P-2 with ``double_extra_turn`` a double does too (once). P-6 an extra turn that cannot be
  used is an ordinary pass.
- P-4 a seat that places its last tile has dominoed and leaves the turn order; the hand ends when
  nobody holding tiles can play. P-7 each dominoed seat takes a chip (nobody: the lowest pip
  totals); ``match=True`` plays to ``chips_to_win``. Rewards: chips won minus the table's average.
- Forced steps (passes, the duty passing on, a lone legal action) are the engine's.

Actions: ``Discrete(28 * 4)``, action ``tile * 4 + arm`` (tile ids: tiles.py):
    arm 0   left end of the line (the lead too)
    arm 1   right end of the line
    arm 2   the spinner's "up" branch
    arm 3   the spinner's "down" branch

Observation (float32, seat-relative; the same sizes for every config):
    hand          (28,)      my tiles
    played_by     (4, 28)    the tiles seat r placed
    arm_ends      (4, 7)     pip at each open arm's end
    arm_tiles     (4,)       tiles on each arm
    arm_double    (4,)       an open arm ends in a crosswise double
    spinner       (7,)       pip of the spinner
    branches_open (1,)       both spinner sides covered
    count         (1,)       the count
    hand_sizes    (4,)       tiles held
    voids         (4, 7)     numbers seat r showed it lacks
    no_lead       (4,)       seat r passed the lead duty
    dominoed      (4,)       seat r played its last tile
    chips         (4,)       chips won
    leader        (4,)       seat that led (or holds the duty)
    to_move       (4,)       seat to act
    extra_turn    (1,)       the seat to act plays an extra turn

Deal format (``set_deal``; the page's "Deals"): ``{"hands": [[(a, b), ...] x 4], "first":
designated leader, "chips": [4 ints]}``.
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
    H_TURN,
    HEADER,
    ConfigError,
    DealError,
    Facts,
    Game,
    check_bool,
    check_int,
    deal_tile_ids,
    is_int,
    legal_set,
    step_kernel,
)
from ..layout import (
    SPIN_FIRST,
    lay_arm_double,
    lay_arm_end,
    lay_arm_len,
    lay_arm_open,
    lay_block,
    lay_can_place,
    lay_count,
    lay_fill_mask,
    lay_history,
    lay_history_entry,
    lay_history_tiles,
    lay_init,
    lay_num_arms,
    lay_offered_arm,
    lay_open_pips,
    lay_place,
    lay_placed,
    lay_playable,
    lay_problem,
    lay_replay_problem,
    lay_single_action,
    render_cross,
)
from ..rng import rng_below
from ..sampling import deal_consistent, mask_to_array, shuffle_and_deal
from ..slots import ObsLayout, Slots
from ..table import Table, hand_number, line_play
from ..tiles import (
    PIP_MASK,
    TILE_A,
    TILE_B,
    mask_pips,
    pips_to_tiles,
    popcount,
    stream_bits,
    stream_end,
    tile_id,
    tile_name,
)

NP = 4
NT = 28
NPIP = 7
NARMS = 4
HAND_SIZE = 7
ARM_NAMES = ("left", "right", "up", "down")
REWARD_SCALE = 4

# tiles the leader may lead: the 7 doubles and the scoring tiles 0-5, 1-4, 2-3, 4-6 (5-5 is a double)
LEAD_TILES = [tile_id(d, d) for d in range(7)] + [tile_id(0, 5), tile_id(1, 4), tile_id(2, 3), tile_id(4, 6)]
LEAD_MASK = sum(1 << t for t in LEAD_TILES)
FULL_MASK = (1 << NT) - 1

# params
P_DBLX, P_MATCH, P_TARGET, P_FIRST = range(4)

# state slots (after the common header), declared once (slots.py)
ROW = Slots("seven_toed_pete", base=HEADER)
HANDS = ROW.slot("hands", NP, 0, FULL_MASK, doc="tile bitmask per seat")
PLAYED_BY = ROW.slot("played by", NT, -1, NP - 1, doc="per tile: seat that placed it, -1 if not placed")
VOID = ROW.slot("voids", NP, 0, (1 << NPIP) - 1, doc="pip bitmask: numbers the seat showed it lacks")
NOLEAD = ROW.slot("no lead", NP, 0, 1, doc="1: the seat passed the lead duty (P-5)")
CHIPS = ROW.slot("chips", NP, 0, lambda g: g.config.chips_to_win)
HAND_WON = ROW.slot("hand won", NP, 0, 1, doc="1 for each seat that took a chip in the last finished hand")
DESIGNATED = ROW.slot("designated leader", 1, 0, NP - 1, doc="designated leader of this hand (P-5)")
LEADER = ROW.slot("leader", 1, -1, NP - 1, doc="seat that led this hand, -1 before the lead")
EXTRA = ROW.slot("extra turn", 1, 0, 1, doc="1 while the seat to act plays an extra turn")
SPIN_TILE = ROW.slot("spinner tile", 1, -1, NT - 1, doc="the spinner tile, -1 before one is out")
COUNT = ROW.slot("count", 1, 0, 100, doc="the count after the last placement (0 before the lead)")
PLAYED_MASK = ROW.slot("played", NP, 0, FULL_MASK, doc="per seat: bitmask of the tiles it placed this hand")
LAY = lay_block(ROW, NARMS, max_pip=NPIP - 1, n_tiles=NT)
# the deal shuffles its deck in the layout block (lay_size(4) >= NT) and clears it once the hands are
# dealt (lay_init clears only the layout header, and a hidden tile must not stay in a dead slot)
DECK = ROW.view("deal scratch", LAY, NT, doc="the deal's shuffled deck, zeroed once dealt (in the layout block)")
STATE_SIZE = ROW.close()


@dataclass(frozen=True)
class PeteConfig:
    """Rule parameters of Seven-Toed Pete (defaults: rules-spec section 2)."""

    num_players: int = 4  # exactly 4: accepted for symmetry with the other games, never changes
    double_extra_turn: bool = False  # P-2
    match: bool = False  # P-7
    chips_to_win: int = 5  # P-7
    first_leader: int | None = None  # P-5: None = random (seeded) designated leader in hand 1

    def __post_init__(self):
        g = "seven_toed_pete"
        if not is_int(self.num_players) or self.num_players != 4:
            raise ConfigError(f"{g}: num_players={self.num_players!r} is not allowed; Seven-Toed Pete is "
                              f"played by exactly 4 players (allowed values: [4])")
        check_bool(g, "double_extra_turn", self.double_extra_turn)
        check_bool(g, "match", self.match)
        check_int(g, "chips_to_win", self.chips_to_win, 1, 1000)
        if self.first_leader is not None:
            check_int(g, "first_leader", self.first_leader, 0, NP - 1)


# ------------------------------------------------------------------------------ kernels
@njit(cache=True, _nrt=False)
def _new_hand(s, p):
    """Clear the per-hand slots and lay out an empty layout (hands are set by the caller)."""
    for k in range(NP):
        s[VOID + k] = 0
        s[NOLEAD + k] = 0
        s[PLAYED_MASK + k] = 0
    for t in range(NT):
        s[PLAYED_BY + t] = -1
    s[LEADER] = -1
    s[EXTRA] = 0
    s[SPIN_TILE] = -1
    s[COUNT] = 0
    lay_init(s, LAY, NARMS, SPIN_FIRST)


@njit(cache=True, _nrt=False)
def _deal(s, p):
    shuffle_and_deal(s, H_RNG, s, DECK, NT, HANDS, NP, HAND_SIZE)
    for i in range(NT):  # the deck lies in the layout's slots: no dealt tile may stay in them
        s[DECK + i] = 0
    _new_hand(s, p)
    # P-5: the designated leader is random (or first_leader) in hand 1, then moves one seat on
    if s[H_HAND] == 0:
        d = p[P_FIRST] if p[P_FIRST] >= 0 else rng_below(s, H_RNG, NP)
    else:
        d = (s[DESIGNATED] + 1) & 3  # NP == 4
    s[DESIGNATED] = d
    s[H_TURN] = d


@njit(cache=True, _nrt=False)
def _next_holder(s, seat):
    """The next seat after `seat` (seat itself last) still holding tiles, -1 if none does."""
    for i in range(1, NP + 1):
        k = (seat + i) & 3  # NP == 4
        if s[HANDS + k] != 0:
            return k
    return -1


@njit(cache=True, _nrt=False)
def _anyone_can_play(s):
    fits = lay_playable(s, LAY, FULL_MASK)
    return ((s[HANDS] | s[HANDS + 1] | s[HANDS + 2] | s[HANDS + 3]) & fits) != 0


@njit(cache=True, _nrt=False)
def _end_hand(s, p):
    """Chips for the hand (P-7), rewards, and the next hand or the end of the episode."""
    # P-7: every seat that dominoed takes a chip; if nobody did, the lowest pip total(s)
    won = 0
    for k in range(NP):
        if s[HANDS + k] == 0:
            won |= 1 << k
    if won == 0:  # nobody dominoed: the lowest pip total(s) take a chip
        best = 1 << 30
        for k in range(NP):
            pk = mask_pips(s[HANDS + k])
            if pk < best:
                best = pk
                won = 1 << k
            elif pk == best:
                won |= 1 << k
    w = popcount(won)
    for k in range(NP):
        if (won >> k) & 1:
            s[H_REWARD + k] += REWARD_SCALE - w
            s[CHIPS + k] += 1
            s[HAND_WON + k] = 1
        else:
            s[H_REWARD + k] -= w
            s[HAND_WON + k] = 0
    s[H_HAND] += 1
    over = p[P_MATCH] == 0
    if not over:  # P-7: a match ends once some seat holds chips_to_win chips at the end of a hand
        for k in range(NP):
            if s[CHIPS + k] >= p[P_TARGET]:
                over = True
    if over:
        s[H_DONE] = 1
        s[H_TURN] = -1
        s[EXTRA] = 0
    else:
        _deal(s, p)


@njit(cache=True, _nrt=False)
def _place(s, p, seat, t, arm):
    """Seat places tile t on arm; settle extra turns (P-1..P-3), dominoes and the end (P-4)."""
    narms_before = lay_num_arms(s, LAY)
    lay_place(s, LAY, t, arm)
    if lay_num_arms(s, LAY) > 2 and lay_num_arms(s, LAY) > narms_before:
        s[SPIN_TILE] = t
    if s[LEADER] < 0:
        s[LEADER] = seat
    s[HANDS + seat] &= ~(1 << t)
    s[PLAYED_BY + t] = seat
    s[PLAYED_MASK + seat] |= 1 << t
    # P-1: the lead is counted like any other placement (a lone lead tile counts all its pips)
    c = lay_count(s, LAY)
    s[COUNT] = c
    if s[HANDS + seat] == 0:  # dominoed (P-4): no extra turn, the seat leaves the turn order
        s[EXTRA] = 0
        nxt = _next_holder(s, seat)
        if nxt < 0 or not _anyone_can_play(s):
            _end_hand(s, p)
        else:
            s[H_TURN] = nxt
        return
    # P-3: a scoring play (count > 0, a multiple of 5) gives the same seat another turn; P-2 with
    # double_extra_turn: so does a double (one extra turn even if it also scores)
    if (c > 0 and c % 5 == 0) or (p[P_DBLX] == 1 and TILE_A[t] == TILE_B[t]):
        s[EXTRA] = 1  # same seat again
    else:
        s[EXTRA] = 0
        s[H_TURN] = _next_holder(s, seat)


@njit(cache=True, inline="always")
def _only_action(s, hand):
    """The single legal action for `hand`, -1 if there are several, -2 if none."""
    return lay_single_action(s, LAY, hand, LEAD_MASK, NARMS)


@njit(cache=True, _nrt=False)
def _advance(s, p):
    """Take forced steps (duty passing, passes, single placements) until a real decision or the end."""
    while s[H_DONE] == 0:
        seat = s[H_TURN]
        a = _only_action(s, s[HANDS + seat])
        if a == -1:
            return
        if a >= 0:
            _place(s, p, seat, a >> 2, a & 3)  # NARMS == 4
            continue
        if lay_placed(s, LAY) == 0:  # no double, no scoring tile: the lead duty passes (P-5)
            s[NOLEAD + seat] = 1
            s[H_TURN] = (seat + 1) & 3
            continue
        # nothing fits: pass (P-6 for an extra turn), showing the open numbers are lacking
        s[VOID + seat] |= lay_open_pips(s, LAY)
        s[EXTRA] = 0
        if not _anyone_can_play(s):
            _end_hand(s, p)
            continue
        s[H_TURN] = _next_holder(s, seat)


@njit(cache=True, _nrt=False)
def _reset_kernel(s, seed, p):
    for i in range(s.shape[0]):
        s[i] = 0
    s[H_RNG] = seed
    _deal(s, p)
    _advance(s, p)


@njit(cache=True, inline="always")
def _is_legal(s, p, a):
    t = a >> 2  # NARMS == 4
    arm = a & 3
    if (s[HANDS + s[H_TURN]] >> t) & 1 == 0:
        return False
    if lay_placed(s, LAY) == 0:  # P-5: the lead is a double or a scoring tile, on arm 0
        return arm == 0 and (LEAD_MASK >> t) & 1 == 1
    # a tile fitting twin arms (layout.py) is offered on the lowest one: the others mirror it
    return lay_can_place(s, LAY, t, arm) and lay_offered_arm(s, LAY, arm)


@njit(cache=True)
def _legal_set_kernel(s, p, out):
    """Legality action by action through the step's own check (tests compare it with the mask)."""
    legal_set(s, p, out, NT * NARMS, _is_legal)


@njit(cache=True)
def _check_kernel(s, p):
    """Tile conservation (hands and layout partition the 28 tiles) and turn invariants."""
    seen = 0
    for k in range(NP):
        h = s[HANDS + k]
        if h & seen or h & ~FULL_MASK:
            return False
        seen |= h
    placed = 0
    for t in range(NT):
        if s[PLAYED_BY + t] >= 0:
            if (seen >> t) & 1 or s[PLAYED_BY + t] >= NP:
                return False
            seen |= 1 << t
            placed += 1
    if placed != lay_placed(s, LAY) or seen != FULL_MASK:
        return False
    for i in range(placed):  # the layout's history holds exactly the placed tiles
        t, arm = lay_history_entry(s, LAY, i)
        if s[PLAYED_BY + t] < 0 or arm < 0 or arm >= NARMS:
            return False
    if s[H_DONE] == 0:
        seat = s[H_TURN]
        if seat < 0 or seat >= NP or s[HANDS + seat] == 0:
            return False
        if _only_action(s, s[HANDS + seat]) != -1:  # a real decision
            return False
        if s[EXTRA] == 1:  # an extra turn belongs to the seat that placed the last tile
            if placed == 0:
                return False
            t, arm = lay_history_entry(s, LAY, placed - 1)
            if s[PLAYED_BY + t] != seat:
                return False
        if (placed == 0) != (s[LEADER] < 0):
            return False
    chips = 0
    for k in range(NP):
        chips += s[CHIPS + k]
    return chips >= s[H_HAND]


@njit(cache=True, inline="always")
def _play(s, p, a):
    _place(s, p, s[H_TURN], a >> 2, a & 3)


@njit(cache=True, inline="always")
def _step_kernel(s, a, p):
    return step_kernel(s, a, p, NT * NARMS, _is_legal, _play, _advance)


@njit(cache=True, inline="always")
def _mask_kernel(s, p, out):
    out[:] = 0
    if s[H_DONE] == 1:
        return
    lay_fill_mask(s, LAY, s[HANDS + s[H_TURN]], LEAD_MASK, NARMS, out)


def _obs_shapes():
    """The observation's pieces (module docstring), declared once: `obs_pieces` (so `decode`) and
    the offsets `_obs_kernel` writes at both come from here."""
    return [
        ("hand", (NT,)), ("played_by", (NP, NT)), ("arm_ends", (NARMS, NPIP)), ("arm_tiles", (NARMS,)),
        ("arm_double", (NARMS,)), ("spinner", (NPIP,)), ("branches_open", (1,)), ("count", (1,)),
        ("hand_sizes", (NP,)), ("voids", (NP, NPIP)), ("no_lead", (NP,)), ("dominoed", (NP,)),
        ("chips", (NP,)), ("leader", (NP,)), ("to_move", (NP,)), ("extra_turn", (1,)),
    ]


OBS = ObsLayout(_obs_shapes)
_O = dict(zip(OBS.names, OBS.offsets()))  # offsets of the pieces: plain ints (NP == 4 is fixed)
O_PLAYED = _O["played_by"]
O_ARMS = _O["arm_ends"]
O_ARM_TILES = _O["arm_tiles"]
O_ARM_DOUBLE = _O["arm_double"]
O_COUNT = _O["count"]
O_SIZES = _O["hand_sizes"]
O_NOLEAD = _O["no_lead"]
O_CHIPS = _O["chips"]
O_EXTRA = _O["extra_turn"]


@njit(cache=True, inline="always")
def _obs_kernel(s, p, v, out):
    """One bit stream (tiles.stream_bits) in layout order, zero bits left for the counts and
    other values, which are written after it (NP == 4: every offset is a constant)."""
    placed = lay_placed(s, LAY) > 0
    turn = s[H_TURN] if s[H_DONE] == 0 else -1
    lead = s[LEADER] if s[LEADER] >= 0 else turn
    na = lay_num_arms(s, LAY)
    ends = 0
    for a in range(NARMS):
        if lay_arm_open(s, LAY, a):
            ends |= 1 << (a * NPIP + lay_arm_end(s, LAY, a))
    j1 = (v + 1) & 3
    j2 = (v + 2) & 3
    j3 = (v + 3) & 3
    st = stream_bits((0, 0, 0), s[HANDS + v] | (s[PLAYED_MASK + v] << NT), 2 * NT, out)
    st = stream_bits(st, s[PLAYED_MASK + j1] | (s[PLAYED_MASK + j2] << NT), 2 * NT, out)
    st = stream_bits(st, s[PLAYED_MASK + j3] | (ends << NT), 2 * NT, out)  # + arm_ends
    sp = s[SPIN_TILE]
    spin = (1 << TILE_A[sp]) if sp >= 0 else 0
    branch = 1 if lay_arm_open(s, LAY, 2) else 0
    # arm_tiles, arm_double (values), spinner, branches_open, count, hand_sizes (values)
    st = stream_bits(st, (spin << 2 * NARMS) | (branch << (2 * NARMS + NPIP)), 2 * NARMS + NPIP + 2 + NP, out)
    voids = 0
    flags = 0  # dominoed, (chips: values), leader, to_move
    for r in range(NP):
        j = (v + r) & 3
        voids |= s[VOID + j] << (r * NPIP)
        if placed and s[HANDS + j] == 0:
            flags |= 1 << r
        if j == lead:
            flags |= 1 << (2 * NP + r)
        if j == turn:
            flags |= 1 << (3 * NP + r)
    # voids, no_lead (values), dominoed, chips (values), leader, to_move, extra_turn (value)
    stream_end(stream_bits(st, voids | (flags << (NP * NPIP + NP)), NP * NPIP + 5 * NP + 1, out), out)
    for a in range(NARMS):
        used = a < na
        out[O_ARM_TILES + a] = lay_arm_len(s, LAY, a) if used else 0
        out[O_ARM_DOUBLE + a] = lay_arm_double(s, LAY, a) if lay_arm_open(s, LAY, a) else 0
    out[O_COUNT] = s[COUNT]
    for r in range(NP):
        j = (v + r) & 3
        out[O_SIZES + r] = popcount(s[HANDS + j])
        out[O_NOLEAD + r] = s[NOLEAD + j]
        out[O_CHIPS + r] = s[CHIPS + j]
    out[O_EXTRA] = s[EXTRA]


@njit(cache=True)
def _sample_kernel(s, p, v, seed):
    """Redeal the three other hands: each keeps its size, holds none of the numbers it showed it
    lacks (voids) and, if it passed the lead duty, no double or scoring tile; an opponent at a
    decision keeps >= 2 legal actions (rejection). No boneyard: the unseen tiles are exactly the
    opponents' tiles. Depends only on what seat v can see."""
    ns = s.copy()
    played = s[PLAYED_MASK] | s[PLAYED_MASK + 1] | s[PLAYED_MASK + 2] | s[PLAYED_MASK + 3]
    unseen = FULL_MASK & ~played & ~s[HANDS + v]
    tiles = np.empty(NT, dtype=np.int64)
    k = mask_to_array(unseen, tiles)
    allowed = np.zeros(NP, dtype=np.int64)
    cap = np.zeros(NP, dtype=np.int64)
    for j in range(NP):
        if j == v:
            continue
        forbid = 0
        for q in range(NPIP):
            if (s[VOID + j] >> q) & 1:
                forbid |= PIP_MASK[q]
        if s[NOLEAD + j] == 1:
            forbid |= LEAD_MASK
        allowed[j] = unseen & ~forbid
        cap[j] = popcount(s[HANDS + j])
    rng_arr = np.empty(1, dtype=np.int64)
    rng_arr[0] = seed
    mover = s[H_TURN]
    # fails closed: an empty row if no consistent redeal exists (sampling.py), never the true state
    dealt = False
    for _attempt in range(100_000):
        assign = deal_consistent(tiles, k, allowed, cap, NP, rng_arr)
        if k > 0 and assign[0] < 0:
            break  # deal_consistent is exact: no consistent deal exists
        dealt = True
        for j in range(NP):
            if j != v:
                ns[HANDS + j] = 0
        for i in range(k):
            ns[HANDS + assign[i]] |= 1 << tiles[i]
        # an opponent at a decision visibly has a choice: keep only samples where it does
        if s[H_DONE] == 1 or mover == v or _only_action(ns, ns[HANDS + mover]) == -1:
            break
    if not dealt:
        return np.empty(0, dtype=np.int64)
    ns[H_RNG] = rng_arr[0]
    return ns


# ------------------------------------------------------------------------------ Python side
# heuristic: domino_agents.heuristic_fives.FivesHeuristic, Pete's weights
class PeteGame(Game, kernels=globals(), facts=Facts(PeteConfig, ROW, "seven_toed_pete.md", "P", "fives:pete",
                                                    "first_leader", float(REWARD_SCALE))):
    """Seven-Toed Pete engine bound to one config (rules: module docstring)."""

    def __init__(self, config: PeteConfig, name: str = "seven_toed_pete_v0"):
        c = config
        self.num_players = NP
        self.n_tiles = NT
        self.num_actions = NT * NARMS
        self.params = np.array(
            [int(c.double_extra_turn), int(c.match), c.chips_to_win,
             -1 if c.first_leader is None else c.first_leader],
            dtype=np.int64,
        )
        super().__init__(config, name)

    def obs_pieces(self):
        return OBS.pieces()

    def obs_high(self) -> float:
        return float(max(100, self.config.chips_to_win))

    def max_decisions(self) -> int:
        """28 placements per hand at most; a match has at most 4*(chips_to_win-1)+1 hands (P-7)."""
        hands = 4 * (self.config.chips_to_win - 1) + 1 if self.config.match else 1
        return NT * hands

    # ---- actions
    def encode_action(self, a: int, b: int, arm=0) -> int:
        """Action id for tile (a, b) on `arm`: 0/'left' (also the lead), 1/'right', 2/'up', 3/'down'."""
        if isinstance(arm, str):
            if arm not in ARM_NAMES:
                raise ValueError(f"{self.name}: arm {arm!r} is not one of {list(ARM_NAMES)} (or 0..3)")
            arm = ARM_NAMES.index(arm)
        if isinstance(arm, bool) or not isinstance(arm, (int, np.integer)) or not 0 <= arm < NARMS:
            raise ValueError(f"{self.name}: arm must be 0..3 or one of {list(ARM_NAMES)}, got {arm!r}")
        t = tile_id(a, b)
        if t >= NT:
            raise ValueError(f"{self.name}: tile ({a}, {b}) is not in a double-six set")
        return t * NARMS + int(arm)

    def describe_action(self, action: int) -> str:
        if not 0 <= action < self.num_actions:
            return f"out of range (0..{self.num_actions - 1})"
        t, arm = divmod(int(action), NARMS)
        where = {0: "the left end (arm 0; also the lead)", 1: "the right end (arm 1)",
                 2: "the spinner's up branch (arm 2)", 3: "the spinner's down branch (arm 3)"}[arm]
        return f"play {tile_name(t)} on {where}"

    def action_table(self) -> ActionTable:
        """Action ``tile * 4 + arm`` places tile id ``tile`` on arm 0..3 (core.Game.action_table)."""
        return tile_arm_table("line", NT, NARMS, self.num_actions)

    # ---- pictures (core.Game.describe_table)
    def describe_table(self, state: np.ndarray, table: Table, face_up: list[bool]) -> None:
        s = state
        for k, seat in enumerate(table.seats):
            hand = self.hand(s, k)
            seat.count = len(hand)
            if face_up[k]:
                seat.tiles = hand
            seat.lines.append(f"chips {self.chips(s)[k]}")
            if self.leader(s) == k:
                seat.lines.append("led")
            if seat.to_act and self.extra_turn(s):
                seat.lines.append("extra turn")
        table.info += [f"hand {hand_number(s)}", f"count {self.count(s)}"]
        table.play = line_play(self.layout(s), self.line(s), self.open_ends(s))

    # ---- deals
    def set_deal(self, state: np.ndarray, deal: dict) -> None:
        """Start a new episode from a given deal (module docstring, "Deal format")."""
        self._check_row(state)
        hands, stock, leader = self._deal_parts(deal, ("hands", "stock", "first", "chips"),
                                                self.config.first_leader or 0)
        if stock:
            raise DealError(f"{self.name}: every tile is dealt, there is no stock; got stock={deal['stock']!r}")
        chips = deal.get("chips")
        if chips is not None:
            if not self.config.match:
                raise DealError(f"{self.name}: 'chips' can only be given in match mode (match=True)")
            if (not isinstance(chips, (list, tuple)) or len(chips) != NP
                    or any(not is_int(c) or not 0 <= c < self.config.chips_to_win for c in chips)):
                raise DealError(f"{self.name}: chips={chips!r} must be {NP} integers in "
                                f"0..{self.config.chips_to_win - 1} (chips_to_win={self.config.chips_to_win})")
        seen: set[int] = set()
        masks = []
        for k, hand in enumerate(hands):
            ids = deal_tile_ids(self.name, hand, f"hand {k}", seen)
            if not ids:
                raise DealError(f"{self.name}: hand {k} must be a non-empty list of tiles (a, b); got {hand!r}")
            masks.append(sum(1 << t for t in ids))
        missing = [tile_name(t) for t in range(NT) if t not in seen]
        if missing:
            raise DealError(f"{self.name}: there is no stock, so the hands must hold all 28 tiles; "
                            f"missing: {missing}")
        s = state
        self._fresh_row(s)
        for k in range(NP):
            s[HANDS + k] = masks[k]
            if chips is not None:
                s[CHIPS + k] = int(chips[k])
        _new_hand(s, self.params)
        s[DESIGNATED] = leader
        s[H_TURN] = leader
        _advance(s, self.params)

    def deal_of(self, state: np.ndarray) -> dict:
        """The deal of the hand in play, in the format `set_deal` takes: each seat's tiles in hand
        plus those it placed this hand (every tile is dealt, so this is the deal, also after a forced
        lead), the designated leader, and in match mode the chips held (they change only between
        hands). `set_deal` of it on a fresh row gives the same decision."""
        self._check_state(state)
        s = state
        hands = [[(int(TILE_A[t]), int(TILE_B[t])) for t in range(NT)
                  if (int(s[HANDS + k] | s[PLAYED_MASK + k]) >> t) & 1] for k in range(NP)]
        deal = {"hands": hands, "first": int(s[DESIGNATED])}
        if self.config.match:
            deal["chips"] = [int(c) for c in s[CHIPS:CHIPS + NP]]
        return deal

    # ---- validate (core.Game.validate: the ranges of `slots`, then these)
    def _validate_more(self, state):
        """The relations the kernels rely on: the layout is what its history gives (P-5 the lead a
        double or a scoring tile), the played masks and played-by slots name the tiles on the table,
        the spinner, count and leader slots follow from the history, and an extra turn or a match
        in play is consistent (the turn's real decision and tile conservation: `_check_kernel`)."""
        s = state
        problem = lay_problem(s, LAY, NARMS, NT) or lay_replay_problem(s, LAY, NARMS, SPIN_FIRST)
        if problem:
            self._refuse(problem)
        line = self.line(s)
        on_table = lay_history_tiles(s, LAY)
        self._check_played(s, PLAYED_MASK, NP, on_table, PLAYED_BY, NT)
        if line and not (LEAD_MASK >> line[0][0]) & 1:
            self._refuse(f"the lead {tile_name(line[0][0])} (layout history entry 0) is neither a double nor a "
                         f"scoring tile (P-5)")
        spinner = next((t for t, _ in line if TILE_A[t] == TILE_B[t]), -1)  # the first double played
        if s[SPIN_TILE] != spinner:
            self._refuse(f"spinner tile (slot {SPIN_TILE}) is {int(s[SPIN_TILE])}; the history's first double is "
                         f"{spinner} (-1: none played)")
        if s[COUNT] != lay_count(s, LAY):
            self._refuse(f"count (slot {COUNT}) is {int(s[COUNT])}; the layout's open ends count "
                         f"{int(lay_count(s, LAY))} (P-1)")
        leader = int(s[PLAYED_BY + line[0][0]]) if line else -1
        if s[LEADER] != leader:
            self._refuse(f"leader (slot {LEADER}) is {int(s[LEADER])}; the seat that placed the lead is {leader}")
        forbid = [int(pips_to_tiles(int(s[VOID + k]), NPIP)) | (LEAD_MASK if s[NOLEAD + k] else 0) for k in range(NP)]
        self._check_known(s, HANDS, forbid, f"voids and no-lead flags (slots {VOID}.., {NOLEAD}.., P-5)")
        if s[H_DONE] == 1 and s[EXTRA] != 0:
            self._refuse(f"extra turn (slot {EXTRA}) is {int(s[EXTRA])} in a finished episode (allowed: 0)")
        if s[H_DONE] == 0:
            chips = [int(c) for c in s[CHIPS:CHIPS + NP]]
            if self.config.match and max(chips) >= self.config.chips_to_win:
                self._refuse(f"chips {chips} (slots {CHIPS}..{CHIPS + NP - 1}): a match in play has every seat "
                             f"below chips_to_win={self.config.chips_to_win} (P-7)")
            if not self.config.match and (s[H_HAND] != 0 or any(chips)):
                self._refuse(f"hands done {int(s[H_HAND])} and chips {chips}: a single hand in play has none "
                             f"finished and no chips (P-7)")

    # ---- inspection helpers (tests, rendering)
    def hand(self, state, seat) -> list[tuple[int, int]]:
        return [(int(TILE_A[t]), int(TILE_B[t])) for t in range(NT) if (int(state[HANDS + seat]) >> t) & 1]

    def chips(self, state) -> list[int]:
        return [int(x) for x in state[CHIPS:CHIPS + NP]]

    def count(self, state) -> int:
        return int(lay_count(state, LAY))

    def extra_turn(self, state) -> bool:
        return bool(state[EXTRA])

    def leader(self, state) -> int:
        """Seat that led this hand (-1 before the lead)."""
        return int(state[LEADER])

    def designated_leader(self, state) -> int:
        return int(state[DESIGNATED])

    def voids(self, state, seat) -> list[int]:
        return [q for q in range(NPIP) if (int(state[VOID + seat]) >> q) & 1]

    def no_lead(self, state, seat) -> bool:
        return bool(state[NOLEAD + seat])

    def hand_winners(self, state) -> list[int]:
        """Seats that took a chip in the last finished hand."""
        return [k for k in range(NP) if state[HAND_WON + k]]

    def match_winners(self, state) -> list[int]:
        """Seats with the most chips (P-7; meaningful once the episode is over)."""
        c = self.chips(state)
        return [k for k in range(NP) if c[k] == max(c)]

    def open_ends(self, state) -> dict[int, int]:
        """{arm: pip} of the open arms."""
        if lay_placed(state, LAY) == 0:
            return {}
        return {a: int(lay_arm_end(state, LAY, a)) for a in range(int(lay_num_arms(state, LAY)))
                if lay_arm_open(state, LAY, a)}

    def spinner(self, state) -> tuple[int, int] | None:
        t = int(state[SPIN_TILE])
        return None if t < 0 else (int(TILE_A[t]), int(TILE_B[t]))

    def line(self, state) -> list[tuple[int, int]]:
        """Placements so far as (tile id, arm)."""
        return [(int(t), int(a)) for t, a in lay_history(state, LAY)]

    def layout(self, state) -> dict:
        """The layout as laid on the table, for pictures: ``layout.lay_arms`` (the centre tile, each
        arm's tiles from the centre outwards as (inner, outer) pips, the spinners and their branches)."""
        from ..layout import lay_arms

        return lay_arms(state, LAY)

    def render(self, state: np.ndarray, seat: int) -> str:
        s = state
        over = bool(s[H_DONE])
        head = (f"{self.name}  hand {int(s[H_HAND]) + (0 if over else 1)}  chips {self.chips(s)}"
                + (f" (match to {self.config.chips_to_win})" if self.config.match else ""))
        lines = [head, render_cross(s, LAY, self.count(s))]
        for k in range(NP):
            marks = []
            if not over and s[H_TURN] == k:
                marks.append("<- to move" + (" (extra turn)" if s[EXTRA] else ""))
            if s[LEADER] == k:
                marks.append("led")
            elif s[LEADER] < 0 and not over and s[DESIGNATED] == k:
                marks.append("designated leader")
            if s[NOLEAD + k]:
                marks.append("passed the lead")
            if lay_placed(s, LAY) > 0 and s[HANDS + k] == 0:
                marks.append("dominoed")
            lines.append(f"seat {k}: {popcount(s[HANDS + k])} tiles, lacks {self.voids(s, k)} "
                         + " ".join(marks))
        hand = " ".join(f"[{a}|{b}]" for a, b in self.hand(s, seat))
        lines.append(f"seat {seat} holds: {hand}")
        if over:
            lines.append(f"over: chip(s) to seat(s) {self.hand_winners(s)} in the last hand"
                         + (f"; match won by {self.match_winners(s)}" if self.config.match else ""))
        return "\n".join(lines)
