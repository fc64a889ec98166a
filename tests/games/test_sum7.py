"""Domino Sum 7: every rule of rules-spec section 4 and S-1..S-12 on hand-set deals."""
from __future__ import annotations

import numpy as np
import pytest

import domino_envs
from domino_envs import ConfigError, DealError, IllegalActionError, make_game
from domino_envs.core import H_DONE, H_HAND, H_TRUNC, H_TURN
from domino_envs.games import sum7 as S
from domino_envs.tiles import TILE_A, TILE_B, tile_id

PASS = "pass"


def deal(game, hands, market=()):
    """Hands and the first market tiles as given; every other tile follows in the market in
    ascending id order (a deal names every tile)."""
    named = {tile_id(a, b) for h in hands for a, b in h} | {tile_id(a, b) for a, b in market}
    rest = [(int(TILE_A[t]), int(TILE_B[t])) for t in range(28) if t not in named]
    state = game.new_state()
    game.reset(state, 0)
    game.set_deal(state, {"hands": hands, "stock": list(market) + rest})
    return state


def rest_of(hands):
    """Every tile the hands leave out, ascending (a deal's stock names every other tile)."""
    named = {tile_id(a, b) for h in hands for a, b in h}
    return [(int(TILE_A[t]), int(TILE_B[t])) for t in range(28) if t not in named]


def act(game, a, b=None, side=None):
    return game.encode_action(a, b, side)


def moves(game, state):
    """Legal actions as ((a, b), side) pairs, and "pass"."""
    out = set()
    for a in game.legal_actions(state):
        if a == S.PASS:
            out.add(PASS)
        else:
            t = a // 2
            out.add(((int(TILE_A[t]), int(TILE_B[t])), a % 2))
    return out


def obs_of(game, state, seat):
    return game.decode(game.observe(state, seat))


def tiles_of(row):
    """Tile pairs of a 0/1 row over tile ids."""
    return {(int(TILE_A[t]), int(TILE_B[t])) for t in np.flatnonzero(row)}


ONE_X = {(1, k) for k in range(1, 7)}  # zero-free tiles with a 1
DOUBLES_1_6 = {(k, k) for k in range(1, 7)}


def expected_lead(hands):
    """S-2/S-3 written independently: (seat, tile) that leads."""
    doubles = [(a, seat) for seat, h in enumerate(hands) for (a, b) in h if a == b and a >= 1]
    if doubles:
        d, seat = max(doubles)
        return seat, (d, d)
    best = max(((a + b, max(a, b)), seat, (min(a, b), max(a, b)))
               for seat, h in enumerate(hands) for (a, b) in h if a != 0 and b != 0)
    return best[1], best[2]


# ------------------------------------------------------------------ S-1 deal
@pytest.mark.parametrize("deal_kind,n,size", [
    ("standard", 2, 7), ("standard", 3, 7), ("standard", 4, 7),
    ("seven_up", 2, 7), ("seven_up", 3, 6), ("seven_up", 4, 5),
])
def test_s1_deal_sizes_and_market(deal_kind, n, size):
    game = make_game("sum7_v0", num_players=n, deal=deal_kind)
    assert game.config.hand_size == size
    state = game.new_state()
    for seed in range(20):
        game.reset(state, seed)
        initial = [sorted(int(t) for t in state[S.DECK + k * size:S.DECK + (k + 1) * size]) for k in range(n)]
        assert all(len(set(h)) == size for h in initial)
        drawn = game.drawn(state)
        placed = [sum(1 for t in range(28) if state[S.PLAYED_BY + t] == k) for k in range(n)]
        held = [len(game.hand(state, k)) for k in range(n)]
        assert [held[k] + placed[k] - drawn[k] for k in range(n)] == [size] * n
        o = obs_of(game, state, 0)
        assert o["market"][0] == 28 - n * size - sum(drawn) == len(game.market(state))
        assert o["hand_sizes"].tolist() == held
    if deal_kind == "standard" and n == 4:
        assert game.market(state) == []  # 4 x 7 = 28: no market


