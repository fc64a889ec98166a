"""sample_hidden's redeal: uniform over the information set (checked by exact enumeration on small
cases), every hidden tile free to move, and failing closed (never the true state) when the state
contradicts its own public record."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from domino_envs import make_game
from domino_envs.core import H_TURN
from domino_envs.games import draw as D
from domino_envs.games import magic7 as M
from domino_envs.games import pete as P
from domino_envs.games import racehorse as R
from domino_envs.games import sum7 as S
from domino_envs.sampling import (
    SamplingError,
    _deal_constructive,
    checked_sample,
    deal_consistent,
    redeal_attempt,
)


# a generous chi-square bound: the Wilson-Hilferty upper 1e-6 quantile (z = 4.75) of df degrees
def _chi2_bound(df: int) -> float:
    z = 4.75
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def _chi2(counts: dict, outcomes: list, draws: int) -> float:
    expect = draws / len(outcomes)
    return sum((counts.get(o, 0) - expect) ** 2 / expect for o in outcomes)


def _consistent_assignments(tiles, allowed, cap):
    """Every assignment (tuple of groups, by tile position) honouring counts and allowed masks."""
    out = []
    for combo in itertools.product(range(len(cap)), repeat=len(tiles)):
        if all(combo.count(g) == cap[g] for g in range(len(cap))) and all(
            (allowed[g] >> t) & 1 for t, g in zip(tiles, combo)
        ):
            out.append(combo)
    return out


# small constrained cases: (tiles, allowed masks per group, capacities)
CASES = [
    # 6 tiles into three pairs: group 0 cannot hold tiles 0, 1; group 1 cannot hold tile 2
    ([0, 1, 2, 3, 4, 5], [0b111100, 0b111011, 0b111111], [2, 2, 2]),
    # 5 tiles: a constrained hand of 2, a hand of 1 limited to two tiles, a stock of 2
    ([3, 7, 8, 11, 12], [(1 << 3) | (1 << 7) | (1 << 12), (1 << 8) | (1 << 11), (1 << 13) - 1], [2, 1, 2]),
]


def _sample_counts(deal, tiles, allowed, cap, draws, seed=7):
    t = np.array(tiles, dtype=np.int64)
    a = np.array(allowed, dtype=np.int64)
    c = np.array(cap, dtype=np.int64)
    rng = np.array([seed], dtype=np.int64)
    counts: dict = {}
    for _ in range(draws):
        got = tuple(int(g) for g in deal(t, len(tiles), a, c, len(cap), rng))
        counts[got] = counts.get(got, 0) + 1
    return counts


@pytest.mark.parametrize("case", range(len(CASES)))
def test_deal_consistent_is_uniform_over_the_consistent_assignments(case):
    tiles, allowed, cap = CASES[case]
    outcomes = _consistent_assignments(tiles, allowed, cap)
    assert len(outcomes) >= 4
    draws = 600 * len(outcomes)
    counts = _sample_counts(deal_consistent, tiles, allowed, cap, draws)
    assert set(counts) <= set(outcomes), "an assignment breaking the constraints was dealt"
    chi2 = _chi2(counts, outcomes, draws)
    assert chi2 < _chi2_bound(len(outcomes) - 1), (
        f"chi-square {chi2:.0f} on {len(outcomes) - 1} df: not uniform ({sorted(counts.values())})")


def test_the_constructive_fallback_alone_is_biased():
    """The enumeration test has the power to see the old sampler's bias (it is the fallback now)."""
    tiles, allowed, cap = CASES[0]
    outcomes = _consistent_assignments(tiles, allowed, cap)
    draws = 600 * len(outcomes)
    chi2 = _chi2(_sample_counts(_deal_constructive, tiles, allowed, cap, draws), outcomes, draws)
    assert chi2 > _chi2_bound(len(outcomes) - 1)


def test_redeal_with_a_just_drawn_tile_is_uniform():
    """The seat to act just drew: it holds exactly one candidate (exempt from its constraints) and
    the rest under them. Seat 1 (2 tiles) may hold 3, 4 and must hold one of candidates 0, 1; the
    stock takes the other 3 tiles. Outcomes: {0,1} x {3,4}, each 1/4."""
    tiles = np.array([0, 1, 2, 3, 4], dtype=np.int64)
    allowed = np.array([0, (1 << 3) | (1 << 4), 0b11111], dtype=np.int64)
    cap = np.array([0, 2, 3], dtype=np.int64)
    pool = np.zeros(5, dtype=np.int64)
    rng = np.array([11], dtype=np.int64)
    counts: dict = {}
    draws = 8000
    for _ in range(draws):
        ns = np.zeros(2, dtype=np.int64)
        deck = np.zeros(5, dtype=np.int64)
        assert redeal_attempt(ns, 0, 2, tiles, 5, allowed, cap, rng, 0, deck, 0, 0, 1, 0b11, pool)
        counts[int(ns[1])] = counts.get(int(ns[1]), 0) + 1
    outcomes = [(1 << c) | (1 << a) for c in (0, 1) for a in (3, 4)]
    assert set(counts) == set(outcomes)
    assert _chi2(counts, outcomes, draws) < _chi2_bound(3)


