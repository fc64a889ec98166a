"""The Draw Game (`draw_v0`) and the Block Game (`block_v0`): one engine, drawing on or off.

The full text - every rule and its ruling, the config, actions, observation, rewards, deals - is
docs/games/draw.md (rules-spec section 1, seed 002). This docstring is its summary, which
tests/docs/test_docs.py keeps in step with it.

Rules in brief (D-1..D-5 are the spec's ids, D-6 this engine's):
- Double-six (28 tiles) or double-nine (55, ``max_pip=9``), 2-4 players. D-1 hands of 7/5/5 for
  2/3/4 players (double-nine 9/7/7); the rest is the boneyard. The small sets double-two (6 tiles)
  and double-three (10), ``max_pip=2`` or ``3`` with ``hand_size`` set (D-1 names no hand size for
  them), are the same rules on fewer tiles: games whose whole tree can be walked (configs/small/). The opener (random in hand 1, or
  ``first_seat``; D-5 in a match whoever placed the previous hand's last tile) leads any tile.
- D-6 one line with two ends, no spinner: a double lies in line.
- A seat that can match an end must play; one that cannot draws until it can and plays that tile
  (D-2 no reserve: to the boneyard's last tile), or passes with the boneyard empty. The Block Game
  (``drawing=False``) leaves the undealt tiles out of play: a seat that cannot play passes.
- D-3 the seat that went out, or in a block the unique lowest pip total, scores the sum of all
  opponents' pips; D-4 a tie for lowest in a block scores nothing. ``match=True`` plays hands to
  ``target`` as one episode. Rewards are zero-sum: losers pay the winner their pips.
- Forced steps (draws, passes, a lone legal action) are the engine's; agents see decisions only.

Actions: ``Discrete(2 * n_tiles)``, action ``tile * 2 + end`` (tile ids: tiles.py):
    tile * 2 + 0   play the tile on the left end (the lead too)
    tile * 2 + 1   play it on the right end (offered only while the two ends show different pips)

Observation (float32, seat-relative; n = num_players, T = tiles, P = max_pip + 1):
    hand         (T,)       my tiles
    played_by    (n, T)     the tiles seat r placed
    ends         (2, P)     pip at the left / right end
    hand_sizes   (n,)       tiles held
    boneyard     (1,)       tiles left to draw
    voids        (n, P)     numbers seat r showed it lacks
    drawn        (n,)       tiles drawn this hand
    scores       (n,)       match scores
    to_move      (n,)       seat to act
    just_drew    (1,)       the seat to act drew: it must play the tile it drew

Deal format (``set_deal``; the page's "Deals"): ``{"hands": [[(a, b), ...] per seat], "stock":
[(a, b), ...] the boneyard in draw order, "first": seat to lead}``.
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
    ConfigError,
    DealError,
    Facts,
    Game,
    StateError,
    check_bool,
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
    lay_block,
    lay_history,
    lay_history_tiles,
    lay_init,
    lay_line_fill_mask,
    lay_line_fits,
    lay_line_open_pips,
    lay_line_single_action,
    lay_place_line,
    lay_placed,
    lay_playable,
    lay_problem,
    lay_replay_problem,
    render_line,
)
from ..rng import rng_below
from ..sampling import finish_redeal, redeal_attempt, shuffle_and_deal, unseen_setup
from ..slots import ObsLayout, Slots, high, last_seat, seats, tile_count, tile_mask
from ..table import Table, hand_number, line_play
from ..tiles import (
    MAX_TILES,
    PIP_MASK,
    TILE_A,
    TILE_B,
    mask_pips,
    num_tiles,
    pips_to_tiles,
    popcount,
    stream_bits,
    stream_end,
    tile_id,
    tile_name,
)

MAX_PLAYERS = 4

# params
P_NP, P_MAXPIP, P_NTILES, P_HAND, P_DRAW, P_MATCH, P_TARGET, P_FIRST, P_MAXHANDS = range(9)

# state slots (after the common header), declared once (slots.py): bounds are functions of the game
# hot slots first (touched every step), then the deck, packed one byte per tile (DECK_BYTES in the
# row's bytes, `_deck(s)`): a draw reads it and a deal writes it, and packed it sits in the hot
# cache lines (as one int64 slot per tile it was a cache miss at every draw in a batch of rows);
# the layout's history (one write per placement, never cleared) last
ROW = Slots("draw", base=HEADER)
HANDS = ROW.slot("hands", MAX_PLAYERS, 0, tile_mask, used=seats, doc="tile bitmask per seat")
DECK_POS = ROW.slot("deck position", 1, 0, tile_count, doc="next tile drawn is deck[DECK_POS] (deck: the packed deck)")
BONE_END = ROW.slot("boneyard end", 1, 0, tile_count,
                    doc="boneyard = deck[DECK_POS:BONE_END]; deck[BONE_END:n_tiles] out of play")
VOID = ROW.slot("voids", MAX_PLAYERS, 0, lambda g: (1 << (g.config.max_pip + 1)) - 1,
                doc="pip bitmask: numbers the seat showed it lacks")
DRAWN = ROW.slot("drawn", MAX_PLAYERS, 0, tile_count)
SCORES = ROW.slot("scores", MAX_PLAYERS, 0, high)
LAST_PLACER = ROW.slot("last placer", 1, -1, last_seat)
LAST_WINNER = ROW.slot("last winner", 1, -1, last_seat)
FIRST_SEAT = ROW.slot("first seat", 1, 0, last_seat)
JUST_DREW = ROW.slot("just drew", 1, 0, 1, doc="1 while the seat to act holds a tile it just drew and must play")
PLAYED_MASK = ROW.slot("played", MAX_PLAYERS, 0, tile_mask, used=seats,
                       doc="per seat: bitmask of the tiles it placed this hand")
DECK = ROW.slot("deck", (MAX_TILES + 7) // 8,
                doc="packed: one int8 tile id per byte (_deck(s)); checked by _check_kernel")
DECK_BYTES = DECK * 8  # tile k of the deck is _deck(s)[DECK_BYTES + k] (int8)
LAY = lay_block(ROW, 2, max_pip=lambda g: g.config.max_pip, n_tiles=tile_count)
STATE_SIZE = ROW.close()
DRAW_SLOTS = (DECK_POS, HANDS, DRAWN, VOID, JUST_DREW)  # core.draw_until_playable's
HOT_SIZE = DECK  # reset clears [0, HOT_SIZE); the deal writes the deck, lay_init the layout

# D-1: tiles dealt to each seat by (max_pip, num_players); the rest is the boneyard
DEFAULT_HAND = {(6, 2): 7, (6, 3): 5, (6, 4): 5, (9, 2): 9, (9, 3): 7, (9, 4): 7}
# the sets: double-six and double-nine (rules-spec section 1), and the small double-two and
# double-three sets of the exploitability configs (configs/small/), which need hand_size
SETS = (2, 3, 6, 9)


def _obs_shapes(n, max_pip):
    """The observation's pieces (module docstring), declared once: `obs_pieces` (so `decode`) and
    the offsets `_obs_fill` writes at (OBS_AT) both come from here."""
    nt, np1 = num_tiles(max_pip), max_pip + 1
    return [
        ("hand", (nt,)), ("played_by", (n, nt)), ("ends", (2, np1)), ("hand_sizes", (n,)),
        ("boneyard", (1,)), ("voids", (n, np1)), ("drawn", (n,)), ("scores", (n,)),
        ("to_move", (n,)), ("just_drew", (1,)),
    ]


OBS = ObsLayout(_obs_shapes, range(2, MAX_PLAYERS + 1), SETS)
OBS_AT = OBS.at  # OBS_AT[n, max_pip, piece]: first entry of the piece
I_HAND_SIZES, I_BONEYARD, I_DRAWN, I_SCORES = (OBS.index(k) for k in ("hand_sizes", "boneyard", "drawn", "scores"))


@dataclass(frozen=True)
class DrawConfig:
    """Rule parameters of the Draw/Block Game (defaults: rules-spec section 1)."""

    num_players: int = 2
    max_pip: int = 6
    hand_size: int | None = None  # None: D-1 table
    drawing: bool = True  # False: the Block Game
    first_seat: int | None = None  # None: random in hand 1
    match: bool = False
    target: int = 100
    max_hands: int = 1000

    def __post_init__(self):
        g = "draw"
        check_int(g, "num_players", self.num_players, 2, MAX_PLAYERS)
        check_choice(g, "max_pip", self.max_pip, list(SETS))
        if self.hand_size is not None:
            check_int(g, "hand_size", self.hand_size, 1, num_tiles(self.max_pip) // self.num_players)
        elif (self.max_pip, self.num_players) not in DEFAULT_HAND:
            raise ConfigError(f"{g}: max_pip={self.max_pip} has no D-1 hand size; set hand_size "
                              f"(1..{num_tiles(self.max_pip) // self.num_players} with {self.num_players} players)")
        check_bool(g, "drawing", self.drawing)
        if self.first_seat is not None:
            check_int(g, "first_seat", self.first_seat, 0, self.num_players - 1)
        check_match(g, self)

    @property
    def deal_size(self) -> int:
        return self.hand_size if self.hand_size is not None else DEFAULT_HAND[(self.max_pip, self.num_players)]


# ------------------------------------------------------------------------------ kernels
@njit(cache=True, inline="always")
def _deck(s):
    """The row's bytes, where the packed deck lives (a view: no copy, no allocation)."""
    return s.view(np.int8)