# ------------------------------------------------------------------ S-2 / S-3 starter
def test_s2_highest_double_leads_and_play_passes_to_the_next_seat():
    game = make_game("sum7_v0", num_players=3)
    s = deal(game, [[(1, 2), (3, 3)], [(0, 0), (2, 2)], [(5, 5), (1, 6)]], market=[(4, 4)])
    assert game.starter(s) == 2
    assert game.line(s) == [(5, 5, -1)]  # led by the engine (forced)
    assert game.required(s) == (2, 2)
    assert s[H_TURN] == 0  # the starter's next seat
    assert moves(game, s) == {((1, 2), 0), PASS}  # both sides require 2: the left one is offered
    for k in range(3):  # public: nobody held a double above 5-5 at the deal
        assert game.lacks(s, k) == [(6, 6)]
    o = obs_of(game, s, 0)
    assert o["placements"][0] == 1 and o["played_by"][2, tile_id(5, 5)] == 1  # relative seat 2
    assert o["required"][0].tolist() == [0, 1, 0, 0, 0, 0] and o["required"][1].tolist() == [0, 1, 0, 0, 0, 0]


def test_s2_zero_zero_never_leads_and_a_double_beats_heavier_tiles():
    game = make_game("sum7_v0")
    s = deal(game, [[(0, 0), (1, 1), (2, 5)], [(3, 4), (1, 6), (2, 3)]])
    assert game.starter(s) == 0 and game.line(s) == [(1, 1, -1)]
    assert game.required(s) == (6, 6)
    assert s[H_TURN] == 1 and moves(game, s) == {((1, 6), 0), PASS}
    assert set(game.lacks(s, 1)) == DOUBLES_1_6 - {(1, 1)}


def test_s3_no_double_heaviest_zero_free_tile_leads_tie_to_the_higher_half():
    game = make_game("sum7_v0")
    # 3-6 and 4-5 both weigh 9: 3-6 has the higher high half (S-3 tie-break); doubles are in the market
    s = deal(game, [[(1, 2), (0, 6), (3, 6)], [(4, 5), (2, 6), (0, 0)]])
    assert game.starter(s) == 0 and game.line(s) == [(3, 6, -1)]
    assert game.required(s) == (4, 1)  # 7 - 3 on the left, 7 - 6 on the right
    assert s[H_TURN] == 1
    assert moves(game, s) == {((4, 5), 0), PASS}  # 0-0 not yet live (S-4)
    for k in range(2):  # public: no double 1-1..6-6 and nothing outranking 3-6 was dealt
        assert set(game.lacks(s, k)) == DOUBLES_1_6 | {(5, 6), (4, 6)}
    # the seat holding both equal-weight tiles leads the tie-break winner
    s = deal(game, [[(4, 5), (3, 6)], [(1, 2)]])
    assert game.line(s) == [(3, 6, -1)] and game.hand(s, 0) == [(4, 5)]


def test_s2_s3_starter_rule_on_random_deals_every_player_count():
    for n, deal_kind in [(2, "standard"), (3, "standard"), (4, "standard"), (3, "seven_up"), (4, "seven_up")]:
        game = make_game("sum7_v0", num_players=n, deal=deal_kind)
        size = game.config.hand_size
        state = game.new_state()
        kinds = set()
        for seed in range(600):
            game.reset(state, seed)
            initial = [[(int(TILE_A[t]), int(TILE_B[t])) for t in state[S.DECK + k * size:S.DECK + (k + 1) * size]]
                       for k in range(n)]
            seat, lead = expected_lead(initial)
            assert game.starter(state) == seat
            a, b, side = game.line(state)[0]
            assert (a, b, side) == (lead[0], lead[1], -1)
            kinds.add(a == b)
        if n == 2:
            assert kinds == {True, False}  # both S-2 and S-3 happened


# ------------------------------------------------------------------ required numbers, S-4..S-7
HANDS_TRAP = [[(6, 6), (3, 5), (2, 3), (0, 5), (0, 0), (4, 4)],
              [(1, 2), (1, 4), (4, 6), (1, 5), (0, 1), (0, 4), (5, 5)]]