# ------------------------------------------------------------------------------ per game
GAMES = [("draw_v0", {}), ("draw_v0", {"num_players": 3}), ("block_v0", {"num_players": 4}),
         ("seven_toed_pete_v0", {}), ("racehorse_v0", {"num_players": 3}), ("sum7_v0", {"num_players": 3}),
         ("magic7_v0", {}), ("magic7_v0", {"num_players": 2})]
IDS = [f"{n}-{k}" for n, k in GAMES]


def _locations(name, game, state):
    """tile id -> place: ("hand", seat), ("killed", seat) or "stock" (boneyard, market, pile,
    out of play), for every tile held by a seat; tiles not in any hand are "stock"."""
    n = game.num_players
    loc = {}
    if name.startswith("magic7"):
        for k in range(n):
            for t in range(M.N_CARDS):  # jokers are relabelled canonically: only cards have an identity
                if (int(state[M.LIVE + k]) >> t) & 1:
                    loc[t] = ("hand", k)
                if (int(state[M.KILLED + k]) >> t) & 1:
                    loc[t] = ("killed", k)
        return loc
    hands = {"draw": D.HANDS, "block": D.HANDS, "seven": P.HANDS, "racehorse": R.HANDS, "sum7": S.HANDS}
    off = hands[name.split("_")[0]]
    for k in range(n):
        for t in range(game.n_tiles):
            if (int(state[off + k]) >> t) & 1:
                loc[t] = ("hand", k)
    return loc


def _hidden_tiles(name, game, state, seat):
    """Tiles `seat` cannot see and that may sit in more than one place: not in its hand, not
    played, not excluded from every opponent's hand (by the observation's own pieces)."""
    if name.startswith("magic7"):
        seen = int(state[M.LIVE + seat]) | int(state[M.KILLED + seat]) | int(state[M.PLACED]) | int(state[M.OUT])
        return [t for t in range(M.N_CARDS) if not (seen >> t) & 1]
    o = game.decode(game.observe(state, seat))
    seen = o["hand"].astype(bool) | o["played_by"].any(axis=0).astype(bool)
    if name.startswith("sum7"):  # a double above the lead is publicly in the market (S-2): not free
        seen |= np.all([o["lacks"][r] for r in range(1, game.num_players)], axis=0).astype(bool)
    return [t for t in range(game.n_tiles) if not seen[t]]


@pytest.mark.parametrize("name,kwargs", GAMES, ids=IDS)
def test_every_hidden_tile_and_every_opponent_hand_can_differ_from_the_truth(name, kwargs):
    """Right after the deal (nothing constrains the unseen tiles), the seat to act resamples: every
    tile it cannot see shows up somewhere other than its true place, and every opponent's hand
    differs from its true hand, in some of 300 samples."""
    game = make_game(name, **kwargs)
    rng = np.random.default_rng(5)
    for deal_seed in range(3):
        state = game.new_state()
        game.reset(state, deal_seed)
        seat = int(state[H_TURN])
        truth = _locations(name, game, state)
        hidden = _hidden_tiles(name, game, state, seat)
        moved = set()
        hand_differs = set()
        for _ in range(300):
            sample = checked_sample(game, state, seat, rng)
            where = _locations(name, game, sample)
            moved.update(t for t in hidden if where.get(t, "stock") != truth.get(t, "stock"))
            hand_differs.update(j for j in range(game.num_players) if j != seat and any(
                (where.get(t) == ("hand", j)) != (truth.get(t) == ("hand", j)) for t in hidden))
        assert moved == set(hidden), f"deal {deal_seed}: tiles never moved: {sorted(set(hidden) - moved)}"
        opponents = {j for j in range(game.num_players) if j != seat}
        assert hand_differs == opponents, f"deal {deal_seed}: hands never resampled: {opponents - hand_differs}"


def _contradict(name, state, seat):
    """Make an opponent's public record exclude every tile (voids on every number / lacks all)."""
    if name.startswith("magic7"):
        state[M.LACK + seat] = M.CARD_MASK
    elif name.startswith("sum7"):
        state[S.LACKS + seat] = (1 << S.NT) - 1
    elif name.startswith("seven"):
        state[P.VOID + seat] = (1 << P.NPIP) - 1
    elif name.startswith("racehorse"):
        state[R.VOID + seat] = (1 << R.NP1) - 1
    else:
        state[D.VOID + seat] = (1 << 10) - 1


@pytest.mark.parametrize("name,kwargs", GAMES, ids=IDS)
def test_sample_hidden_fails_closed(name, kwargs):
    """No deal fits a record in which an opponent holding tiles can hold none: the kernel returns
    an empty row (never the true state) and checked_sample raises SamplingError."""
    game = make_game(name, **kwargs)
    state = game.new_state()
    game.reset(state, 1)
    seat = int(state[H_TURN])
    _contradict(name, state, (seat + 1) % game.num_players)
    for i in range(3):
        raw = type(game)._sample_kernel(state, game.params, seat, np.int64(i))
        assert raw.size == 0
        with pytest.raises(SamplingError, match="no deal consistent"):
            checked_sample(game, state, seat, np.random.default_rng(i))