@njit(cache=True, inline="always")
def _deal(s, p):
    n = p[P_NP]
    nt = p[P_NTILES]
    hs = p[P_HAND]
    for k in range(MAX_PLAYERS):
        s[HANDS + k] = 0
        s[VOID + k] = 0
        s[DRAWN + k] = 0
        s[PLAYED_MASK + k] = 0
    # D-1: hs tiles to each seat (the D-1 table unless hand_size is set)
    s[DECK_POS] = shuffle_and_deal(s, H_RNG, _deck(s), DECK_BYTES, nt, HANDS, n, hs)
    # the Block Game (drawing=False) has no boneyard: the undealt tiles stay out of play, so nobody
    # ever draws (D-2's drawing never starts) and a seat that cannot play passes
    s[BONE_END] = nt if p[P_DRAW] == 1 else n * hs
    # D-6: one line, two ends, no spinner (a double lies in line and opens two sides only)
    lay_init(s, LAY, 2, SPIN_NONE)
    if s[H_HAND] == 0:
        first = p[P_FIRST] if p[P_FIRST] >= 0 else rng_below(s, H_RNG, n)
    else:
        # D-5: in a match, whoever placed the last tile of the previous hand starts the next
        first = s[LAST_PLACER]
    s[FIRST_SEAT] = first
    s[H_TURN] = first