def play_to_six(game):
    """Six placements: 6-6 (lead), 1-2 L, 3-5 L, 1-4 R, 2-3 R, 4-6 L. Legal sets asserted on the way."""
    zr = game.config.zero_rule
    s = deal(game, HANDS_TRAP)
    assert game.required(s) == (1, 1) and s[H_TURN] == 1
    # both sides require 1: a tile is offered on the left side only (the right mirrors it)
    first = {((1, 2), 0), ((1, 4), 0), ((1, 5), 0), PASS}
    if zr == "wild":
        first |= {((0, 1), 0)}
    assert moves(game, s) == first  # S-4: 0-1 waits for the 7th placement (except "wild")
    game.step(s, act(game, 1, 2, 0))
    assert game.required(s) == (5, 1)
    second = {((3, 5), 0), PASS}
    if zr == "wild":
        second |= {((0, 5), 0), ((0, 0), 0), ((0, 0), 1)}
    assert moves(game, s) == second  # S-4: 0-5 and 0-0 not yet
    game.step(s, act(game, 3, 5, 0))
    assert game.required(s) == (4, 1)
    game.step(s, act(game, 1, 4, 1))
    assert game.required(s) == (4, 3)
    game.step(s, act(game, 2, 3, 1))
    assert game.required(s) == (4, 5) and game.placements(s) == 5
    fifth = {((4, 6), 0), ((1, 5), 1), ((5, 5), 1), PASS}
    if zr == "wild":
        fifth |= {((0, 4), 0)}
    assert moves(game, s) == fifth  # the 6th placement: 0-4 still not live
    assert obs_of(game, s, 1)["traps_live"][0] == (1 if zr == "wild" else 0)
    game.step(s, act(game, 4, 6, 0))
    assert game.required(s) == (1, 5) and game.placements(s) == 6
    assert s[H_TURN] == 0 and game.traps_live(s)
    assert obs_of(game, s, 0)["traps_live"][0] == 1
    return s


def test_required_numbers_follow_the_seed_examples():
    game = make_game("sum7_v0")
    s = deal(game, [[(2, 2), (2, 5), (1, 6)], [(4, 5), (1, 3), (3, 6)]])
    assert game.required(s) == (5, 5)
    assert moves(game, s) == {((4, 5), 0), PASS}  # both sides require 5: the left one is offered
    game.step(s, act(game, 4, 5, 0))  # the 5 touches, the 4 faces out: 3 required
    assert game.required(s) == (3, 5)
    assert moves(game, s) == {((2, 5), 1), PASS}
    game.step(s, act(game, 2, 5, 1))  # seed 6.1a: 5-2 on the 5 -> 3 and 5 still required
    assert game.required(s) == (3, 5)
    assert moves(game, s) == {((1, 3), 0), ((3, 6), 0), PASS}
    game.step(s, act(game, 1, 3, 0))  # seed 6.1b: 3-1 on the 3 -> 6 required, the 5 stays
    assert game.required(s) == (6, 5)
    assert game.line(s) == [(2, 2, -1), (5, 4, 0), (5, 2, 1), (3, 1, 0)]
    assert game.render_line(s) == "(6) [1|3][4|5]<2|2>[5|2] (5)"
    o = obs_of(game, s, 0)
    assert o["required"][0].tolist() == [0, 0, 0, 0, 0, 1] and o["required"][1].tolist() == [0, 0, 0, 0, 1, 0]
    assert o["closed"].tolist() == [0, 0]


def test_s4_s5_zero_trap_closes_a_side_then_last_open_side_ends_s10():
    game = make_game("sum7_v0")
    s = play_to_six(game)
    # S-5 x-0 on the side requiring x; S-6 0-0 on any open side
    assert moves(game, s) == {((0, 0), 0), ((0, 0), 1), ((0, 5), 1), PASS}
    game.step(s, act(game, 0, 5, 1))
    assert game.required(s) == (1, None)
    o = obs_of(game, s, 1)
    assert o["closed"].tolist() == [0, 1] and o["required"][1].tolist() == [0] * 6
    assert o["required"][0].tolist() == [1, 0, 0, 0, 0, 0]
    assert game.line(s)[-1] == (5, 0, 1)
    assert s[H_DONE] == 0 and s[H_TURN] == 1
    assert moves(game, s) == {((1, 5), 0), ((0, 1), 0), PASS}
    game.step(s, act(game, 1, 5, 0))  # S-10: a tile on the last open side ends the hand at once
    assert s[H_DONE] == 1 and s[H_TURN] == -1
    assert game.required(s) == (2, None)
    # pips: seat 0 holds 0-0, 4-4 = 8; seat 1 holds 0-1, 0-4, 5-5 = 15 (S-11)
    assert game.rewards(s).tolist() == [15.0, -15.0]
    assert game.winners(s) == [0]
    assert not game.legal_mask(s).any()


def test_s10_both_sides_closed_by_zeros():
    game = make_game("sum7_v0")
    s = play_to_six(game)
    game.step(s, act(game, 0, 5, 1))
    game.step(s, act(game, 0, 1, 0))  # 0-1: the 1 meets the 1, the 0 closes the last side
    assert s[H_DONE] == 1 and game.required(s) == (None, None)
    assert obs_of(game, s, 0)["closed"].tolist() == [1, 1]
    assert game.rewards(s).tolist() == [20.0, -20.0]  # seat 1 keeps 1-5, 0-4, 5-5 = 20


