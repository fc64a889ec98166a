"""Racehorse (`racehorse_v0`): Seven-Toed Pete, points version, a.k.a. Seven Go.

The full text - every rule and its ruling, the config, actions, observation, rewards, deals - is
docs/games/racehorse.md (rules-spec section 3, seed 004, Puremco's rules). This docstring is its
summary, which tests/docs/test_docs.py keeps in step with it.

Rules in brief (T-2..T-10 are the spec's ids, T-1, T-11 and T-12 this engine's):
- T-1 double-six, 2-4 players, 7 tiles each, the rest is the boneyard; ``teams=True`` (4 players)
  pits seats 0 & 2 against 1 & 3. Score tiles 6-4, 5-5, 5-0, 4-1, 3-2; a double or a score tile
  is *special*.
- T-5 the seat with the set duty (random in hand 1, or ``first_setter``; then rotating) sets a
  special tile; without one it draws for one (2-3 players) or passes the duty on.
- T-4 ``spinner``: none (default), the first double, or every double.
- After every placement a count (sum of the open ends) that is a positive multiple of 5 scores
  count / 5 points for the placer's side. T-2 a special tile obliges another play, not a score;
  T-3 the set is a placement like any other. T-7 play is compulsory: a seat that cannot play draws
  (2-3 players) until it can, or passes.
- T-6 a seat whose last tile was special draws but leaves the reserve (2 tiles with 2 players, 1
  with 3) or, with 4 players, is washed up. Going out takes a last tile that is not special.
- T-11 at the end of the hand the unique lowest pip total among the eligible sides (T-9: not a
  washed-up seat alone) scores the other sides' totals; T-10 a tie scores nothing; T-8 ``award``
  per pip or per five. T-12 ``match=True`` ends the moment a side reaches ``target``.
- Rewards are zero-sum, per step, as points are won. Forced steps (draws, passes, the duty passing
  on, a lone legal action) are the engine's.

Actions: ``Discrete(28 * num_arms)``, action ``tile * A + arm`` with A = num_arms (2, 4 or 16 by
``spinner``) and tile ids of tiles.py:
    arm 0            left end of the line (the set too)
    arm 1            right end of the line
    arm 2k+2, 2k+3   the (k+1)-th spinner's "up" and "down" branch

Observation (float32, seat-relative; n = num_players, A = num_arms):
    hand         (28,)      my tiles
    played_by    (n, 28)    the tiles seat r placed
    arm_ends     (A, 7)     pip at each open arm's end
    arm_tiles    (A,)       tiles on each arm
    arm_double   (A,)       an open arm ends in a crosswise double
    count        (1,)       the count
    hand_sizes   (n,)       tiles held
    boneyard     (1,)       tiles left to draw
    voids        (n, 7)     numbers seat r showed it lacks
    no_special   (n,)       seat r showed it holds no special tile
    drawn        (n,)       tiles drawn this hand
    washed_up    (n,)       seat r is washed up
    scores       (n,)       match scores
    to_move      (n,)       seat to act
    setter       (n,)       seat holding the set duty
    extra_play   (1,)       the seat to act makes an obliged extra play
    just_drew    (1,)       the seat to act drew: it must play the tile it drew

Deal format (``set_deal``; the page's "Deals"): ``{"hands": [[(a, b), ...] per seat], "stock":
[(a, b), ...] the boneyard in draw order, "first": seat holding the set duty, "scores": [points
per seat]}``.
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
    H_STEPS,
    H_TRUNC,
    H_TURN,
    HEADER,
    MAX_SEATS,
    ConfigError,
    DealError,
    Facts,
    Game,
    check_bool,
    check_choice,
    check_int,
    check_match,
    draw_until_playable,
    is_int,
    legal_set,
    step_kernel,
)
from ..layout import (
    SPIN_ALL,
    SPIN_FIRST,
    SPIN_NONE,
    lay_arm_end,
    lay_arm_open,
    lay_block,
    lay_can_place,
    lay_count,
    lay_fill_mask,
    lay_history,
    lay_history_tiles,
    lay_init,
    lay_num_arms,
    lay_obs_arms,
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
from ..sampling import finish_redeal, redeal_attempt, shuffle_and_deal, unseen_setup
from ..slots import ObsLayout, Slots, high, last_seat, seats
from ..table import Table, hand_number, line_play
from ..tiles import (
    TILE_A,
    TILE_B,
    expand_bits,
    mask_pips,
    pips_to_tiles,
    popcount,
    tile_id,
    tile_name,
)

MAX_PLAYERS = 4
N_TILES = 28
HAND_SIZE = 7
NP1 = 7  # pips 0..6
SPIN_MODES = {"none": SPIN_NONE, "first_double": SPIN_FIRST, "all_doubles": SPIN_ALL}
SPIN_ARMS = {"none": 2, "first_double": 4, "all_doubles": 16}
RESERVE = {2: 2, 3: 1, 4: 0}  # T-6

SCORE_TILES = [(6, 4), (5, 5), (5, 0), (4, 1), (3, 2)]
SCORE_MASK = sum(1 << tile_id(a, b) for a, b in SCORE_TILES)
DOUBLE6_MASK = sum(1 << tile_id(d, d) for d in range(7))
SPECIAL_MASK = SCORE_MASK | DOUBLE6_MASK  # 11 tiles (5-5 is both)
FULL_MASK = (1 << N_TILES) - 1

# params
(P_NP, P_TEAMS, P_SPIN, P_ARMS, P_AWARD, P_MATCH, P_TARGET, P_MAXHANDS, P_FIRST,
 P_RESERVE, P_ARM_BITS) = range(11)  # P_ARM_BITS: log2 of P_ARMS (2, 4 or 16 arms)

# state slots (after the common header), declared once (slots.py): bounds are functions of the game
ROW = Slots("racehorse", base=HEADER)
HANDS = ROW.slot("hands", MAX_PLAYERS, 0, FULL_MASK, used=seats, doc="tile bitmask per seat")
DECK = ROW.slot("deck", N_TILES, -1, N_TILES - 1, doc="the deal order of the tiles")
DECK_POS = ROW.slot("deck position", 1, 0, N_TILES, doc="next tile drawn is DECK[DECK_POS]")
BONE_END = ROW.slot("boneyard end", 1, 0, N_TILES,
                    doc="boneyard = DECK[DECK_POS:BONE_END]; DECK[BONE_END:28] out of play (test deals)")
PLAYED_BY = ROW.slot("played by", N_TILES, -1, last_seat, doc="per tile: seat that placed it, -1 if not placed")
VOID = ROW.slot("voids", MAX_PLAYERS, 0, (1 << NP1) - 1, doc="pip bitmask: numbers the seat showed it lacks")
NOSPEC = ROW.slot("no special", MAX_PLAYERS, 0, 1, doc="1: the seat showed it holds no special tile")
DRAWN = ROW.slot("drawn", MAX_PLAYERS, 0, N_TILES)
WASHED = ROW.slot("washed up", MAX_PLAYERS, 0, 1)
SCORES = ROW.slot("scores", MAX_PLAYERS, 0, high)
PENDING = ROW.slot("pending rewards", MAX_PLAYERS, lambda g: -int(g.reward_scale) * high(g),
                   lambda g: int(g.reward_scale) * high(g), used=seats,
                   doc="rewards earned during reset / set_deal, paid with the first step (0 once a step "
                       "was taken: _validate_more)")
SETTER = ROW.slot("setter", 1, 0, last_seat, doc="nominal setter of this hand (T-5)")
DUTY = ROW.slot("set duty", 1, -1, last_seat, doc="seat holding the set duty, -1 once the set is down")
EXTRA = ROW.slot("extra play", 1, 0, 1, doc="1 while the seat to act owes an obliged extra play")
JUST_DREW = ROW.slot("just drew", 1, 0, 1)
OUT_SEAT = ROW.slot("out seat", 1, -1, last_seat, doc="seat that went out in the last finished hand, -1 none")
LAST_WINNER = ROW.slot("last winner", 1, -1, last_seat,
                       doc="a seat of the side that won the last hand's award, -1 none")
LAST_AWARD = ROW.slot("last award", 1, 0, high, doc="points of that award")
COUNT = ROW.slot("count", 1, 0, 1000, doc="the count after the last placement (0 before the set)")
PLAYED_MASK = ROW.slot("played", MAX_PLAYERS, 0, FULL_MASK, doc="per seat: bitmask of the tiles it placed this hand")
LAY = lay_block(ROW, 16, arms=lambda g: g.num_arms, max_pip=NP1 - 1, n_tiles=N_TILES)
STATE_SIZE = ROW.close()
DRAW_SLOTS = (DECK_POS, HANDS, DRAWN, VOID, JUST_DREW)  # core.draw_until_playable's


@dataclass(frozen=True)
class RacehorseConfig:
    """Rule parameters of Racehorse (defaults: rules-spec section 3)."""

    num_players: int = 2
    teams: bool = False  # 4 players only: seats 0 & 2 vs 1 & 3 (T-1)
    spinner: str = "none"  # "none" | "first_double" | "all_doubles" (T-4)
    award: str = "per_pip"  # "per_pip" | "per_five" (T-8)
    match: bool = False  # play hands until a side reaches `target` (T-12)
    target: int = 61
    max_hands: int = 1000
    first_setter: int | None = None  # None: random in hand 1 (T-5)

    def __post_init__(self):
        g = "racehorse"
        check_int(g, "num_players", self.num_players, 2, MAX_PLAYERS)
        check_bool(g, "teams", self.teams)
        if self.teams and self.num_players != 4:
            raise ConfigError(f"{g}: teams=True needs num_players=4 (seats 0 & 2 vs 1 & 3); got num_players={self.num_players}")
        check_choice(g, "spinner", self.spinner, list(SPIN_MODES))
        check_choice(g, "award", self.award, ["per_pip", "per_five"])
        check_match(g, self)
        if self.first_setter is not None:
            check_int(g, "first_setter", self.first_setter, 0, self.num_players - 1)


def _obs_shapes(n, arms):
    """The observation's pieces (module docstring), declared once: `obs_pieces` (so `decode`) and
    the offsets `_obs_kernel` writes at (_obs_at) both come from here."""
    return [
        ("hand", (N_TILES,)), ("played_by", (n, N_TILES)), ("arm_ends", (arms, NP1)),
        ("arm_tiles", (arms,)), ("arm_double", (arms,)), ("count", (1,)), ("hand_sizes", (n,)),
        ("boneyard", (1,)), ("voids", (n, NP1)), ("no_special", (n,)), ("drawn", (n,)),
        ("washed_up", (n,)), ("scores", (n,)), ("to_move", (n,)), ("setter", (n,)),
        ("extra_play", (1,)), ("just_drew", (1,)),
    ]


OBS = ObsLayout(_obs_shapes, range(2, MAX_PLAYERS + 1), sorted(SPIN_ARMS.values()))
OBS_C = OBS.affine()  # offsets affine in (n, arms): see _obs_at
(I_PLAYED_BY, I_ARM_ENDS, I_COUNT, I_SIZES, I_BONEYARD, I_VOIDS, I_NOSPEC, I_DRAWN, I_WASHED, I_SCORES,
 I_TO_MOVE, I_SETTER, I_EXTRA, I_JUST_DREW) = OBS.columns(
    "played_by", "arm_ends", "count", "hand_sizes", "boneyard", "voids", "no_special", "drawn", "washed_up",
    "scores", "to_move", "setter", "extra_play", "just_drew")


# ------------------------------------------------------------------------------ kernels
@njit(cache=True, inline="always")
def _obs_at(n, arms, i):
    """First observation entry of piece column i (an I_ constant) for these dimensions: OBS.at's
    value, as folded constants times the dimensions."""
    return OBS_C[0, i] + OBS_C[1, i] * n + OBS_C[2, i] * arms


@njit(cache=True, _nrt=False)
def _is_special(t):
    return (SPECIAL_MASK >> t) & 1 == 1


@njit(cache=True, _nrt=False)
def _boneyard(s):
    return s[BONE_END] - s[DECK_POS]


@njit(cache=True, _nrt=False)
def _new_hand_slots(s, p):
    """Per-hand slots back to the start of a hand (hands and deck set by the caller)."""
    for k in range(MAX_PLAYERS):
        s[VOID + k] = 0
        s[NOSPEC + k] = 0
        s[DRAWN + k] = 0
        s[WASHED + k] = 0
        s[PLAYED_MASK + k] = 0
    for t in range(N_TILES):
        s[PLAYED_BY + t] = -1
    s[COUNT] = 0
    # T-4: the layout's spinner policy (none / first double / all doubles) and its arms
    lay_init(s, LAY, p[P_ARMS], p[P_SPIN])
    s[EXTRA] = 0
    s[JUST_DREW] = 0
    s[DUTY] = s[SETTER]
    s[H_TURN] = s[SETTER]


@njit(cache=True, _nrt=False)
def _deal(s, p):
    n = p[P_NP]
    for k in range(MAX_PLAYERS):
        s[HANDS + k] = 0
    # T-1: 7 tiles each, the rest is the boneyard (14 / 7 / 0 tiles for 2 / 3 / 4 players)
    s[DECK_POS] = shuffle_and_deal(s, H_RNG, s, DECK, N_TILES, HANDS, n, HAND_SIZE)
    s[BONE_END] = N_TILES
    # T-5: the setter is random (or first_setter) in hand 1, then one seat after the nominal one
    if s[H_HAND] == 0:
        s[SETTER] = p[P_FIRST] if p[P_FIRST] >= 0 else rng_below(s, H_RNG, n)
    else:
        s[SETTER] = s[SETTER] + 1 if s[SETTER] + 1 < n else 0  # T-5
    _new_hand_slots(s, p)


@njit(cache=True, _nrt=False)
def _side(p, k):
    # T-1: with teams seats 0 & 2 play against 1 & 3
    return k & 1 if p[P_TEAMS] == 1 else k


@njit(cache=True, _nrt=False)
def _over(s):
    s[H_DONE] = 1
    s[H_TURN] = -1
    s[EXTRA] = 0
    s[JUST_DREW] = 0


@njit(cache=True, _nrt=False)
def _add_points(s, p, seat, k):
    """Seat's side scores k points: scores and zero-sum rewards (units of 1/6)."""
    n = p[P_NP]
    if p[P_TEAMS] == 1:  # T-1: a point either partner wins is the team's
        for j in range(n):
            if (j & 1) == (seat & 1):
                s[SCORES + j] += k
                s[H_REWARD + j] += 6 * k
            else:
                s[H_REWARD + j] -= 6 * k
    else:
        s[SCORES + seat] += k
        s[H_REWARD + seat] += 6 * k
        share = 6 * k // (n - 1)
        for j in range(n):
            if j != seat:
                s[H_REWARD + j] -= share