@njit(cache=True, _nrt=False)
def _end_hand(s, p, out_seat):
    """Score the hand (out_seat = who went out, -1 for a block) and deal on or finish."""
    n = p[P_NP]
    winner = out_seat
    if winner < 0:  # blocked: the unique lowest pip total wins (D-3), a tie scores nothing (D-4)
        best = 1 << 30
        ties = 0
        for k in range(n):
            pk = mask_pips(s[HANDS + k])
            if pk < best:
                best = pk
                winner = k
                ties = 1
            elif pk == best:
                ties += 1
        if ties > 1:
            winner = -1
    if winner >= 0:  # D-3: the winner scores the sum of all opponents' pips (each loser pays its own)
        score = 0
        for k in range(n):
            if k != winner:
                pk = mask_pips(s[HANDS + k])
                score += pk
                s[H_REWARD + k] -= pk
        s[H_REWARD + winner] += score
        s[SCORES + winner] += score
    s[LAST_WINNER] = winner
    s[H_HAND] += 1
    over = p[P_MATCH] == 0
    if not over:
        for k in range(n):
            if s[SCORES + k] >= p[P_TARGET]:
                over = True
        if not over and s[H_HAND] >= p[P_MAXHANDS]:
            over = True
            s[H_TRUNC] = 1
    if over:
        s[H_DONE] = 1
        s[H_TURN] = -1
    else:
        _deal(s, p)