@pytest.mark.parametrize("side", [0, 1])
def test_s6_double_zero_closes_any_open_side(side):
    game = make_game("sum7_v0")
    s = play_to_six(game)  # required (1, 5): 0-0 matches neither number, and may go on either
    game.step(s, act(game, 0, 0, side))
    assert game.required(s) == ((None, 5) if side == 0 else (1, None))
    assert game.line(s)[-1] == (0, 0, side)
    assert s[H_DONE] == 0 and s[H_TURN] == 1
    if side == 0:
        assert moves(game, s) == {((1, 5), 1), ((5, 5), 1), PASS}
        game.step(s, act(game, 5, 5, 1))
        assert s[H_DONE] == 1
        assert game.rewards(s).tolist() == [-13.0, 13.0]  # 0-5, 4-4 = 13 vs 1-5, 0-1, 0-4 = 11
    else:
        assert moves(game, s) == {((1, 5), 0), ((0, 1), 0), PASS}


def test_s7_strict_has_no_double_zero_wildcard():
    game = make_game("sum7_v0", zero_rule="strict")
    s = play_to_six(game)
    assert moves(game, s) == {((0, 5), 1), PASS}
    game.step(s, act(game, 0, 5, 1))
    assert game.required(s) == (1, None)
    # 0-0 stays in hand for good: seat 0 can never place it
    game.step(s, act(game, 1, 5, 0))
    assert s[H_DONE] == 1 and (0, 0) in game.hand(s, 0)


def test_s7_wild_zero_tiles_live_from_the_start():
    game = make_game("sum7_v0", zero_rule="wild")
    s = deal(game, HANDS_TRAP)
    assert game.traps_live(s) and game.placements(s) == 1
    game.step(s, act(game, 0, 1, 0))  # the 2nd placement closes the left side
    assert game.required(s) == (None, 1)
    assert moves(game, s) == {((0, 0), 1), PASS}  # 0-0 still a wildcard under "wild"
    s = play_to_six(game)  # the legal sets along the way include the zero tiles


# ------------------------------------------------------------------ S-8 waiting, drawing, passing
def test_s8_waiting_is_allowed_and_all_pass_ends_the_hand_s10():
    game = make_game("sum7_v0")
    s = deal(game, HANDS_TRAP)
    game.step(s, act(game, 1, 2, 0))
    market = len(game.market(s))
    assert moves(game, s) == {((3, 5), 0), PASS}
    game.step(s, S.PASS)  # seat 0 waits although it could place
    assert s[H_TURN] == 1 and game.passes(s) == 1 and len(game.market(s)) == market  # S-9: no draw
    assert obs_of(game, s, 0)["passes"][0] == 1 and s[H_DONE] == 0
    assert PASS in moves(game, s)
    game.step(s, S.PASS)  # seat 1 waits too: every seat passed once in succession
    assert s[H_DONE] == 1
    # seat 0: 3-5, 2-3, 0-5, 0-0, 4-4 = 26; seat 1: 1-4, 4-6, 1-5, 0-1, 0-4, 5-5 = 36
    assert game.rewards(s).tolist() == [36.0, -36.0]


def test_s10_a_placement_resets_the_run_of_passes():
    game = make_game("sum7_v0")
    s = deal(game, HANDS_TRAP)
    game.step(s, act(game, 1, 2, 0))
    game.step(s, S.PASS)
    assert game.passes(s) == 1
    game.step(s, act(game, 1, 4, 1))
    assert game.passes(s) == 0 and game.required(s) == (5, 3)
    assert moves(game, s) == {((3, 5), 0), ((3, 5), 1), ((2, 3), 1), PASS}
    game.step(s, S.PASS)
    assert s[H_DONE] == 0 and game.passes(s) == 1 and s[H_TURN] == 1