@njit(cache=True, _nrt=False)
def _target_reached(s, p):
    for k in range(p[P_NP]):
        if s[SCORES + k] >= p[P_TARGET]:
            return True
    return False


@njit(cache=True, _nrt=False)
def _end_hand(s, p, out_seat):
    """Award the hand (T-8..T-11; out_seat went out, -1 for a block) and deal on or finish."""
    n = p[P_NP]
    nsides = 2 if p[P_TEAMS] == 1 else n
    winner = -1
    best = 1 << 30
    ties = 0
    all_pips = 0
    # T-11: every side's pip total (a team's: both partners'); the unique lowest eligible one wins
    for sd in range(nsides):
        total = 0
        eligible = False
        for k in range(n):
            if _side(p, k) == sd:
                total += mask_pips(s[HANDS + k])
                eligible |= s[WASHED + k] == 0
        all_pips += total
        if not eligible:  # T-9: a side of washed-up seats only cannot win
            continue
        if total < best:
            best = total
            winner = sd
            ties = 1
        elif total == best:
            ties += 1
    if ties > 1:
        winner = -1  # T-10
    award = 0
    if winner >= 0:
        pips = all_pips - best  # the other sides' totals (T-11)
        # T-8: award="per_pip" 1 point a pip; "per_five" rounded to the nearest 5, a point per 5
        award = pips if p[P_AWARD] == 0 else (pips + 2) // 5
        if award > 0:
            _add_points(s, p, winner, award)
    s[OUT_SEAT] = out_seat
    s[LAST_WINNER] = winner
    s[LAST_AWARD] = award
    s[H_HAND] += 1
    over = p[P_MATCH] == 0
    if not over:  # T-12: a match goes on until a side reaches target
        if _target_reached(s, p):
            over = True
        elif s[H_HAND] >= p[P_MAXHANDS]:
            over = True
            s[H_TRUNC] = 1
    if over:
        _over(s)
    else:
        _deal(s, p)