@njit(cache=True, inline="always")
def _place(s, p, seat, t, arm):
    lay_place_line(s, LAY, t, arm)
    s[HANDS + seat] &= ~(1 << t)
    s[PLAYED_MASK + seat] |= 1 << t
    s[LAST_PLACER] = seat
    s[JUST_DREW] = 0
    if s[HANDS + seat] == 0:
        _end_hand(s, p, seat)
    else:
        s[H_TURN] = seat + 1 if seat + 1 < p[P_NP] else 0


@njit(cache=True, inline="always")
def _only_action(s, hand):
    """The single legal action for `hand`, -1 if there are several, -2 if none (any tile leads)."""
    return lay_line_single_action(s, LAY, hand)


@njit(cache=True, inline="always")
def _anyone_can_play(s, p):
    fits = lay_line_fits(s, LAY)
    for k in range(p[P_NP]):
        if s[HANDS + k] & fits:
            return True
    return False


@njit(cache=True, inline="always")
def _advance(s, p):
    """Take forced steps (draws, passes, single placements) until a real decision or the end."""
    n = p[P_NP]
    while s[H_DONE] == 0:
        seat = s[H_TURN]
        hand = s[HANDS + seat]
        a = _only_action(s, hand)
        if a == -1:
            return
        if a >= 0:
            _place(s, p, seat, a >> 1, a & 1)
            continue
        # D-2: nothing playable: draw one tile at a time until one is playable (then it must be
        # played: the next loop pass auto-plays it or stops at the seat's choice of ends); no
        # reserve, the boneyard can be drawn to its last tile; boneyard empty: pass
        # what the seat showed it lacks: the open ends (the line is never empty here: any tile leads),
        # counting the tile it must now play as played
        got, _ = draw_until_playable(s, _deck(s), DECK_BYTES, s[BONE_END], DRAW_SLOTS, seat,
                                     lay_line_fits(s, LAY), lay_line_open_pips(s, LAY))
        if got:
            continue
        if not _anyone_can_play(s, p):  # blocked: nobody can play and the boneyard is empty
            _end_hand(s, p, -1)
            continue
        s[H_TURN] = seat + 1 if seat + 1 < n else 0


@njit(cache=True, inline="always")
def _reset_kernel(s, seed, p):
    for i in range(HOT_SIZE):  # the deck is rewritten by the deal, the history by placements
        s[i] = 0
    s[H_RNG] = seed
    s[LAST_PLACER] = -1
    s[LAST_WINNER] = -1
    _deal(s, p)
    _advance(s, p)


@njit(cache=True, inline="always")
def _is_legal(s, p, a):
    # D-2: a seat that can match an end must play a tile (there is no draw or pass action: those
    # are forced steps, taken by _advance); D-6: the opener plays any tile
    t = a >> 1
    if t >= p[P_NTILES]:
        return False
    if (s[HANDS + s[H_TURN]] >> t) & 1 == 0:
        return False
    if lay_placed(s, LAY) == 0:
        return a & 1 == 0
    e = lay_arm_end(s, LAY, a & 1)
    if a & 1 == 1 and e == lay_arm_end(s, LAY, 0):
        return False  # both ends show e: the mirror-image placement is offered on end 0 only
    return (PIP_MASK[e] >> t) & 1 == 1


@njit(cache=True, inline="always")
def _play(s, p, a):
    _place(s, p, s[H_TURN], a >> 1, a & 1)


@njit(cache=True)
def _legal_set_kernel(s, p, out):
    """Legality action by action through the step's own check (tests compare it with the mask)."""
    legal_set(s, p, out, 2 * p[P_NTILES], _is_legal)


@njit(cache=True)
def _check_kernel(s, p):
    """Tile conservation: hands, line, boneyard and out-of-play tiles partition the set."""
    nt = p[P_NTILES]
    seen = 0
    for k in range(p[P_NP]):
        h = s[HANDS + k]
        if seen & h:
            return False
        seen |= h
    placed = 0
    for k in range(p[P_NP]):
        m = s[PLAYED_MASK + k]
        if seen & m:
            return False
        seen |= m
        placed += popcount(m)
    if placed != lay_placed(s, LAY):
        return False
    deck = _deck(s)
    for i in range(s[DECK_POS], nt):
        t = np.int64(deck[DECK_BYTES + i])
        if t < 0 or t >= nt or (seen >> t) & 1:
            return False
        seen |= 1 << t
    return seen == (1 << nt) - 1