def test_s8_draw_until_placeable_then_must_place_no_waiting():
    game = make_game("sum7_v0")
    # no double dealt: 5-6 leads (S-3), 2 | 1 required
    s = deal(game, [[(5, 6), (3, 5), (0, 3)], [(3, 4), (0, 4)]],
             market=[(4, 6), (0, 1), (1, 2), (2, 6)])
    assert game.required(s) == (2, 1)
    # seat 1 holds nothing for 2 | 1 (0-4 is a zero, not yet live): draws 4-6, 0-1 (kept), 1-2
    assert s[H_TURN] == 1 and game.just_drew(s)
    assert sorted(game.hand(s, 1)) == [(0, 1), (0, 4), (1, 2), (3, 4), (4, 6)]
    assert moves(game, s) == {((1, 2), 0), ((1, 2), 1)}  # fits both sides: a decision, no pass
    assert game.drawn(s) == [0, 3]
    for seat in (0, 1):
        o = obs_of(game, s, seat)
        assert o["just_drew"][0] == 1
        assert o["market"][0] == 28 - 5 - 3
    o = obs_of(game, s, 0)
    # S-9: it showed it held no 1 and no 2 (kept tiles: reset)
    assert tiles_of(o["lacks"][1]) == ONE_X | {(2, k) for k in range(2, 7)}
    assert o["to_move"].tolist() == [0, 1] and o["drawn"].tolist() == [0, 3]
    with pytest.raises(IllegalActionError, match=r"action 56 \(pass \(wait\)\) is illegal"):
        game.step(s, S.PASS)
    game.step(s, act(game, 1, 2, 1))
    assert game.line(s)[-1] == (1, 2, 1) and game.required(s) == (2, 5)
    assert s[H_TURN] == 0 and not game.just_drew(s)
    assert game.invariants_ok(s)


def test_s8_drawn_tile_fitting_two_sides_that_show_one_pip_is_placed_by_the_engine():
    game = make_game("sum7_v0")
    s = deal(game, [[(6, 6), (3, 6), (4, 4)], [(2, 3), (0, 4)]],
             market=[(3, 4), (0, 1), (1, 5), (2, 6)])
    # 1 | 1 required: seat 1 draws 3-4, 0-1 (kept), 1-5, which fits both sides; the right-side
    # placement would mirror the left one, so it is one action and the engine places it
    assert game.line(s)[:2] == [(6, 6, -1), (1, 5, 0)]
    # seat 0: nothing for 2 | 1 -> draws 2-6, which fits the left side only: placed by the engine
    assert game.line(s)[2] == (2, 6, 0)
    assert set(game.lacks(s, 0)) == ONE_X | {(2, k) for k in range(2, 7)}  # nothing kept: union
    # seat 1 again has nothing for 1 | 1: draws 0-0 (kept; the rest of the market goes in id
    # order), 1-1, which fits both sides: placed on the left by the engine
    assert game.line(s)[3] == (1, 1, 0) and game.required(s) == (6, 1)
    assert game.drawn(s) == [1, 5] and set(game.lacks(s, 1)) == ONE_X
    assert s[H_TURN] == 0 and moves(game, s) == {((3, 6), 0), PASS}
    assert game.invariants_ok(s)


def test_s8_market_empty_forced_pass_and_all_pass_with_waits_four_players():
    game = make_game("sum7_v0", num_players=4)
    hands = [[(6, 6), (2, 6), (3, 6), (4, 5), (4, 6), (5, 5), (5, 6)],
             [(0, 0), (0, 1), (0, 2), (2, 2), (2, 3), (2, 4), (3, 3)],
             [(1, 2), (0, 3), (0, 4), (3, 4), (3, 5), (4, 4), (2, 5)],
             [(1, 1), (1, 3), (1, 4), (1, 5), (1, 6), (0, 5), (0, 6)]]
    s = deal(game, hands)
    assert game.market(s) == []
    # seat 1 has no 1 and cannot draw: forced pass (by the engine), seat 2 decides
    assert s[H_TURN] == 2 and game.passes(s) == 1
    assert set(game.lacks(s, 1)) == ONE_X
    assert moves(game, s) == {((1, 2), 0), PASS}
    game.step(s, S.PASS)
    assert s[H_TURN] == 3 and game.passes(s) == 2
    game.step(s, S.PASS)
    # seat 0 has no 1 either: forced pass, the 4th in succession ends the hand (S-10)
    assert s[H_DONE] == 1 and game.passes(s) == 4
    # pips 57 / 24 / 40 / 35: seat 1 wins and takes 57 + 40 + 35 (S-11)
    assert game.rewards(s).tolist() == [-57.0, 132.0, -40.0, -35.0]
    assert set(game.lacks(s, 0)) == ONE_X


def test_s9_market_drawn_to_its_last_tile_then_pass():
    game = make_game("sum7_v0")
    seat1 = [(3, 4)]
    market = [(2, 3), (0, 1)]
    seat0 = [(a, b) for b in range(7) for a in range(b + 1) if (a, b) not in seat1 + market]
    s = deal(game, [seat0, seat1], market)
    # seat 1: nothing for 1 | 1, draws both market tiles (0-1 is a zero, not live), passes
    assert game.market(s) == [] and sorted(game.hand(s, 1)) == [(0, 1), (2, 3), (3, 4)]
    assert game.drawn(s) == [0, 2] and game.passes(s) == 1 and s[H_TURN] == 0
    assert set(game.lacks(s, 1)) == ONE_X
    assert PASS in moves(game, s)
    game.step(s, S.PASS)  # a pass after a failed draw counts toward the all-pass end
    assert s[H_DONE] == 1 and game.winners(s) == [1]