@njit(cache=True, _nrt=False)
def _can_act(s, p, k, fits):
    """Whether seat k could do anything on a turn now (play, set, or draw); `fits`: the tiles
    that could be placed now (the special tiles before the set)."""
    if s[WASHED + k] == 1:
        return False
    h = s[HANDS + k]
    if h & fits:
        return True
    if p[P_NP] < 4:
        avail = _boneyard(s) - (p[P_RESERVE] if h == 0 else 0)
        if avail > 0:
            return True
    return False


@njit(cache=True, _nrt=False)
def _next_active(s, p, seat):
    n = p[P_NP]
    k = seat
    for _i in range(n):
        k = k + 1 if k + 1 < n else 0
        if s[WASHED + k] == 0:
            return k
    return -1


@njit(cache=True, _nrt=False)
def _pass_turn(s, p, seat):
    """Hand the turn on after a seat's turn; detect a block (nobody can act)."""
    s[EXTRA] = 0
    s[JUST_DREW] = 0
    anyone = False
    fits = SPECIAL_MASK if lay_placed(s, LAY) == 0 else lay_playable(s, LAY, FULL_MASK)
    for k in range(p[P_NP]):
        if _can_act(s, p, k, fits):
            anyone = True
            break
    nxt = _next_active(s, p, seat)
    if not anyone or nxt < 0:
        _end_hand(s, p, -1)
        return
    if lay_placed(s, LAY) == 0:
        s[DUTY] = nxt
    s[H_TURN] = nxt