@njit(cache=True, inline="always")
def _step_kernel(s, a, p):
    return step_kernel(s, a, p, 2 * p[P_NTILES], _is_legal, _play, _advance)


@njit(cache=True, inline="always")
def _mask_kernel(s, p, out):
    hand = s[HANDS + s[H_TURN]] if s[H_DONE] == 0 else 0
    if p[P_NTILES] == 28:  # double-six: a loop of known length (see _obs_kernel)
        lay_line_fill_mask(s, LAY, hand, out, 56)
    else:
        lay_line_fill_mask(s, LAY, hand, out, 2 * p[P_NTILES])


@njit(cache=True, inline="always")
def _obs_kernel(s, p, v, out):
    if p[P_NP] == 2 and p[P_NTILES] == 28:  # the default game: sizes known when compiled (2x faster)
        _obs_fill(s, v, out, 2, 28, 7)
    else:
        _obs_fill(s, v, out, p[P_NP], p[P_NTILES], p[P_MAXPIP] + 1)


@njit(cache=True, inline="always")
def _obs_fill(s, v, out, n, nt, np1):
    """Observation of seat v for n players, nt tiles, np1 pip values."""
    # one bit stream (tiles.stream_bits) with zero bits left for the counts, written after it
    st = stream_bits((0, 0, 0), s[HANDS + v], nt, out)
    for r in range(n):
        st = stream_bits(st, s[PLAYED_MASK + (v + r if v + r < n else v + r - n)], nt, out)
    placed = lay_placed(s, LAY) > 0
    e0 = 1 << lay_arm_end(s, LAY, 0) if placed else 0
    e1 = 1 << lay_arm_end(s, LAY, 1) if placed else 0
    st = stream_bits(st, e0 | (e1 << np1), 2 * np1, out)
    st = stream_bits(st, 0, n + 1, out)  # hand_sizes, boneyard
    for r in range(n):
        st = stream_bits(st, s[VOID + (v + r if v + r < n else v + r - n)], np1, out)
    st = stream_bits(st, 0, 2 * n, out)  # drawn, scores
    to_move = 0
    if s[H_DONE] == 0:
        t = s[H_TURN] - v
        to_move = 1 << (t if t >= 0 else t + n)
    stream_end(stream_bits(st, to_move | (s[JUST_DREW] << n), n + 1, out), out)
    o = OBS_AT[n, np1 - 1, I_HAND_SIZES]
    od = OBS_AT[n, np1 - 1, I_DRAWN]
    osc = OBS_AT[n, np1 - 1, I_SCORES]
    for r in range(n):
        j = v + r if v + r < n else v + r - n
        out[np.uint64(o + r)] = popcount(s[HANDS + j])
        out[np.uint64(od + r)] = s[DRAWN + j]
        out[np.uint64(osc + r)] = s[SCORES + j]
    out[np.uint64(OBS_AT[n, np1 - 1, I_BONEYARD])] = s[BONE_END] - s[DECK_POS]


@njit(cache=True)
def _sample_kernel(s, p, v, seed):
    n = p[P_NP]
    nt = p[P_NTILES]
    ns = s.copy()
    # stock = boneyard and out-of-play tiles: the rest, in fresh random order
    unseen, tiles, k, allowed, cap = unseen_setup(s, v, n, HANDS, PLAYED_MASK, nt, s[DECK_POS])
    for j in range(n):
        if j != v:
            allowed[j] &= ~pips_to_tiles(s[VOID + j], p[P_MAXPIP] + 1)
    rng_arr = np.empty(1, dtype=np.int64)
    rng_arr[0] = seed
    mover = s[H_TURN]
    # the seat to act just drew: it holds exactly one playable tile (the drawn one), which is
    # exempt from its voids; it gets that tile first, the rest is dealt under the voids
    pending = s[H_DONE] == 0 and mover != v and s[JUST_DREW] == 1
    candidates = lay_playable(s, LAY, unseen)
    pool = np.empty(nt, dtype=np.int64)
    deck = _deck(ns)
    # fails closed: an empty row if no consistent redeal exists (sampling.py), never the true state
    dealt = False
    for _attempt in range(100_000):
        if not redeal_attempt(ns, v, n, tiles, k, allowed, cap, rng_arr, HANDS, deck, DECK_BYTES,
                              s[DECK_POS], mover if pending else -1, candidates, pool):
            if not pending:
                break  # deal_consistent is exact: no consistent deal exists
            continue
        dealt = True
        # an opponent at a decision visibly has a choice: keep only samples where it does (after
        # 100,000 rejections the last consistent deal stands)
        if s[H_DONE] == 1 or mover == v or _only_action(ns, ns[HANDS + mover]) == -1:
            break
    if not dealt:
        return np.empty(0, dtype=np.int64)
    finish_redeal(ns, rng_arr, H_RNG, deck, DECK_BYTES, s[DECK_POS], nt)
    return ns