# ------------------------------------------------------------------ S-10 out, S-11 ties
def test_s10_player_out_ends_the_hand():
    game = make_game("sum7_v0")
    s = deal(game, [[(6, 6), (1, 2), (5, 6)], [(1, 3)]])
    assert moves(game, s) == {((1, 3), 0), PASS}
    game.step(s, act(game, 1, 3, 0))
    assert s[H_DONE] == 1 and game.rewards(s).tolist() == [-14.0, 14.0]


def test_s11_tied_winners_share_what_losers_pay():
    game = make_game("sum7_v0", num_players=3)
    s = deal(game, [[(6, 6), (1, 6), (4, 6)], [(1, 2), (0, 3)], [(1, 3), (0, 2)]])
    for _ in range(3):
        game.step(s, S.PASS)
    assert s[H_DONE] == 1 and game.winners(s) == [1, 2]
    assert game.rewards(s).tolist() == [-17.0, 8.5, 8.5]  # 17 pips shared by two winners


def test_s11_all_tied_nobody_pays():
    game = make_game("sum7_v0")
    s = deal(game, [[(6, 6), (1, 6), (0, 1)], [(1, 2), (0, 5)]])  # 8 pips each after the lead
    game.step(s, S.PASS)
    game.step(s, S.PASS)
    assert s[H_DONE] == 1 and game.winners(s) == [0, 1]
    assert game.rewards(s).tolist() == [0.0, 0.0]


# ------------------------------------------------------------------ S-12 match mode
def test_s12_match_scores_carry_and_next_hand_uses_the_starter_rule():
    game = make_game("sum7_v0", match=True, target=100)
    s = deal(game, [[(6, 6), (1, 2), (5, 6)], [(1, 3)]])
    game.step(s, act(game, 1, 3, 0))
    assert game.rewards(s).tolist() == [-14.0, 14.0]
    assert s[H_DONE] == 0 and s[H_HAND] == 1 and game.scores(s) == [-14.0, 14.0]
    o = obs_of(game, s, 0)
    assert o["won"].tolist() == [0, 14] and o["paid"].tolist() == [14, 0]
    initial = [[(int(TILE_A[t]), int(TILE_B[t])) for t in s[S.DECK + k * 7:S.DECK + (k + 1) * 7]] for k in range(2)]
    seat, lead = expected_lead(initial)
    assert game.starter(s) == seat and game.line(s)[0][:2] == lead


def test_s12_match_ends_at_target_and_truncates_at_max_hands():
    game = make_game("sum7_v0", match=True, target=14)
    s = deal(game, [[(6, 6), (1, 2), (5, 6)], [(1, 3)]])
    game.step(s, act(game, 1, 3, 0))
    assert s[H_DONE] == 1 and s[H_TRUNC] == 0 and game.scores(s) == [-14.0, 14.0]
    game = make_game("sum7_v0", match=True, target=1000, max_hands=1)
    s = deal(game, [[(6, 6), (1, 2), (5, 6)], [(1, 3)]])
    game.step(s, act(game, 1, 3, 0))
    assert s[H_DONE] == 1 and s[H_TRUNC] == 1


def test_s12_episode_return_is_the_match_score():
    game = make_game("sum7_v0", match=True, target=60, num_players=3)
    s = game.new_state()
    rng = np.random.default_rng(5)
    for seed in range(30):
        game.reset(s, seed)
        total = np.zeros(3)
        while s[H_DONE] == 0:
            legal = game.legal_actions(s)
            game.step(s, legal[rng.integers(len(legal))])
            total += game.rewards(s)
        assert np.allclose(total, game.scores(s))
        assert max(game.scores(s)) >= 60 and abs(sum(game.scores(s))) < 1e-9


# ------------------------------------------------------------------ information, sample_hidden
def test_sample_hidden_keeps_the_drawn_tile_decision_and_lacks():
    game = make_game("sum7_v0")
    s = deal(game, [[(5, 6), (3, 5), (0, 3)], [(3, 4), (0, 4)]],
             market=[(4, 6), (0, 1), (1, 2), (2, 6)])
    assert game.just_drew(s) and s[H_TURN] == 1
    lacks = ONE_X | {(2, k) for k in range(2, 7)}
    for k in range(40):
        x = game.sample_hidden(s, 0, np.random.default_rng(k))
        assert game.invariants_ok(x)
        assert np.array_equal(game.observe(x, 0), game.observe(s, 0))
        hand = game.hand(x, 1)
        placeable = [t for t in hand if t in lacks]
        # the drawn tile, the only one fitting both 2 and 1 (zeros not live); the other tiles
        # avoid what seat 1 lacks
        assert placeable == [(1, 2)]
        assert moves(game, x) == {((1, 2), 0), ((1, 2), 1)}