@njit(cache=True, _nrt=False)
def _place(s, p, seat, t, arm):
    """Place tile t on arm; count (T-3), obligation (T-2), washed up / going out (T-6)."""
    lay_place(s, LAY, t, arm)
    s[HANDS + seat] &= ~(1 << t)
    s[PLAYED_BY + t] = seat
    s[PLAYED_MASK + seat] |= 1 << t
    s[JUST_DREW] = 0
    s[DUTY] = -1
    # T-3: every placement is counted, the set included; a positive multiple of 5 scores count / 5
    c = lay_count(s, LAY)
    s[COUNT] = c
    if c > 0 and c % 5 == 0:
        _add_points(s, p, seat, c // 5)
        if p[P_MATCH] == 1 and _target_reached(s, p):  # T-12: the moment it is reached
            s[OUT_SEAT] = -1
            s[LAST_WINNER] = -1
            s[LAST_AWARD] = 0
            s[H_HAND] += 1
            _over(s)
            return
    # T-2: a special tile (double or score tile) obliges the same seat to play again; T-3: the set
    # (always special) too, and obligations chain
    if _is_special(t):
        if s[HANDS + seat] == 0 and p[P_NP] == 4:
            s[WASHED + seat] = 1  # T-6, 4 players
            _pass_turn(s, p, seat)
        else:
            s[EXTRA] = 1  # same seat again
    elif s[HANDS + seat] == 0:
        _end_hand(s, p, seat)  # a proper domino
    else:
        _pass_turn(s, p, seat)


@njit(cache=True, _nrt=False)
def _only_action(s, p, hand):
    """The single legal action for `hand` (seat to act), -1 if there are several, -2 if none."""
    return lay_single_action(s, LAY, hand, SPECIAL_MASK, p[P_ARMS])


@njit(cache=True, _nrt=False)
def _draw_one(s, seat):
    t = s[DECK + s[DECK_POS]]
    s[DECK_POS] += 1
    s[HANDS + seat] |= 1 << t
    s[DRAWN + seat] += 1
    return t


@njit(cache=True, _nrt=False)
def _advance(s, p):
    """Take forced steps (draws, passes, duty passing, single placements) until a real decision."""
    n = p[P_NP]
    while s[H_DONE] == 0:
        seat = s[H_TURN]
        hand = s[HANDS + seat]
        a = _only_action(s, p, hand)
        if a == -1:
            return
        if a >= 0:
            # a forced placement is public: the seat had nothing else it could place
            if lay_placed(s, LAY) == 0:
                s[NOSPEC + seat] = 1
            else:
                s[VOID + seat] |= lay_open_pips(s, LAY)
            _place(s, p, seat, a >> p[P_ARM_BITS], a & (p[P_ARMS] - 1))
            continue
        if lay_placed(s, LAY) == 0:  # the set duty without a special tile (T-5)
            s[NOSPEC + seat] = 1
            if n < 4:
                got = False
                while _boneyard(s) > 0:
                    t = _draw_one(s, seat)
                    if _is_special(t):
                        got = True
                        break
                if got:
                    continue  # holds exactly one special tile: a forced set
            _pass_turn(s, p, seat)
            continue
        # T-7: nothing playable (a normal turn or an obliged play, T-3): 2-3 players draw until
        # a playable tile comes and must play it; 4 players, or nothing to draw: the turn ends
        # (T-6: the reserve stays in the boneyard; the seat's voids: what it showed it lacks, counting
        # the tile it must now play as played)
        end = s[BONE_END] - (p[P_RESERVE] if hand == 0 else 0) if n < 4 else s[DECK_POS]
        got, kept = draw_until_playable(s, s, DECK, end, DRAW_SLOTS, seat, lay_playable(s, LAY, FULL_MASK),
                                        lay_open_pips(s, LAY))
        if kept > 0:
            s[NOSPEC + seat] = 0  # kept tiles are unseen and may be special
        if got:
            continue
        if s[HANDS + seat] == 0:
            s[WASHED + seat] = 1  # stranded at the reserve with nothing: washed up (T-6)
        _pass_turn(s, p, seat)


@njit(cache=True, _nrt=False)
def _settle_pending(s):
    """Rewards earned before the first decision are paid with the next step's (if the game is
    already over, no step follows: they stay in the header, where the env reads them at reset)."""
    if s[H_DONE] == 1:
        return
    for k in range(MAX_PLAYERS):
        s[PENDING + k] += s[H_REWARD + k]
    for k in range(MAX_SEATS):
        s[H_REWARD + k] = 0


@njit(cache=True, _nrt=False)
def _reset_kernel(s, seed, p):
    for i in range(LAY):  # the deal's lay_init clears the layout (its history is never read stale)
        s[i] = 0
    s[H_RNG] = seed
    s[OUT_SEAT] = -1
    s[LAST_WINNER] = -1
    _deal(s, p)
    _advance(s, p)
    _settle_pending(s)


@njit(cache=True, _nrt=False)
def _is_legal(s, p, a):
    t = a >> p[P_ARM_BITS]
    arm = a & (p[P_ARMS] - 1)
    if t >= N_TILES:
        return False
    if (s[HANDS + s[H_TURN]] >> t) & 1 == 0:
        return False
    if lay_placed(s, LAY) == 0:  # T-5: the set is a special tile, on arm 0
        return arm == 0 and _is_special(t)
    # T-7: play is compulsory: placements are the only actions (draws and passes are forced steps)
    # a tile fitting twin arms (layout.py) is offered on the lowest one: the others mirror it
    return lay_can_place(s, LAY, t, arm) and lay_offered_arm(s, LAY, arm)


@njit(cache=True)
def _legal_set_kernel(s, p, out):
    """Legality action by action through the step's own check (tests compare it with the mask)."""
    legal_set(s, p, out, N_TILES * p[P_ARMS], _is_legal)


@njit(cache=True)
def _check_kernel(s, p):
    """Tile conservation (hands, layout, boneyard, out of play partition the set) and invariants."""
    n = p[P_NP]
    seen = 0
    for k in range(n):
        h = s[HANDS + k]
        if seen & h:
            return False
        seen |= h
        if s[WASHED + k] == 1 and h != 0:
            return False
    for k in range(n, MAX_PLAYERS):
        if s[HANDS + k] != 0:
            return False
    placed = 0
    for t in range(N_TILES):
        if s[PLAYED_BY + t] >= 0:
            if (seen >> t) & 1:
                return False
            seen |= 1 << t
            placed += 1
    if placed != lay_placed(s, LAY):
        return False
    if s[DECK_POS] > s[BONE_END] or s[BONE_END] > N_TILES:
        return False
    for i in range(s[DECK_POS], N_TILES):
        t = s[DECK + i]
        if t < 0 or t >= N_TILES or (seen >> t) & 1:
            return False
        seen |= 1 << t
    if seen != FULL_MASK:
        return False
    if p[P_TEAMS] == 1 and (s[SCORES] != s[SCORES + 2] or s[SCORES + 1] != s[SCORES + 3]):
        return False
    if s[H_DONE] == 0:
        mover = s[H_TURN]
        if mover < 0 or mover >= n or s[WASHED + mover] == 1:
            return False
        if (lay_placed(s, LAY) == 0) != (s[DUTY] == mover):
            return False
        if lay_placed(s, LAY) == 0 and s[EXTRA] == 1:
            return False
        if s[JUST_DREW] == 1 and popcount(lay_playable(s, LAY, s[HANDS + mover])) != 1:
            return False
        if _only_action(s, p, s[HANDS + mover]) != -1:
            return False  # the engine stops only at real decisions
    return True


@njit(cache=True, inline="always")
def _step_kernel(s, a, p):
    return step_kernel(s, a, p, N_TILES * p[P_ARMS], _is_legal, _play, _advance)


@njit(cache=True, inline="always")
def _play(s, p, a):
    for k in range(MAX_PLAYERS):  # rewards earned before the first decision (see _settle_pending)
        s[H_REWARD + k] = s[PENDING + k]
        s[PENDING + k] = 0
    _place(s, p, s[H_TURN], a >> p[P_ARM_BITS], a & (p[P_ARMS] - 1))


@njit(cache=True, inline="always")
def _mask_kernel(s, p, out):
    out[:] = 0
    if s[H_DONE] == 1:
        return
    lay_fill_mask(s, LAY, s[HANDS + s[H_TURN]], SPECIAL_MASK, p[P_ARMS], out)


@njit(cache=True, inline="always")
def _obs_kernel(s, p, v, out):
    """Every slot written once (no clearing pass); bitmask pieces expanded bit by bit by tiles.expand_bits (one vectorizable loop)."""
    n = p[P_NP]
    A = p[P_ARMS]
    expand_bits(s[HANDS + v], out, 0, N_TILES)
    lay_obs_arms(s, LAY, A, NP1, out, _obs_at(n, A, I_ARM_ENDS))  # arm_ends, arm_tiles, arm_double
    out[_obs_at(n, A, I_COUNT)] = s[COUNT]
    o_played = _obs_at(n, A, I_PLAYED_BY)
    o_sizes = _obs_at(n, A, I_SIZES)
    out[_obs_at(n, A, I_BONEYARD)] = _boneyard(s)
    o_voids = _obs_at(n, A, I_VOIDS)
    o_nospec = _obs_at(n, A, I_NOSPEC)
    o_drawn = _obs_at(n, A, I_DRAWN)
    o_washed = _obs_at(n, A, I_WASHED)
    o_scores = _obs_at(n, A, I_SCORES)
    o_to_move = _obs_at(n, A, I_TO_MOVE)
    o_setter = _obs_at(n, A, I_SETTER)
    live = s[H_DONE] == 0
    turn = s[H_TURN] if live else -1
    duty = s[DUTY] if live else -1
    j = v
    for r in range(n):
        expand_bits(s[PLAYED_MASK + j], out, o_played + r * N_TILES, N_TILES)
        out[o_sizes + r] = popcount(s[HANDS + j])
        expand_bits(s[VOID + j], out, o_voids + r * NP1, NP1)
        out[o_nospec + r] = s[NOSPEC + j]
        out[o_drawn + r] = s[DRAWN + j]
        out[o_washed + r] = s[WASHED + j]
        out[o_scores + r] = s[SCORES + j]
        out[o_to_move + r] = 1 if j == turn else 0
        out[o_setter + r] = 1 if j == duty else 0
        j = j + 1 if j + 1 < n else 0
    out[_obs_at(n, A, I_EXTRA)] = s[EXTRA]
    out[_obs_at(n, A, I_JUST_DREW)] = s[JUST_DREW]


@njit(cache=True)
def _sample_kernel(s, p, v, seed):
    n = p[P_NP]
    ns = s.copy()
    # stock = the boneyard (and out-of-play tiles of a test deal): the rest
    unseen, tiles, k, allowed, cap = unseen_setup(s, v, n, HANDS, PLAYED_MASK, N_TILES, s[DECK_POS])
    for j in range(n):
        if j != v:
            forbid = pips_to_tiles(s[VOID + j], NP1)
            if s[NOSPEC + j] == 1:
                forbid |= SPECIAL_MASK
            allowed[j] &= ~forbid
    rng_arr = np.empty(1, dtype=np.int64)
    rng_arr[0] = seed
    mover = s[H_TURN]
    # the seat to act just drew: it holds exactly one playable tile (the drawn one), exempt from
    # its voids and no_special; it gets that tile first, the rest is dealt under the constraints
    pending = s[H_DONE] == 0 and mover != v and s[JUST_DREW] == 1
    candidates = lay_playable(s, LAY, unseen)
    pool = np.empty(N_TILES, dtype=np.int64)
    # fails closed: an empty row if no consistent redeal exists (sampling.py), never the true state
    dealt = False
    for _attempt in range(100_000):
        if not redeal_attempt(ns, v, n, tiles, k, allowed, cap, rng_arr, HANDS, ns, DECK, s[DECK_POS],
                              mover if pending else -1, candidates, pool):
            if not pending:
                break  # deal_consistent is exact: no consistent deal exists
            continue
        dealt = True
        # an opponent at a decision visibly has a choice: keep only samples where it does (after
        # 100,000 rejections the last consistent deal stands)
        if s[H_DONE] == 1 or mover == v or _only_action(ns, p, ns[HANDS + mover]) == -1:
            break
    if not dealt:
        return np.empty(0, dtype=np.int64)
    finish_redeal(ns, rng_arr, H_RNG, ns, DECK, s[DECK_POS], N_TILES)
    return ns


# ------------------------------------------------------------------------------ Python side
# heuristic: domino_agents.heuristic_fives.FivesHeuristic, Racehorse's weights
class RacehorseGame(Game, kernels=globals(),
                    facts=Facts(RacehorseConfig, ROW, "racehorse.md", "T", "fives:racehorse", "first_setter", 6.0)):
    """Racehorse engine bound to one config."""

    def __init__(self, config: RacehorseConfig, name: str = "racehorse_v0"):
        c = config
        self.num_players = c.num_players
        self.n_tiles = N_TILES
        self.num_arms = SPIN_ARMS[c.spinner]
        self.num_actions = N_TILES * self.num_arms
        self.params = np.array(
            [c.num_players, int(c.teams), SPIN_MODES[c.spinner], self.num_arms,
             0 if c.award == "per_pip" else 1, int(c.match), c.target, c.max_hands,
             -1 if c.first_setter is None else c.first_setter, RESERVE[c.num_players],
             self.num_arms.bit_length() - 1],
            dtype=np.int64,
        )
        super().__init__(config, name)

    def obs_pieces(self):
        return OBS.pieces(self.num_players, self.num_arms)

    def obs_high(self) -> float:
        return float(max(self.config.target * 10, 1000))

    def max_decisions(self) -> int:
        """Every decision places a tile: at most 28 per hand."""
        return N_TILES * (self.config.max_hands if self.config.match else 1)

    # ---- actions
    def arm_name(self, arm: int) -> str:
        if arm == 0:
            return "left end (arm 0; the set too)"
        if arm == 1:
            return "right end (arm 1)"
        k, j = divmod(arm - 2, 2)
        return f"spinner {k + 1}'s {'first (up)' if j == 0 else 'second (down)'} branch (arm {arm})"

    def encode_action(self, a: int, b: int, arm: int = 0) -> int:
        """Action id for placing tile (a, b) on `arm` (0 left, also the set; 1 right; 2k+2 / 2k+3
        the (k+1)-th spinner's branches)."""
        if isinstance(arm, bool) or not isinstance(arm, (int, np.integer)) or not 0 <= arm < self.num_arms:
            raise ValueError(f"{self.name}: arm must be an int 0..{self.num_arms - 1} "
                             f"(spinner={self.config.spinner!r}), got {arm!r}")
        t = tile_id(a, b)
        if t >= N_TILES:
            raise ValueError(f"{self.name}: tile ({a}, {b}) is not in a double-six set")
        return t * self.num_arms + int(arm)

    def describe_action(self, action: int) -> str:
        if not 0 <= action < self.num_actions:
            return f"out of range (0..{self.num_actions - 1})"
        t, arm = divmod(int(action), self.num_arms)
        return f"play {tile_name(t)} on the {self.arm_name(arm)}"

    def action_table(self) -> ActionTable:
        """Action ``tile * num_arms + arm`` places tile id ``tile`` on that arm (core.Game.action_table)."""
        return tile_arm_table("line", N_TILES, self.num_arms, self.num_actions)

    # ---- pictures (core.Game.describe_table)
    def describe_table(self, state: np.ndarray, table: Table, face_up: list[bool]) -> None:
        s = state
        setter = self.setter(s) if not s[H_DONE] else -1
        for k, seat in enumerate(table.seats):
            hand = self.hand(s, k)
            seat.count = len(hand)
            if face_up[k]:
                seat.tiles = hand
            seat.lines.append(f"score {self.scores(s)[k]}")
            if self.washed_up(s)[k]:
                seat.lines.append("washed up")
            if setter == k:
                seat.lines.append("sets")
        table.info += [f"hand {hand_number(s)}", f"boneyard {len(self.boneyard(s))}"]
        table.play = line_play(self.layout(s), self.line(s), self.open_ends(s))
        if table.play is not None:
            table.info.append(f"count {self.count(s)}")

    # ---- deals
    def set_deal(self, state: np.ndarray, deal: dict) -> None:
        """Start a new episode from a given deal (module docstring, "Deal format")."""
        self._check_row(state)
        n = self.num_players
        hands, stock, first = self._deal_parts(deal, ("hands", "stock", "first", "scores"),
                                               self.config.first_setter or 0)
        if stock and n == 4:
            raise DealError(f"{self.name}: 4 players have no stock (boneyard); got {len(stock)} stock tiles")
        scores = deal.get("scores", [0] * n)
        cap = self.config.target - 1
        if (not isinstance(scores, (list, tuple)) or len(scores) != n
                or any(not is_int(x) or not 0 <= x <= cap for x in scores)):
            raise DealError(f"{self.name}: scores must be a list of {n} ints in 0..{cap} (below target="
                            f"{self.config.target}: a side at the target has won); got {scores!r}")
        if self.config.teams and (scores[0] != scores[2] or scores[1] != scores[3]):
            raise DealError(f"{self.name}: with teams partners share a score (seats 0 & 2, 1 & 3); got {list(scores)}")
        hand_ids, stock_ids, seen = self._deal_ids(hands, stock)
        rest = [t for t in range(N_TILES) if t not in seen]
        s = state
        self._fresh_row(s)
        s[OUT_SEAT] = -1
        s[LAST_WINNER] = -1
        s[DECK:DECK + N_TILES] = [t for h in hand_ids for t in h] + stock_ids + rest
        for k in range(n):
            s[HANDS + k] = sum(1 << t for t in hand_ids[k])
            s[SCORES + k] = int(scores[k])
        s[DECK_POS] = sum(len(h) for h in hand_ids)
        s[BONE_END] = s[DECK_POS] + len(stock_ids)
        s[SETTER] = first
        _new_hand_slots(s, self.params)
        _advance(s, self.params)
        _settle_pending(s)

    def deal_of(self, state: np.ndarray) -> dict:
        """The deal of the hand in play, in the format `set_deal` takes: what was dealt, read from
        the deck (which keeps its order all hand) and each seat's hand and placed tiles, so it works
        after the forced set too, and the nominal setter. `set_deal` of it on a fresh row gives the
        same decision. For a later hand of a match it names the tiles and setter only: the scores
        before that hand are not kept in the row (pass them as "scores" to start from it)."""
        self._check_state(state)
        s, n = state, self.num_players
        deck = s[DECK:DECK + N_TILES]
        dealt_end = int(s[DECK_POS]) - int(s[DRAWN:DRAWN + n].sum())
        dealt = sum(1 << int(t) for t in self._dealt(deck, dealt_end, int(s[DECK_POS]), N_TILES))
        hands = [[(int(TILE_A[t]), int(TILE_B[t])) for t in range(N_TILES)
                  if ((dealt & int(s[HANDS + k] | s[PLAYED_MASK + k])) >> t) & 1] for k in range(n)]
        stock = [(int(TILE_A[t]), int(TILE_B[t])) for t in deck[dealt_end:s[BONE_END]]]
        return {"hands": hands, "stock": stock, "first": int(s[SETTER])}

    # ---- validate (core.Game.validate: the ranges of `slots`, then these)
    def _validate_more(self, state):
        """The relations the kernels rely on: the boneyard pointers in order, the layout what its
        history gives (T-4 this config's spinners, T-5 the set a special tile), the played masks and
        played-by slots naming the tiles on the table, the count (T-3), an obliged play (T-2) or a
        just-drawn tile only in play, the draws within the deck dealt, scores below the target in a
        match in play (T-12). Tile conservation and the turn's real decision: `_check_kernel`."""
        s, n = state, self.num_players
        arms = int(self.params[P_ARMS])
        problem = None
        if not s[DECK_POS] <= s[BONE_END]:
            problem = f"deck position {int(s[DECK_POS])} is past the boneyard end {int(s[BONE_END])}"
        problem = (problem or lay_problem(s, LAY, arms, N_TILES)
                   or lay_replay_problem(s, LAY, arms, int(self.params[P_SPIN])))
        if problem:
            self._refuse(problem)
        line = self.line(s)
        self._check_played(s, PLAYED_MASK, MAX_PLAYERS, lay_history_tiles(s, LAY), PLAYED_BY, N_TILES)
        if line and not (SPECIAL_MASK >> line[0][0]) & 1:
            self._refuse(f"the set {tile_name(line[0][0])} (layout history entry 0) is not a special tile (T-5)")
        if s[COUNT] != lay_count(s, LAY):
            self._refuse(f"count (slot {COUNT}) is {int(s[COUNT])}; the layout's open ends count "
                         f"{int(lay_count(s, LAY))} (T-3)")
        drawn = int(s[DRAWN:DRAWN + n].sum())
        if drawn > s[DECK_POS] or (n == 4 and drawn):
            self._refuse(f"drawn counts (slots {DRAWN}..{DRAWN + n - 1}) add up to {drawn}; allowed: at most the "
                         f"{int(s[DECK_POS])} tiles dealt and drawn from the deck, 0 with 4 players (T-7)")
        forbid = [pips_to_tiles(int(s[VOID + k]), NP1) | (SPECIAL_MASK if s[NOSPEC + k] else 0) for k in range(n)]
        self._check_known(s, HANDS, forbid, f"voids and no-special flags (slots {VOID}.., {NOSPEC}.., T-5, T-7)",
                          exempt=int(lay_playable(s, LAY, FULL_MASK)) if s[JUST_DREW] else 0)
        if s[H_STEPS] > 0 and s[PENDING:PENDING + MAX_PLAYERS].any():
            self._refuse(f"pending rewards (slots {PENDING}..{PENDING + MAX_PLAYERS - 1}) are "
                         f"{[int(x) for x in s[PENDING:PENDING + MAX_PLAYERS]]} after {int(s[H_STEPS])} decisions: "
                         f"they are paid with the first step (allowed: 0 once a step was taken)")
        if s[H_DONE] == 1 and (s[EXTRA] or s[JUST_DREW]):
            self._refuse(f"extra play / just drew (slots {EXTRA}, {JUST_DREW}) are {int(s[EXTRA])}, "
                         f"{int(s[JUST_DREW])} in a finished episode (allowed: 0)")
        if s[H_DONE] == 0:
            if s[EXTRA] == 1 and (not line or s[PLAYED_BY + line[-1][0]] != s[H_TURN]):
                self._refuse(f"extra play (slot {EXTRA}) is 1, but seat {int(s[H_TURN])} to act did not place the "
                             f"last tile (T-2)")
            scores = [int(x) for x in s[SCORES:SCORES + n]]
            if self.config.match and max(scores) >= self.config.target:
                self._refuse(f"scores {scores} (slots {SCORES}..{SCORES + n - 1}): a match in play has every side "
                             f"below target={self.config.target} (T-12)")
            if not self.config.match and s[H_HAND] != 0:
                self._refuse(f"hands done (slot {H_HAND}) is {int(s[H_HAND])}: a single hand in play has none "
                             f"finished")

    # ---- inspection helpers (tests, rendering)
    def hand(self, state, seat) -> list[tuple[int, int]]:
        return [(int(TILE_A[t]), int(TILE_B[t])) for t in range(N_TILES) if (int(state[HANDS + seat]) >> t) & 1]

    def boneyard(self, state) -> list[tuple[int, int]]:
        return [(int(TILE_A[t]), int(TILE_B[t])) for t in state[DECK + state[DECK_POS]:DECK + state[BONE_END]]]

    def scores(self, state) -> list[int]:
        return [int(x) for x in state[SCORES:SCORES + self.num_players]]

    def count(self, state) -> int:
        return int(lay_count(state, LAY))

    def open_ends(self, state) -> dict[int, int]:
        """{arm: pip} of the open arms."""
        return {a: int(lay_arm_end(state, LAY, a)) for a in range(int(lay_num_arms(state, LAY)))
                if lay_arm_open(state, LAY, a)}

    def line(self, state) -> list[tuple[int, int]]:
        """Placements so far as (tile id, arm)."""
        return [(int(t), int(a)) for t, a in lay_history(state, LAY)]

    def washed_up(self, state) -> list[bool]:
        return [bool(state[WASHED + k]) for k in range(self.num_players)]

    def extra_play(self, state) -> bool:
        return bool(state[EXTRA])

    def setter(self, state) -> int:
        """Seat holding the set duty (-1 once the set is down)."""
        return int(state[DUTY])

    def nominal_setter(self, state) -> int:
        """The seat whose turn it is to hold the set duty this hand (T-5), whoever actually set."""
        return int(state[SETTER])

    def last_result(self, state) -> dict:
        """The last finished hand: who went out (-1: block or match ended mid-hand), a seat of the
        side that won the award (-1: none), and the award's points."""
        return {"out": int(state[OUT_SEAT]), "winner": int(state[LAST_WINNER]), "award": int(state[LAST_AWARD])}

    def layout(self, state) -> dict:
        """The layout as laid on the table, for pictures: ``layout.lay_arms`` (the centre tile, each
        arm's tiles from the centre outwards as (inner, outer) pips, the spinners and their branches)."""
        from ..layout import lay_arms

        return lay_arms(state, LAY)

    def render(self, state: np.ndarray, seat: int) -> str:
        s = state
        n = self.num_players
        side = " (teams 0&2 vs 1&3)" if self.config.teams else ""
        lines = [f"{self.name}{side}  hand {int(s[H_HAND]) + (0 if s[H_DONE] else 1)}  "
                 f"boneyard {int(_boneyard(s))}  scores {self.scores(s)}  spinner={self.config.spinner}"]
        lines.append(render_cross(s, LAY, count=self.count(s) if lay_placed(s, LAY) else None))
        for k in range(n):
            tags = []
            if not s[H_DONE] and s[H_TURN] == k:
                tags.append("to move" + (" (obliged extra play)" if s[EXTRA] else "")
                            + (" (must play the tile just drawn)" if s[JUST_DREW] else ""))
            if not s[H_DONE] and s[DUTY] == k:
                tags.append("holds the set duty")
            if s[WASHED + k]:
                tags.append("washed up")
            voids = [q for q in range(NP1) if (int(s[VOID + k]) >> q) & 1]
            extra = ", no double/score tile" if s[NOSPEC + k] else ""
            mark = ("  <- " + "; ".join(tags)) if tags else ""
            lines.append(f"seat {k}: {popcount(s[HANDS + k])} tiles, drew {int(s[DRAWN + k])}, lacks {voids}{extra}{mark}")
        held = " ".join(f"[{a}|{b}]" for a, b in self.hand(s, seat))
        lines.append(f"seat {seat} holds: {held}")
        if s[H_DONE]:
            r = self.last_result(s)
            if r["winner"] >= 0:
                who = f"team {r['winner'] % 2}" if self.config.teams else f"seat {r['winner']}"
                how = f"seat {r['out']} went out" if r["out"] >= 0 else "blocked"
                lines.append(f"over: {how}; {who} wins the hand and scores {r['award']}")
            elif self.config.match and any(x >= self.config.target for x in self.scores(s)):
                lines.append(f"over: target {self.config.target} reached")
            else:
                lines.append("over: no award (tie for lowest, or nobody eligible)")
        return "\n".join(lines)