# ------------------------------------------------------------------------------ Python side
# heuristic: domino_agents.heuristic_line.LineHeuristic
class DrawGame(Game, kernels=globals(), facts=Facts(DrawConfig, ROW, "draw.md", "D", "line", "first_seat")):
    """Draw Game / Block Game engine bound to one config."""

    def __init__(self, config: DrawConfig, name: str = "draw_v0"):
        c = config
        self.num_players = c.num_players
        self.n_tiles = num_tiles(c.max_pip)
        self.num_actions = 2 * self.n_tiles
        self.params = np.array(
            [c.num_players, c.max_pip, self.n_tiles, c.deal_size, int(c.drawing), int(c.match),
             c.target, -1 if c.first_seat is None else c.first_seat, c.max_hands],
            dtype=np.int64,
        )
        super().__init__(config, name)

    def obs_pieces(self):
        return OBS.pieces(self.num_players, self.config.max_pip)

    def obs_high(self) -> float:
        return float(max(self.config.target * 10, 1000))

    # ---- actions
    def encode_action(self, a: int, b: int, end: int) -> int:
        """Action id for putting tile (a, b) on end 0 (left; also the lead) or 1 (right)."""
        if end not in (0, 1):
            raise ValueError(f"{self.name}: end must be 0 (left) or 1 (right), got {end!r}")
        t = tile_id(a, b)
        if t >= self.n_tiles:
            raise ValueError(f"{self.name}: tile ({a}, {b}) is not in a double-{self.config.max_pip} set")
        return t * 2 + end

    def describe_action(self, action: int) -> str:
        if not 0 <= action < self.num_actions:
            return f"out of range (0..{self.num_actions - 1})"
        t, end = divmod(int(action), 2)
        if end == 0:
            return f"play {tile_name(t)} on the left end (or lead it)"
        return f"play {tile_name(t)} on the right end"

    def action_table(self) -> ActionTable:
        """Action ``tile * 2 + end`` places tile id ``tile`` on end 0 or 1 (core.Game.action_table)."""
        return tile_arm_table("line", self.n_tiles, 2, self.num_actions)

    # ---- pictures (core.Game.describe_table)
    def describe_table(self, state: np.ndarray, table: Table, face_up: list[bool]) -> None:
        s = state
        for k, seat in enumerate(table.seats):
            hand = self.hand(s, k)
            seat.count = len(hand)
            if face_up[k]:
                seat.tiles = hand
            seat.lines.append(f"score {self.scores(s)[k]}")
        table.info.append(f"hand {hand_number(s)}")
        if self.config.drawing:
            table.info.append(f"boneyard {len(self.boneyard(s))}")
        table.play = line_play(self.layout(s), self.line(s), {0, 1})
        table.max_pip = self.config.max_pip

    # ---- deals
    def set_deal(self, state: np.ndarray, deal: dict) -> None:
        """Start a new episode from a given deal (module docstring, "Deal format")."""
        self._check_row(state)
        n = self.num_players
        hands, stock, first = self._deal_parts(deal, first=self.config.first_seat or 0)
        if stock and not self.config.drawing:
            raise DealError(f"{self.name}: the Block Game has no stock to draw from; got {len(stock)} stock tiles")
        hand_ids, stock_ids, seen = self._deal_ids(hands, stock, self.config.max_pip)
        rest = [t for t in range(self.n_tiles) if t not in seen]
        s = state
        self._fresh_row(s)
        s[LAST_PLACER] = -1
        s[LAST_WINNER] = -1
        deck = s.view(np.int8)
        deck[DECK_BYTES:DECK_BYTES + self.n_tiles] = [t for h in hand_ids for t in h] + stock_ids + rest
        for k in range(n):
            s[HANDS + k] = sum(1 << t for t in hand_ids[k])
        s[DECK_POS] = sum(len(h) for h in hand_ids)
        s[BONE_END] = s[DECK_POS] + len(stock_ids)
        lay_init(s, LAY, 2, SPIN_NONE)
        s[FIRST_SEAT] = first
        s[H_TURN] = first
        _advance(s, self.params)

    def deal_of(self, state: np.ndarray) -> dict:
        """The deal of the hand in play, in the format `set_deal` takes: what was dealt, read from
        the deck (which keeps its order all hand) and each seat's hand and placed tiles, so it works
        after forced moves too. `set_deal` of it on a fresh row gives the same decision; for a later
        hand of a match it names the tiles and first seat only (scores are no part of a deal). Before
        anyone draws, the hands as dealt are each seat's hand and placed tiles, so a `sample_hidden` row
        (its dealt deck slots blanked) has a deal too: the Block Game's always."""
        self._check_state(state)
        s, n = state, self.num_players
        deck = s.view(np.int8)[DECK_BYTES:DECK_BYTES + self.n_tiles]
        dealt_end = int(s[DECK_POS]) - int(s[DRAWN:DRAWN + n].sum())
        if dealt_end == int(s[DECK_POS]):  # nothing drawn yet
            dealt = (1 << self.n_tiles) - 1
        else:
            dealt = sum(1 << int(t) for t in self._dealt(deck, dealt_end, int(s[DECK_POS]), self.n_tiles))
        hands = [self._tiles_of_mask(dealt & int(s[HANDS + k] | s[PLAYED_MASK + k])) for k in range(n)]
        rest = np.asarray(deck[dealt_end:s[BONE_END]])
        if ((rest < 0) | (rest >= self.n_tiles)).any():
            raise StateError(f"{self.name}: this row does not hold its stock: its deck slots from {dealt_end} to "
                             f"{int(s[BONE_END])} are not all tiles")
        stock = [(int(TILE_A[t]), int(TILE_B[t])) for t in rest]
        return {"hands": hands, "stock": stock, "first": int(s[FIRST_SEAT])}

    def _tiles_of_mask(self, mask: int) -> list[tuple[int, int]]:
        return [(int(TILE_A[t]), int(TILE_B[t])) for t in range(self.n_tiles) if (mask >> t) & 1]

    # ---- validate (core.Game.validate: the ranges of `slots`, then these)
    def _validate_more(self, state):
        """The relations the kernels rely on: the boneyard pointers in order (the Block Game has no
        boneyard), the line what its history gives (D-6), the played masks naming the tiles on it,
        the draws within the deck dealt (D-2), a just-drawn tile only while the seat to act holds
        exactly one playable tile, the seat to act at a real decision, and scores below the target
        in a match in play. Tile conservation: `_check_kernel`."""
        s, n = state, self.num_players
        problem = None
        if s[DECK_POS] > s[BONE_END]:
            problem = f"deck position {int(s[DECK_POS])} is past the boneyard end {int(s[BONE_END])}"
        elif not self.config.drawing and s[BONE_END] != s[DECK_POS]:
            problem = (f"boneyard end {int(s[BONE_END])} is not the deck position {int(s[DECK_POS])}: the Block "
                       f"Game has no boneyard")
        problem = problem or lay_problem(s, LAY, 2, self.n_tiles) or lay_replay_problem(s, LAY, 2, SPIN_NONE)
        if problem:
            self._refuse(problem)
        self._check_played(s, PLAYED_MASK, n, lay_history_tiles(s, LAY))
        drawn = int(s[DRAWN:DRAWN + n].sum())
        if drawn > s[DECK_POS] or (not self.config.drawing and drawn):
            self._refuse(f"drawn counts (slots {DRAWN}..{DRAWN + n - 1}) add up to {drawn}; allowed: at most the "
                         f"{int(s[DECK_POS])} tiles dealt and drawn from the deck (0 in the Block Game)")
        if s[H_DONE] == 1:
            if s[JUST_DREW]:
                self._refuse(f"just drew (slot {JUST_DREW}) is 1 in a finished episode (allowed: 0)")
            return
        hand = int(s[HANDS + s[H_TURN]])
        np1 = self.config.max_pip + 1
        self._check_known(s, HANDS, [pips_to_tiles(int(s[VOID + k]), np1) for k in range(n)],
                          f"voids (slots {VOID}..{VOID + n - 1}, D-2)",
                          exempt=int(lay_line_fits(s, LAY)) if s[JUST_DREW] else 0)
        if s[JUST_DREW] and popcount(hand & int(lay_line_fits(s, LAY))) != 1:
            self._refuse(f"just drew (slot {JUST_DREW}) is 1, but seat {int(s[H_TURN])} to act does not hold exactly "
                         f"one playable tile (the one it drew, D-2)")
        if _only_action(s, hand) != -1:
            self._refuse(f"seat {int(s[H_TURN])} to act has no real decision (one legal action or none): the "
                         f"engine takes forced steps itself")
        scores = [int(x) for x in s[SCORES:SCORES + n]]
        if self.config.match and max(scores) >= self.config.target:
            self._refuse(f"scores {scores} (slots {SCORES}..{SCORES + n - 1}): a match in play has every seat below "
                         f"target={self.config.target}")
        if not self.config.match and (s[H_HAND] != 0 or any(scores)):
            self._refuse(f"hands done {int(s[H_HAND])} and scores {scores}: a single hand in play has none "
                         f"finished and no score")

    # ---- inspection helpers (tests, rendering)
    def hand(self, state, seat) -> list[tuple[int, int]]:
        return [(int(TILE_A[t]), int(TILE_B[t])) for t in range(self.n_tiles) if (int(state[HANDS + seat]) >> t) & 1]

    def boneyard(self, state) -> list[tuple[int, int]]:
        deck = state.view(np.int8)[DECK_BYTES:LAY * 8]
        return [(int(TILE_A[t]), int(TILE_B[t])) for t in deck[state[DECK_POS]:state[BONE_END]]]

    def ends(self, state) -> tuple[int, int] | None:
        if lay_placed(state, LAY) == 0:
            return None
        return int(lay_arm_end(state, LAY, 0)), int(lay_arm_end(state, LAY, 1))

    def scores(self, state) -> list[int]:
        return [int(x) for x in state[SCORES:SCORES + self.num_players]]

    def line(self, state) -> list[tuple[int, int]]:
        return [(int(t), int(a)) for t, a in lay_history(state, LAY)]

    def layout(self, state) -> dict:
        """The layout as laid on the table, for pictures: ``layout.lay_arms`` (the centre tile, each
        arm's tiles from the centre outwards as (inner, outer) pips, the spinners and their branches)."""
        from ..layout import lay_arms

        return lay_arms(state, LAY)

    def render(self, state: np.ndarray, seat: int) -> str:
        s = state
        lines = [f"{self.name}  hand {int(s[H_HAND]) + (0 if s[H_DONE] else 1)}  "
                 f"boneyard {int(s[BONE_END] - s[DECK_POS])}  scores {self.scores(s)}"]
        lines.append("line: " + render_line(lay_history(s, LAY)))
        for k in range(self.num_players):
            mark = " <- to move" if (not s[H_DONE] and s[H_TURN] == k) else ""
            voids = [q for q in range(self.config.max_pip + 1) if (int(s[VOID + k]) >> q) & 1]
            lines.append(f"seat {k}: {popcount(s[HANDS + k])} tiles, drew {int(s[DRAWN + k])}, "
                         f"lacks {voids}{mark}")
        hand = " ".join(f"[{a}|{b}]" for a, b in self.hand(s, seat))
        lines.append(f"seat {seat} holds: {hand}")
        if s[H_DONE]:
            w = int(s[LAST_WINNER])
            lines.append("over: " + (f"seat {w} won the hand" if w >= 0 else "blocked, tied: no score"))
        return "\n".join(lines)