def test_sample_hidden_respects_forced_pass_and_starter_information():
    game = make_game("sum7_v0", num_players=4)
    hands = [[(6, 6), (2, 6), (3, 6), (4, 5), (4, 6), (5, 5), (5, 6)],
             [(0, 0), (0, 1), (0, 2), (2, 2), (2, 3), (2, 4), (3, 3)],
             [(1, 2), (0, 3), (0, 4), (3, 4), (3, 5), (4, 4), (2, 5)],
             [(1, 1), (1, 3), (1, 4), (1, 5), (1, 6), (0, 5), (0, 6)]]
    s = deal(game, hands)
    for k in range(40):
        x = game.sample_hidden(s, 0, np.random.default_rng(k))
        assert not set(game.hand(x, 1)) & ONE_X  # seat 1 passed on 1 | 1
        assert set(game.hand(x, 2)) & ONE_X  # seat 2 is at a real decision: it holds a 1
        assert np.array_equal(game.observe(x, 0), game.observe(s, 0))
    game = make_game("sum7_v0")
    s = deal(game, [[(1, 2), (0, 6), (3, 6)], [(4, 5), (2, 6), (0, 0)]])  # S-3 lead 3-6
    for k in range(40):
        x = game.sample_hidden(s, 0, np.random.default_rng(k))
        assert not set(game.hand(x, 1)) & (DOUBLES_1_6 | {(5, 6), (4, 6)})
        assert PASS in moves(game, x) and len(moves(game, x)) >= 2


def test_observation_is_seat_relative():
    game = make_game("sum7_v0", num_players=3)
    s = deal(game, [[(1, 2), (3, 3)], [(0, 0), (2, 2)], [(5, 5), (1, 6)]], market=[(4, 4)])
    o1 = obs_of(game, s, 1)
    assert tiles_of(o1["hand"]) == {(0, 0), (2, 2)}
    assert o1["played_by"][1, tile_id(5, 5)] == 1  # seat 2 is one seat after seat 1
    assert o1["to_move"].tolist() == [0, 0, 1]  # seat 0 is two seats after seat 1
    assert o1["hand_sizes"].tolist() == [2, 1, 2]


# ------------------------------------------------------------------ rendering, actions, bad input
def test_render_ansi_shows_the_line_with_both_required_numbers():
    env = domino_envs.make("sum7_v0", render_mode="ansi")
    hands = [[(2, 2), (2, 5), (1, 6)], [(4, 5), (1, 3), (3, 6)]]
    env.reset(seed=0, options={"deal": {"hands": hands, "stock": rest_of(hands)}})
    env.step(env.encode_action(4, 5, 0))
    text = env.render()
    assert "line: (3) [4|5]<2|2> (5)" in text
    assert "required: left 3 | right 5" in text
    assert "seat 0 holds: [2|5] [1|6]" in text and "zero traps not yet" in text


def test_encode_and_describe_actions():
    game = make_game("sum7_v0")
    assert game.num_actions == 57
    assert game.encode_action(5, 2, 1) == tile_id(2, 5) * 2 + 1
    assert game.encode_action("pass") == game.encode_action("wait") == 56
    assert game.describe_action(56) == "pass (wait)"
    assert game.describe_action(tile_id(2, 5) * 2) == "place 2-5 on the left side"
    with pytest.raises(ValueError, match="side must be 0"):
        game.encode_action(1, 2, 2)
    with pytest.raises(ValueError, match="not in the double-six set"):
        game.encode_action(7, 7, 0)
    with pytest.raises(ValueError, match="'pass'/'wait'"):
        game.encode_action("draw")


@pytest.mark.parametrize("key,value,pattern", [
    ("num_players", 5, r"num_players=5 must be an integer in 2\.\.4"),
    ("deal", "seven", r"deal='seven' is not allowed; allowed values: \['standard', 'seven_up'\]"),
    ("zero_rule", "soft", r"zero_rule='soft' is not allowed; allowed values: \['trap', 'strict', 'wild'\]"),
    ("match", "yes", r"match='yes' must be True or False"),
    ("target", 0, r"target=0 must be an integer in 1\.\.1000000"),
    ("target", 2 ** 70, r"target=1180591620717411303424 must be an integer in 1\.\.1000000"),
    ("max_hands", 0, r"max_hands=0 must be an integer in 1\.\.1000000"),
    ("max_hands", 2 ** 63, r"max_hands=9223372036854775808 must be an integer in 1\.\.1000000"),
    ("num_players", 2.0, r"num_players=2\.0 must be an integer in 2\.\.4"),
])
def test_bad_config_values(key, value, pattern):
    with pytest.raises(ConfigError, match=pattern):
        domino_envs.make("sum7_v0", **{key: value})


@pytest.mark.parametrize("bad,pattern", [
    ({"hands": [[(1, 2)]]}, r"'hands' must be a list of 2 hands"),
    ({"hands": 5}, r"'hands' must be a list of 2 hands"),
    ({"hands": [[(1, 2)], [(1, 2)]]}, r"hand 1: tile \(1, 2\) is dealt twice"),
    ({"hands": [[(1, 2)], [(7, 7)]]}, r"hand 1: tile \(7, 7\) is not in a double-6 set"),
    ({"hands": [[(1, 2)], ["x"]]}, r"hand 1: 'x' is not a tile \(a, b\) with halves 0\.\.6"),
    ({"hands": [[(1, 2)], []]}, r"every hand needs at least one tile"),
    ({"hands": [[(0, 1)], [(0, 0)]]}, r"no hand holds a tile that can lead"),
    ({"hands": [[(1, 2)], [(3, 4)]], "stock": [(3, 4)]}, r"stock: tile \(3, 4\) is dealt twice"),
    ({"hands": [[(1, 2)], [(3, 4)]], "market": []}, r"deal key 'market' is now 'stock'"),
    ({"hands": [[(1, 2)], [(3, 4)]], "boneyard": []}, r"deal key 'boneyard' is now 'stock'"),
    ({"hands": [[(1, 2)], [(3, 4)]], "leader": 0}, r"a deal is a dict with keys \['hands', 'stock'\]"),
    ({"hands": [[(1, 2)], [(3, 4)]], "first": 0}, r"cannot name 'first': the starter is the holder"),
    ({"hands": [[(1, 2)], [(3, 4)]], "stock": (5, 5)}, r"stock: 5 is not a tile \(a, b\)"),
    ({"hands": [[(1, 2)], [(3, 4)]], "stock": 5}, r"'stock' must be a list of tiles"),
    ({"hands": [[(1, 2)], [(3, 4)]], "stock": [(5, 5)]}, r"the deal leaves out \['0-0', '0-1'"),
    ({"hands": [[(1, 2)], [(3, 4)]], "stock": [(5.0, 5)]}, r"stock: \(5\.0, 5\) is not a tile"),
])
def test_malformed_deals(bad, pattern):
    env = domino_envs.make("sum7_v0")
    with pytest.raises(DealError, match=pattern):
        env.reset(seed=0, options={"deal": bad})


def test_illegal_action_names_the_legal_set_including_pass():
    game = make_game("sum7_v0")
    s = deal(game, HANDS_TRAP)
    with pytest.raises(IllegalActionError, match=r"place 0-1 on the left side\) is illegal.*56 \(pass \(wait\)\)"):
        game.step(s, act(game, 0, 1, 0))


def test_starter_out_with_the_lead_ends_the_hand():
    game = make_game("sum7_v0")
    s = deal(game, [[(6, 6)], [(1, 2)]])
    assert s[H_DONE] == 1 and game.rewards(s).tolist() == [3.0, -3.0]


def test_mirror_placement_on_sides_showing_one_pip_is_not_offered():
    """Issue 13 item 9: both open sides show 6 (1 | 1 required): a 1 goes on the left side only,
    the right-side placement (the same game mirrored) is left out of the mask and refused."""
    game = make_game("sum7_v0")
    s = deal(game, HANDS_TRAP)
    assert game.required(s) == (1, 1) and s[H_TURN] == 1
    assert moves(game, s) == {((1, 2), 0), ((1, 4), 0), ((1, 5), 0), PASS}
    assert game.legal_mask(s)[act(game, 1, 2, 1)] == 0
    with pytest.raises(IllegalActionError, match="legal actions"):
        game.step(s, act(game, 1, 2, 1))
    game.step(s, act(game, 1, 2, 0))
    assert game.required(s) == (5, 1)  # different requirements: each side offers its own tiles
    assert moves(game, s) == {((3, 5), 0), PASS}
