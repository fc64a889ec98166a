"""Racehorse (racehorse_v0): every rule of rules-spec section 3 and every id T-1..T-12 on hand-set
deals, asserting exact legal actions, draws, counts, points, extra plays, next seat and rewards.

Deals name every seat's hand and the boneyard in draw order; tiles named nowhere are out of play.
Counts are worked out in the comments: "ends L/R" are the open ends of arms 0 (left) and 1 (right).
"""
from __future__ import annotations

import numpy as np
import pytest

import domino_envs
import domino_envs.games.racehorse as rh
from domino_envs import make_game
from domino_envs.core import H_HAND, H_REWARD, H_TRUNC, H_TURN, ConfigError, DealError, IllegalActionError
from domino_envs.games.racehorse import SPECIAL_MASK
from domino_envs.tiles import PIP_MASK, TILE_A, TILE_B


def game(**kw):
    return make_game("racehorse_v0", **kw)


def start(g, hands, boneyard=(), first=0, scores=None):
    s = g.new_state()
    deal = {"hands": hands, "stock": list(boneyard), "first": first}
    if scores is not None:
        deal["scores"] = scores
    g.set_deal(s, deal)
    assert g.invariants_ok(s)
    return s


def legal(g, s):
    """Legal actions as {(low half, high half, arm)}."""
    out = set()
    for a in g.legal_actions(s):
        t, arm = divmod(a, g.num_arms)
        out.add((int(TILE_A[t]), int(TILE_B[t]), arm))
    return out


def play(g, s, a, b, arm=0):
    """Step with tile (a, b) on arm; return that step's rewards in points."""
    g.step(s, g.encode_action(a, b, arm))
    assert g.invariants_ok(s)
    return [float(x) for x in g.rewards(s)]


def obs(g, s, seat):
    return g.decode(g.observe(s, seat))


def tiles_of(g, s, seat):
    return sorted(g.hand(s, seat))


def placed(g, s):
    """The layout's placements as ((a, b), arm)."""
    return [((int(TILE_A[t]), int(TILE_B[t])), a) for t, a in g.line(s)]


def pips_lacking(mask_pips, hand_mask):
    return all((hand_mask & PIP_MASK[q]) == 0 for q in range(7) if (mask_pips >> q) & 1)


# ----------------------------------------------------------------------------- config, deal (T-1)
def test_config_defaults_and_bad_values():
    g = game()
    c = g.config
    assert (c.num_players, c.teams, c.spinner, c.award, c.match, c.target) == (2, False, "none", "per_pip", False, 61)
    assert g.num_actions == 28 * 2
    assert game(spinner="first_double").num_actions == 28 * 4
    assert game(spinner="all_doubles").num_actions == 28 * 16
    bad = [
        ({"num_players": 1}, "num_players"), ({"num_players": 5}, "num_players"),
        ({"teams": True}, "teams=True needs num_players=4"), ({"num_players": 3, "teams": True}, "num_players=4"),
        ({"teams": 1, "num_players": 4}, "teams"), ({"spinner": "first"}, "spinner"),
        ({"spinner": True}, "spinner"), ({"award": "per_ten"}, "award"), ({"target": 0}, "target"),
        ({"target": 61.0}, "target"), ({"max_hands": 0}, "max_hands"), ({"first_setter": 2}, "first_setter"),
        ({"match": "yes"}, "match"), ({"colour": "red"}, "unknown config key"),
    ]
    for kw, words in bad:
        with pytest.raises(ConfigError, match=words):
            game(**kw)


@pytest.mark.parametrize("n,bone", [(2, 14), (3, 7), (4, 0)])
def test_T1_deal_seven_each_boneyard_14_7_0(n, bone):
    """T-1: 7 tiles each, the rest is the boneyard. Checked through what is public after reset's
    forced steps: every seat holds 7 - placed + drawn, and boneyard + drawn = 28 - 7n."""
    g = game(num_players=n)
    s = g.new_state()
    for seed in range(30):
        g.reset(s, seed)
        o = obs(g, s, 0)
        played = o["played_by"].sum(axis=1)
        assert np.array_equal(o["hand_sizes"], 7 - played + o["drawn"])
        assert o["boneyard"][0] + o["drawn"].sum() == bone
        assert g.invariants_ok(s)


def test_T1_teams_share_points_and_scores():
    """T-1: with teams, both partners show the team's score; a point is +1 to both partners and -1
    to both opponents."""
    g = game(num_players=4, teams=True)
    s = start(g, [[(0, 5), (6, 6), (0, 1), (0, 2)], [(3, 4)], [(2, 4)], [(1, 3)]], first=0)
    assert legal(g, s) == {(0, 5, 0), (6, 6, 0)}
    assert play(g, s, 0, 5) == [1, -1, 1, -1]  # count 5
    assert legal(g, s) == {(0, 1, 0), (0, 2, 0)}
    assert g.scores(s) == [1, 0, 1, 0]
    assert list(obs(g, s, 1)["scores"]) == [0, 1, 0, 1]  # seat-relative: me (seat 1) first


# ----------------------------------------------------------------------------- the set (T-3, T-5)
def test_T3_set_is_a_special_tile_counts_and_obliges_another_play():
    g = game()
    s = start(g, [[(0, 5), (6, 6), (5, 6), (0, 3), (1, 2)], [(3, 4), (1, 3), (2, 2), (4, 5)]],
              boneyard=[(1, 1), (2, 6)])
    # only doubles and score tiles may be set, and only as the first tile (arm 0)
    assert legal(g, s) == {(0, 5, 0), (6, 6, 0)}
    o = obs(g, s, 0)
    assert list(o["setter"]) == [1, 0] and list(o["to_move"]) == [1, 0] and o["extra_play"][0] == 0
    assert play(g, s, 0, 5) == [1.0, -1.0]  # the set is counted: 0 + 5 = 5 -> 1 point
    assert g.scores(s) == [1, 0] and g.count(s) == 5
    # the set obliges another play: same seat, extra_play shown
    assert s[H_TURN] == 0 and g.extra_play(s)
    o = obs(g, s, 0)
    assert o["extra_play"][0] == 1 and list(o["setter"]) == [0, 0]
    assert legal(g, s) == {(0, 3, 0), (5, 6, 1)}
    assert play(g, s, 0, 3, 0) == [0.0, 0.0]  # ends 3/5: count 8
    assert s[H_TURN] == 1 and not g.extra_play(s)  # 0-3 is not special: the turn passes
    assert legal(g, s) == {(3, 4, 0), (1, 3, 0), (4, 5, 1)}


def test_T5_four_players_duty_passes_and_failed_obliged_play_ends_turn():
    g = game(num_players=4)
    s = start(g, [[(1, 2), (3, 4)], [(1, 3), (2, 4)], [(6, 6), (4, 6), (1, 5)], [(0, 6), (4, 4)]], first=0)
    # seats 0 and 1 hold no double and no score tile: the duty passes to seat 2
    assert g.setter(s) == 2 and s[H_TURN] == 2
    o = obs(g, s, 2)
    assert list(o["no_special"]) == [0, 0, 1, 1]  # relative: seats 2, 3, 0, 1
    assert list(o["setter"]) == [1, 0, 0, 0]
    assert legal(g, s) == {(6, 6, 0), (4, 6, 0)}
    # set 4-6: count 10 -> 2 points; obliged: 6-6 fits only the right end -> forced (count 4+12=16);
    # obliged again: 1-5 fits nothing, and with 4 players the turn just ends
    assert play(g, s, 4, 6) == [-2 / 3, -2 / 3, 2, -2 / 3]
    assert placed(g, s) == [((4, 6), 0), ((6, 6), 1)]
    assert g.scores(s) == [0, 0, 2, 0] and g.count(s) == 16
    assert s[H_TURN] == 3 and not g.extra_play(s)
    assert list(obs(g, s, 3)["voids"][3]) == [0, 0, 0, 0, 1, 0, 1]  # seat 2 lacks 4 and 6
    assert legal(g, s) == {(0, 6, 1), (4, 4, 0)}


def test_T5_two_three_players_setter_draws_until_special():
    g = game(num_players=3)
    s = start(g, [[(1, 2), (3, 4)], [(0, 1), (2, 6)], [(1, 3), (4, 5)]],
              boneyard=[(0, 2), (1, 6), (4, 4), (2, 5)], first=0)
    # seat 0 draws 0-2, 1-6 (no special), 4-4: its only special, set at once (count 8: nothing);
    # obliged: 3-4 fits both sides of the lone 4-4 alike (one action): played at once (8 + 3 = 11)
    assert placed(g, s)[:2] == [((4, 4), 0), ((3, 4), 0)]
    assert tiles_of(g, s, 0) == sorted([(1, 2), (0, 2), (1, 6)])
    o = obs(g, s, 0)
    assert o["drawn"][0] == 3
    assert list(o["no_special"]) == [1, 0, 0]  # drew for the set: holds no other special tile


def test_T5_setter_duty_passes_when_the_boneyard_runs_out():
    g = game(num_players=3)
    s = start(g, [[(1, 2)], [(0, 1), (5, 5), (3, 3)], [(2, 4)]], boneyard=[(0, 2), (1, 3)], first=0)
    assert g.setter(s) == 1 and s[H_TURN] == 1
    o = obs(g, s, 1)
    assert list(o["drawn"]) == [0, 0, 2] and o["boneyard"][0] == 0  # relative: seat 0 is last
    assert list(o["no_special"]) == [0, 0, 1]
    assert legal(g, s) == {(5, 5, 0), (3, 3, 0)}


def test_T5_setter_random_in_hand_one_then_rotates_from_the_nominal_setter():
    g = game(num_players=4)
    s = g.new_state()
    firsts = set()
    for seed in range(40):
        g.reset(s, seed)
        firsts.add(g.nominal_setter(s))
    assert firsts == {0, 1, 2, 3}
    g2 = game(num_players=4, first_setter=3)
    for seed in range(10):
        g2.reset(s, seed)
        assert g2.nominal_setter(s) == 3
    # match: hand 1's nominal setter is 0, whose duty passes to seat 1 (the actual setter); hand 2's
    # duty starts one seat after the nominal setter: seat 1, not seat 2
    gm = game(num_players=4, match=True)
    s = start(gm, [[(1, 2)], [(0, 5), (0, 1)], [(3, 4)], [(4, 6)]], first=0)
    # seat 1 sets 0-5 (+1, forced), then 0-1 (forced, count 6) and goes out: 3 + 7 + 10 = 20 points
    assert s[H_HAND] == 1 and not gm.is_over(s)
    assert gm.scores(s) == [0, 21, 0, 0]
    assert gm.nominal_setter(s) == 1
    assert gm.last_result(s) == {"out": 1, "winner": 1, "award": 20}
    # the second hand is a fresh random deal
    o = obs(gm, s, 0)
    assert o["played_by"].sum() + o["hand_sizes"].sum() + o["boneyard"][0] == 28


# ----------------------------------------------------------------------------- obligation (T-2)
def test_T2_the_tile_obliges_not_the_score():
    g = game()
    s = start(g, [[(6, 6), (5, 5), (3, 6), (0, 1)], [(1, 3), (3, 4), (0, 2)]])
    assert legal(g, s) == {(6, 6, 0), (5, 5, 0)}
    # a double that does not score (count 12) still obliges another play: 3-6, the only one (both
    # sides of the lone 6-6 alike), on the left: the 6-6 still counts 12 (right side open) + 3 = 15
    # -> 3 points, but 3-6 is no double and no score tile: no further play, the turn passes
    assert play(g, s, 6, 6) == [3, -3]
    assert placed(g, s) == [((6, 6), 0), ((3, 6), 0)]
    assert g.scores(s) == [3, 0] and g.count(s) == 15
    assert s[H_TURN] == 1 and not g.extra_play(s)
    assert legal(g, s) == {(1, 3, 0), (3, 4, 0)}


def test_T2_score_tile_that_does_not_score_still_obliges():
    g = game()
    # set 6-6 (count 12), then 6-4 on the left: ends 4 / 6-6 lone side 12 -> 16, no score, but 6-4
    # is a score tile: obliged again
    s = start(g, [[(6, 6), (4, 6), (1, 4), (2, 4), (0, 3)], [(0, 0), (1, 1)]])
    assert play(g, s, 6, 6) == [0, 0]  # 6-4, the only obliged play, made at once
    assert placed(g, s) == [((6, 6), 0), ((4, 6), 0)]
    assert g.count(s) == 16 and s[H_TURN] == 0 and g.extra_play(s)
    assert legal(g, s) == {(1, 4, 0), (2, 4, 0)}


# ----------------------------------------------------------------------------- drawing (T-3, T-7)
def test_T3_obliged_play_draws_until_playable_and_a_drawn_special_obliges_again():
    g = game()
    s = start(g, [[(6, 6), (3, 3), (1, 2)], [(4, 5), (2, 4), (0, 0)]],
              boneyard=[(0, 1), (4, 6), (2, 5), (5, 6), (3, 4)])
    assert legal(g, s) == {(6, 6, 0), (3, 3, 0)}
    bone0 = obs(g, s, 0)["boneyard"][0]
    # set 6-6 (12); obliged; 3-3 and 1-2 fit no 6: draw 0-1 (kept), 4-6 (fits both sides of the
    # lone 6-6 alike: one action), played on the left: 12 (6-6 right side open) + 4 = 16; 4-6 is a
    # score tile: obliged again; nothing fits 4 / 6: draw 2-5 (kept), 5-6 (fits the right only):
    # forced, ends 4/5 = 9
    assert play(g, s, 6, 6) == [0, 0]
    assert placed(g, s) == [((6, 6), 0), ((4, 6), 0), ((5, 6), 1)]
    assert g.count(s) == 9
    o = obs(g, s, 1)
    assert o["drawn"][1] == 4 and o["boneyard"][0] == bone0 - 4  # relative: seat 0 is r=1
    assert tiles_of(g, s, 0) == sorted([(3, 3), (1, 2), (0, 1), (2, 5)])
    assert s[H_TURN] == 1 and not g.extra_play(s)
    assert legal(g, s) == {(4, 5, 0), (4, 5, 1), (2, 4, 0)}


def test_T7_must_play_if_able_else_draw_until_playable_and_play_it():
    g = game()
    s = start(g, [[(2, 3), (4, 4), (3, 6), (2, 6)], [(1, 1), (0, 4)]],
              boneyard=[(1, 5), (0, 3), (2, 4), (5, 5)])
    assert legal(g, s) == {(2, 3, 0), (4, 4, 0)}
    assert play(g, s, 2, 3) == [1, -1]  # 2 + 3 = 5
    # obliged: both 3-6 and 2-6 fit; a seat able to play may not draw (no draw action exists)
    assert legal(g, s) == {(3, 6, 1), (2, 6, 0)}
    assert obs(g, s, 0)["boneyard"][0] == 4
    # 3-6 right: ends 2/6 = 8. Seat 1 cannot play: draws 1-5, 0-3 (kept), 2-4 (fits the left only):
    # plays it, ends 4/6 = 10 -> 2 points; 2-4 is not special: the turn passes
    assert play(g, s, 3, 6, 1) == [-2, 2]
    assert g.scores(s) == [1, 2]
    assert placed(g, s)[-1] == ((2, 4), 0)
    assert tiles_of(g, s, 1) == sorted([(1, 1), (0, 4), (1, 5), (0, 3)])
    o = obs(g, s, 0)
    assert list(o["drawn"]) == [0, 3] and o["boneyard"][0] == 1
    assert list(o["voids"][1]) == [0, 0, 1, 0, 0, 0, 1]  # seat 1 drew on 2 and 6
    assert s[H_TURN] == 0 and legal(g, s) == {(4, 4, 0), (2, 6, 1)}


def test_T7_four_players_pass_when_unable():
    g = game(num_players=4)
    s = start(g, [[(0, 5), (6, 6), (1, 6)], [(1, 1), (2, 3)], [(0, 2), (5, 6)], [(3, 4)]])
    assert play(g, s, 0, 5) == [1, -1 / 3, -1 / 3, -1 / 3]
    # obliged: 6-6 and 1-6 fit no 0/5: turn ends. Seat 1 cannot play: passes. Seat 2 decides.
    assert s[H_TURN] == 2
    o = obs(g, s, 2)
    assert list(o["voids"][3]) == [1, 0, 0, 0, 0, 1, 0]  # seat 1 (r=3) lacks 0 and 5
    assert list(o["voids"][2]) == [1, 0, 0, 0, 0, 1, 0]  # seat 0 too
    assert legal(g, s) == {(0, 2, 0), (5, 6, 1)}


# ----------------------------------------------------------------------------- last tile (T-6)
def test_T6_last_tile_special_draws_leaving_the_reserve_then_goes_out():
    g = game()
    s = start(g, [[(2, 3), (3, 3)], [(1, 3), (0, 0)]], boneyard=[(2, 6), (1, 1), (4, 4)])
    assert legal(g, s) == {(2, 3, 0), (3, 3, 0)}
    # set 2-3: 5 -> 1 point; obliged: 3-3 on the right (forced): 2 + 6 = 8; 3-3 was the last tile
    # and is special: obliged again with an empty hand -> draw (reserve 2 of 3): 2-6 fits the left:
    # played, ends 6 / 3-3 = 12. It is the last tile and not special: a proper domino.
    assert play(g, s, 2, 3) == [5, -5]  # 1 + 4 pips (1-3, 0-0)
    assert g.is_over(s)
    assert g.last_result(s) == {"out": 0, "winner": 0, "award": 4}
    assert g.scores(s) == [5, 0]
    assert g.boneyard(s) == [(1, 1), (4, 4)]
    assert not any(g.washed_up(s))


def test_T6_reserve_stops_an_empty_hand_only_others_may_draw_it():
    g = game()
    s = start(g, [[(2, 3), (3, 3)], [(6, 6), (5, 6)]], boneyard=[(4, 4), (0, 1), (1, 1)])
    # ... 3-3 was the last tile: seat 0 draws 4-4 (does not fit 2 / 3) and must stop, leaving the
    # reserve of 2: it keeps 4-4, its turn ends. Seat 1 cannot play; it holds tiles, so the reserve
    # does not bind it: it draws 0-1, 1-1 (neither fits) and passes. Nobody can act: a block.
    # Seat 0 holds 8 pips, seat 1 26: seat 0 takes 26.
    assert play(g, s, 2, 3) == [27, -27]
    assert g.is_over(s)
    o = obs(g, s, 0)
    assert list(o["drawn"]) == [1, 2] and o["boneyard"][0] == 0
    assert g.last_result(s) == {"out": -1, "winner": 0, "award": 26}
    assert g.scores(s) == [27, 0]
    assert not any(g.washed_up(s))


def test_T6_T9_nothing_above_the_reserve_washes_up_and_a_washed_up_seat_cannot_win_a_block():
    g = game()
    s = start(g, [[(2, 3), (3, 3)], [(6, 6), (1, 3)]], boneyard=[(4, 4), (0, 1)])
    # ... 3-3 was the last tile; the boneyard holds only the reserve: seat 0 draws nothing, holds no
    # tiles and is washed up. Seat 1 plays on alone: 1-3 right (2 + 1 = 3), then draws 4-4, 0-1 and
    # plays 0-1 (2 + 0 = 2), then is blocked with 6-6, 4-4. Seat 0 has 0 pips but is washed up:
    # seat 1 is the only eligible seat and wins seat 0's 0 pips: no award points.
    assert play(g, s, 2, 3) == [1, -1]
    assert g.is_over(s)
    assert g.washed_up(s) == [True, False]
    assert placed(g, s) == [((2, 3), 0), ((3, 3), 1), ((1, 3), 1), ((0, 1), 1)]
    assert g.last_result(s) == {"out": -1, "winner": 1, "award": 0}
    assert g.scores(s) == [1, 0]


def test_T6_three_players_reserve_is_one():
    g = game(num_players=3)
    s = start(g, [[(2, 3), (3, 3)], [(2, 4), (1, 3)], [(5, 6)]], boneyard=[(4, 4), (0, 1)])
    play(g, s, 2, 3)
    # empty hand after 3-3: draws 4-4 (no fit), boneyard at the reserve (1): stops, keeps 4-4
    o = obs(g, s, 1)
    assert list(o["drawn"]) == [0, 0, 1] and o["boneyard"][0] == 1  # relative: seat 0 is r=2
    assert tiles_of(g, s, 0) == [(4, 4)] and not g.washed_up(s)[0]
    assert s[H_TURN] == 1 and legal(g, s) == {(2, 4, 0), (1, 3, 1)}


def test_T6_T9_four_players_washed_up_sits_out_and_cannot_win():
    g = game(num_players=4)
    s = start(g, [[(0, 5), (0, 0)], [(5, 6), (3, 4), (2, 2)], [(1, 6), (3, 3)], [(1, 5), (1, 3), (4, 4)]])
    assert legal(g, s) == {(0, 5, 0), (0, 0, 0)}
    # set 0-5: 5 -> 1; obliged: 0-0 on the left (forced): 0 + 5 = 5 -> 1; 0-0 was seat 0's last tile
    # and special: washed up. Seat 1: 5-6 forced (0 + 6); seat 2: 1-6 forced (0 + 1); seat 3 decides.
    assert play(g, s, 0, 5) == [2, -2 / 3, -2 / 3, -2 / 3]
    assert g.washed_up(s) == [True, False, False, False]
    assert list(obs(g, s, 3)["washed_up"]) == [0, 1, 0, 0]  # relative: seat 0 is r=1
    assert g.scores(s) == [2, 0, 0, 0]
    assert s[H_TURN] == 3 and legal(g, s) == {(1, 5, 1), (1, 3, 1)}
    # a forced play is public: seat 1 had nothing else for 0 and 5
    assert pips_lacking(int(s[rh.VOID + 1]), int(s[rh.HANDS + 1]))
    # 1-3: (0 + 3). Seat 0 is skipped: seat 1 plays 3-4 (forced, 4); seat 2 passes; seat 3 4-4
    # (forced, 0 + 8), obliged, 1-5 fits nothing: turn ends; seat 1 (2-2) cannot play: block.
    # Seat 0 (0 pips) is washed up: seat 1 (4) beats seats 2 (6) and 3 (6) and takes 0 + 6 + 6 = 12.
    assert play(g, s, 1, 3, 1) == [-4, 12, -4, -4]
    assert placed(g, s)[-3:] == [((1, 3), 1), ((3, 4), 1), ((4, 4), 1)]
    assert g.is_over(s)
    assert g.last_result(s) == {"out": -1, "winner": 1, "award": 12}
    assert g.scores(s) == [2, 12, 0, 0]


def test_T9_T11_team_with_a_washed_up_partner_wins_on_the_partners_pips():
    g = game(num_players=4, teams=True)
    s = start(g, [[(0, 5), (0, 0)], [(5, 6), (3, 4), (2, 2)], [(1, 6), (3, 3)], [(1, 5), (1, 3), (4, 4)]])
    assert play(g, s, 0, 5) == [2, -2, 2, -2]
    # the same play as without teams; at the block team 0 holds 0 + 6 = 6, team 1 4 + 6 = 10:
    # team 0 is eligible through seat 2 and wins 10
    assert play(g, s, 1, 3, 1) == [10, -10, 10, -10]
    assert g.last_result(s) == {"out": -1, "winner": 0, "award": 10}
    assert g.scores(s) == [12, 0, 12, 0]


# ----------------------------------------------------------------------------- awards (T-8, T-10, T-11)
def test_T11_team_award_after_a_domino():
    g = game(num_players=4, teams=True)
    s = start(g, [[(0, 5), (5, 5), (0, 1)], [(6, 6)], [(1, 3), (2, 2)], [(4, 4)]])
    assert legal(g, s) == {(0, 5, 0), (5, 5, 0)}
    assert play(g, s, 0, 5) == [1, -1, 1, -1]
    assert legal(g, s) == {(5, 5, 1), (0, 1, 0)}
    # 5-5 right: 0 + 10 = 10 -> 2; obliged: 0-1 left (forced): 1 + 10 = 11; 0-1 is seat 0's last
    # tile and not special: it went out. Team 0 holds 8 (seat 2), team 1 holds 12 + 8 = 20.
    assert play(g, s, 5, 5, 1) == [22, -22, 22, -22]
    assert g.is_over(s)
    assert g.last_result(s) == {"out": 0, "winner": 0, "award": 20}
    assert g.scores(s) == [23, 0, 23, 0]


def test_T11_after_a_domino_the_lower_team_total_still_decides():
    g = game(num_players=4, teams=True)
    s = start(g, [[(0, 5), (5, 5), (0, 1)], [(1, 3)], [(6, 6), (5, 6)], [(4, 4)]])
    play(g, s, 0, 5)
    # seat 0 goes out, but its partner holds 23 against team 1's 4 + 8 = 12: team 1 wins 23
    assert play(g, s, 5, 5, 1) == [2 - 23, 23 - 2, 2 - 23, 23 - 2]
    assert g.last_result(s) == {"out": 0, "winner": 1, "award": 23}
    assert g.scores(s) == [3, 23, 3, 23]


@pytest.mark.parametrize("seat3,per_pip,per_five", [([(2, 3)], 17, 3), ([(2, 4)], 18, 4), ([(0, 4)], 16, 3),
                                                     ([(0, 3)], 15, 3), ([(3, 4)], 19, 4), ([(0, 0)], 12, 2)])
def test_T8_award_per_pip_or_per_five_rounded_to_nearest_five(seat3, per_pip, per_five):
    for award, expect in (("per_pip", per_pip), ("per_five", per_five)):
        g = game(num_players=4, teams=True, award=award)
        s = start(g, [[(0, 5), (5, 5), (0, 1)], [(6, 6)], [(1, 3), (2, 2)], seat3])
        play(g, s, 0, 5)
        play(g, s, 5, 5, 1)
        assert g.last_result(s) == {"out": 0, "winner": 0, "award": expect}
        assert g.scores(s) == [3 + expect, 0, 3 + expect, 0]


def test_T10_tie_for_lowest_scores_nothing():
    g = game()
    s = start(g, [[(0, 5), (6, 6), (1, 2)], [(4, 6), (2, 3)]])
    # set 0-5 (1 point); obliged: nothing fits, boneyard empty: turn ends; seat 1 cannot play:
    # block with 15 pips each -> no award
    assert play(g, s, 0, 5) == [1, -1]
    assert g.is_over(s)
    assert g.last_result(s) == {"out": -1, "winner": -1, "award": 0}
    assert g.scores(s) == [1, 0]


# ----------------------------------------------------------------------------- spinner (T-4)
def test_T4_first_double_spinner_sides_then_branches_and_a_branch_scores():
    g = game(spinner="first_double")
    s = start(g, [[(5, 5), (0, 5), (2, 5), (1, 2)], [(3, 5), (3, 4)]])
    assert legal(g, s) == {(5, 5, 0), (0, 5, 0)}
    assert play(g, s, 5, 5) == [2, -2]  # the lone spinner counts 10
    # branches stay closed until both sides are covered (the two sides are alike: left only)
    assert legal(g, s) == {(0, 5, 0), (2, 5, 0)}
    assert g.open_ends(s) == {0: 5, 1: 5}
    # 2-5 left: 10 (one side open) + 2 = 12. Seat 1: 3-5 right (forced): both sides covered, the
    # spinner no longer counts: 2 + 3 = 5 -> 1 point for seat 1
    assert play(g, s, 2, 5, 0) == [-1, 1]
    assert g.scores(s) == [2, 1] and g.count(s) == 5
    assert g.open_ends(s) == {0: 2, 1: 3, 2: 5, 3: 5}
    o = obs(g, s, 0)
    assert o["arm_ends"][2][5] == 1 and o["arm_ends"][3][5] == 1 and list(o["arm_tiles"]) == [1, 1, 0, 0]
    assert legal(g, s) == {(0, 5, 2), (1, 2, 0)}  # the empty branches are alike: the first only
    # 0-5 on the first branch: 2 + 3 + 0 = 5 -> 1 point; 0-5 is a score tile: obliged: 1-2 left
    # (forced): 1 + 3 + 0 = 4; 1-2 was the last tile and not special: out, takes seat 1's 7 pips
    assert play(g, s, 0, 5, 2) == [8, -8]
    assert g.is_over(s)
    assert g.scores(s) == [10, 1]
    assert g.last_result(s) == {"out": 0, "winner": 0, "award": 7}
    text = g.render(s, 0)
    assert "{5|5}" in text and "[0|5]" in text and "up: 0" in text  # the branch drawn above the spinner


def test_T4_no_spinner_by_default_a_double_stays_in_line():
    g = game()
    s = start(g, [[(5, 5), (0, 5), (2, 5), (1, 2)], [(3, 5), (3, 4)]])
    play(g, s, 5, 5)
    assert legal(g, s) == {(0, 5, 0), (2, 5, 0)}
    # 2-5 left (12); seat 1: 3-5 right (forced, 2 + 3 = 5 -> 1); seat 0 has no branch to use: 1-2
    # left is forced (1 + 3 = 4); seat 1: 3-4 (forced, 1 + 4 = 5 -> 1) was its last tile, not
    # special: out, takes seat 0's 0-5 (5 pips)
    assert play(g, s, 2, 5, 0) == [-7, 7]
    assert placed(g, s) == [((5, 5), 0), ((2, 5), 0), ((3, 5), 1), ((1, 2), 0), ((3, 4), 1)]
    assert g.scores(s) == [2, 7]
    assert g.last_result(s) == {"out": 1, "winner": 1, "award": 5}


def test_T4_all_doubles_every_double_spins():
    g = game(spinner="all_doubles")
    assert g.num_arms == 16
    s = start(g, [[(5, 5), (0, 5), (2, 5), (2, 4)], [(2, 2), (1, 3), (3, 5), (0, 4)]])
    play(g, s, 5, 5)
    play(g, s, 2, 5, 0)  # 10 + 2 = 12
    assert legal(g, s) == {(2, 2, 0), (3, 5, 1)}
    # 2-2 on the left is the second spinner (arms 4, 5, closed); obliged: 3-5 right (forced) covers
    # the first spinner's second side: its branches (arms 2, 3) open. Count: 2-2 at the left end (4)
    # + 3 = 7
    assert play(g, s, 2, 2, 0) == [0, 0]
    assert g.open_ends(s) == {0: 2, 1: 3, 2: 5, 3: 5}
    assert g.count(s) == 7
    assert legal(g, s) == {(0, 5, 2), (2, 4, 0)}
    # 2-4 covers the 2-2's far side: its branches (arms 4, 5) open
    play(g, s, 2, 4, 0)
    assert g.open_ends(s) == {0: 4, 1: 3, 2: 5, 3: 5, 4: 2, 5: 2}
    assert g.count(s) == 7
    assert legal(g, s) == {(1, 3, 1), (0, 4, 0)}
    o = obs(g, s, 1)
    assert o["arm_ends"].shape == (16, 7) and o["arm_ends"][4][2] == 1 and o["arm_ends"][5][2] == 1


# ----------------------------------------------------------------------------- match (T-12), rewards
def test_T12_match_ends_the_moment_the_target_is_reached():
    g = game(match=True, target=10)
    s = start(g, [[(0, 5), (6, 6), (1, 2)], [(3, 4), (0, 3), (0, 4)]], scores=[9, 0])
    assert play(g, s, 0, 5) == [1, -1]  # 9 + 1 = 10: over at once, obligation or not
    assert g.is_over(s) and s[H_TURN] == -1
    assert g.scores(s) == [10, 0]
    assert g.last_result(s) == {"out": -1, "winner": -1, "award": 0}
    # a single hand ignores the target
    g1 = game(target=10)
    s = start(g1, [[(0, 5), (6, 6), (1, 2)], [(3, 4), (0, 3), (0, 4)]], scores=[9, 0])
    play(g1, s, 0, 5)
    assert not g1.is_over(s) and g1.scores(s) == [10, 0]
    assert s[H_TURN] == 1 and legal(g1, s) == {(0, 3, 0), (0, 4, 0)}


def test_T12_match_award_reaching_target_ends_and_max_hands_truncates():
    g = game(num_players=4, match=True, target=21)
    s = start(g, [[(1, 2)], [(0, 5), (0, 1)], [(3, 4)], [(4, 6)]])
    assert g.is_over(s) and g.scores(s) == [0, 21, 0, 0] and s[H_TRUNC] == 0
    # the whole hand was forced: its rewards stay in the header (the env reports them at reset)
    assert list(g.rewards(s)) == [-7, 21, -7, -7]
    g = game(num_players=4, match=True, max_hands=1)
    s = start(g, [[(1, 2)], [(0, 5), (0, 1)], [(3, 4)], [(4, 6)]])
    assert g.is_over(s) and s[H_TRUNC] == 1 and s[H_HAND] == 1


def test_rewards_three_players_scorer_plus_k_others_minus_half():
    g = game(num_players=3)
    s = start(g, [[(0, 5), (6, 6), (0, 1), (0, 2)], [(3, 4)], [(1, 3)]])
    assert play(g, s, 0, 5) == [1, -0.5, -0.5]
    assert g.reward_scale == 6


def test_points_of_forced_plays_at_reset_are_paid_with_the_first_step():
    g = game()
    s = start(g, [[(0, 5), (0, 1), (0, 2)], [(1, 3), (1, 4)]])
    # the only special tile is set by the engine: 1 point, paid with the next step
    assert g.scores(s) == [1, 0]
    assert list(s[H_REWARD:H_REWARD + 2]) == [0, 0]
    assert legal(g, s) == {(0, 1, 0), (0, 2, 0)}
    assert play(g, s, 0, 1) == [1, -1]  # 1 + 5 = 6: nothing new, the pending point is paid
    assert g.scores(s) == [1, 0]
    # 3 + 5 = 8; then nobody can play: block, seat 0 (2 pips) takes seat 1's 5 - the pending point
    # is not paid a second time
    assert s[H_TURN] == 1 and play(g, s, 1, 3, 0) == [5, -5]
    assert g.scores(s) == [6, 0] and g.is_over(s)


def test_env_extra_play_keeps_the_agent_and_reports_it():
    env = domino_envs.make("racehorse_v0")
    env.reset(seed=3, options={"deal": {"hands": [[(0, 5), (6, 6), (5, 6), (0, 3), (1, 2)],
                                                  [(3, 4), (1, 3), (2, 2), (4, 5)]], "first": 0}})
    assert env.agent_selection == "player_0"
    env.step(env.encode_action(0, 5, 0))
    assert env.agent_selection == "player_0"
    o = env.observe("player_0")
    assert env.decode_observation(o)["extra_play"][0] == 1
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0}
    env.step(env.encode_action(0, 3, 0))
    assert env.agent_selection == "player_1"
    assert env.decode_observation(env.observe("player_1"))["extra_play"][0] == 0


# ----------------------------------------------------------------------------- sample_hidden
def _check_samples(g, s, seat, check, n=200):
    ref = g.observe(s, seat)
    for i in range(n):
        smp = g.sample_hidden(s, seat, np.random.default_rng(i))
        assert g.invariants_ok(smp)
        assert np.array_equal(g.observe(smp, seat), ref)
        check(smp)


def test_sample_hidden_keeps_just_drawn_tile_voids_and_a_real_decision():
    import domino_envs.games.racehorse as rh
    g = game()
    # forced: seat 0 sets 1-1 (its only special), obliged: 1-3 on the left (5: 1 point); seat 1:
    # 1-5 on the right (ends 3 / 5); seat 0 lacks 3 and 5: draws 0-1 (kept), 3-5, which it must
    # play on either end (different ends: a decision)
    s = start(g, [[(1, 1), (1, 3), (0, 2), (2, 4)], [(1, 5), (2, 6)]],
              boneyard=[(0, 1), (3, 5), (4, 6), (0, 0)])
    assert placed(g, s) == [((1, 1), 0), ((1, 3), 0), ((1, 5), 1)]
    assert obs(g, s, 0)["just_drew"][0] == 1 and s[H_TURN] == 0 and legal(g, s) == {(3, 5, 0), (3, 5, 1)}

    def check(smp):
        hand = int(smp[rh.HANDS])
        playable = hand & (PIP_MASK[3] | PIP_MASK[5])
        assert bin(playable).count("1") == 1  # exactly one playable tile: the one just drawn
        assert len(g.legal_actions(smp)) >= 2  # seat 0 is at a decision
        assert bin(hand).count("1") == 4
        assert len(g.boneyard(smp)) == len(g.boneyard(s))
    _check_samples(g, s, 1, check)


def test_sample_hidden_keeps_no_special_and_decisions_in_the_set():
    import domino_envs.games.racehorse as rh
    g = game(num_players=4)
    s = start(g, [[(1, 2), (3, 4)], [(1, 3), (2, 4)], [(6, 6), (4, 6), (1, 5)], [(0, 6), (4, 4)]])

    def check(smp):
        assert int(smp[rh.HANDS]) & SPECIAL_MASK == 0 and int(smp[rh.HANDS + 1]) & SPECIAL_MASK == 0
        assert bin(int(smp[rh.HANDS + 2]) & SPECIAL_MASK).count("1") >= 2  # the setter has a choice
    _check_samples(g, s, 3, check)


def test_sample_hidden_keeps_washed_up_and_reserve():
    import domino_envs.games.racehorse as rh
    g = game(num_players=3)
    s = start(g, [[(2, 3), (3, 3)], [(2, 4), (1, 3), (6, 6)], [(5, 6), (0, 0)]], boneyard=[(4, 4), (0, 1)])
    play(g, s, 2, 3)  # seat 0 draws 4-4 and stops at the reserve of 1

    def check(smp):
        assert len(g.boneyard(smp)) == 1
        assert bin(int(smp[rh.HANDS])).count("1") == 1
        assert pips_lacking(int(smp[rh.VOID]), int(smp[rh.HANDS]))
    _check_samples(g, s, 2, check)
    g4 = game(num_players=4)
    s = start(g4, [[(0, 5), (0, 0)], [(5, 6), (3, 4), (2, 2)], [(1, 6), (3, 3)], [(1, 5), (1, 3), (4, 4)]])
    play(g4, s, 0, 5)
    def check4(smp):
        assert smp[rh.HANDS] == 0 and g4.washed_up(smp)[0]
    _check_samples(g4, s, 2, check4)


# ----------------------------------------------------------------------------- bad input, render
def test_bad_deals_are_rejected_with_clear_errors():
    g = game()
    s = g.new_state()
    bad = [
        ("not a dict", "a deal is a dict"),
        ({"hands": [[(0, 5)]]}, "2 hands"),
        ({"hands": [[(0, 5)], [(0, 5)]]}, "dealt twice"),
        ({"hands": [[(0, 7)], [(1, 2)]]}, "not in a double-6 set"),
        ({"hands": [[(0, 5)], ["x"]]}, "not a tile"),
        ({"hands": [[(0, 5)], []]}, "at least one tile"),
        ({"hands": [[(0, 5)], [(1, 2)]], "first": 2}, "first=2"),
        ({"hands": [[(0, 5)], [(1, 2)]], "stock": [(1, 2)]}, "dealt twice"),
        ({"hands": [[(0, 5)], [(1, 2)]], "boneyard": [(3, 4)]}, "deal key 'boneyard' is now 'stock'"),
        ({"hands": [[(0, 5)], [(1, 2)]], "first": True}, "first=True"),
        ({"hands": 5}, "'hands' must be a list of 2 hands"),
        ({"hands": [[(0, 5)], [(1, 2)]], "scores": [61, 0]}, r"scores must be a list of 2 ints in 0\.\.60"),
        ({"hands": [[(0, 5)], [(1, 2)]], "scores": [5000, 0]}, "scores"),
        ({"hands": [[(0, 5)], [(1, 2)]], "scores": [2 ** 63 - 1, 0]}, "scores"),
        ({"hands": [[(0, 5)], [(1, 2)]], "scores": [1.0, 0]}, "scores"),
        ({"hands": [[(0, 5)], [(1, 2)]], "scores": [1]}, "scores"),
        ({"hands": [[(0, 5)], [(1, 2)]], "scores": [-1, 0]}, "scores"),
        ({"hands": [[(0, 5)], [(1, 2)]], "seat": 1}, "keys"),
    ]
    for deal, words in bad:
        with pytest.raises(DealError, match=words):
            g.set_deal(s, deal)
    g4 = game(num_players=4, teams=True)
    with pytest.raises(DealError, match="no stock"):
        g4.set_deal(s, {"hands": [[(0, 5)], [(1, 2)], [(1, 3)], [(1, 4)]], "stock": [(2, 2)]})
    with pytest.raises(DealError, match="partners share a score"):
        g4.set_deal(s, {"hands": [[(0, 5)], [(1, 2)], [(1, 3)], [(1, 4)]], "scores": [1, 0, 0, 0]})


def test_illegal_actions_name_the_action_and_the_legal_set():
    g = game(spinner="first_double")
    s = start(g, [[(0, 5), (6, 6), (1, 2)], [(3, 4), (0, 3), (0, 4)]])
    with pytest.raises(IllegalActionError, match=r"play 1-2 on the left end.*legal actions: \[.*0-5"):
        g.step(s, g.encode_action(1, 2, 0))  # not a double or score tile: cannot be set
    with pytest.raises(IllegalActionError, match="illegal"):
        g.step(s, g.encode_action(0, 5, 1))  # the set goes on arm 0
    with pytest.raises(IllegalActionError, match="out of range"):
        g.step(s, g.num_actions)
    with pytest.raises(ValueError, match="arm must be"):
        g.encode_action(0, 5, 4)
    with pytest.raises(ValueError, match="arm must be"):
        game().encode_action(0, 5, 2)
    play(g, s, 0, 5)  # obliged play impossible (no boneyard): seat 1 to move
    assert s[H_TURN] == 1
    with pytest.raises(IllegalActionError, match="spinner 1's first"):
        g.step(s, g.encode_action(0, 3, 2))  # no spinner, no branch
    assert "spinner 1's second (down) branch" in g.describe_action(g.encode_action(0, 5, 3))


def test_render_shows_the_cross_and_the_seat_states():
    g = game(num_players=4, spinner="first_double")
    s = start(g, [[(5, 5), (0, 5), (2, 5)], [(3, 5), (1, 6)], [(0, 6), (2, 2)], [(4, 4), (1, 3)]])
    text = g.render(s, 0)
    assert "holds the set duty" in text and "seat 0 holds: [0|5] [2|5] [5|5]" in text
    play(g, s, 5, 5)
    text = g.render(s, 0)
    assert "{5|5}" in text and "obliged extra play" in text and "count 10" in text


# ----------------------------------------------------------------------------- random hands, refereed
@pytest.mark.parametrize("kw", [
    {}, {"num_players": 3}, {"num_players": 4}, {"num_players": 4, "teams": True, "award": "per_five"},
    {"spinner": "first_double", "num_players": 3}, {"spinner": "all_doubles", "num_players": 4, "teams": True},
])
def test_random_hands_refereed_from_the_final_state(kw):
    """Random single hands, each checked after the end against the rules, recomputed in Python from
    the final state: count points per placement (replaying the layout), the award (T-8..T-11), the
    ending (a proper domino, or nobody able to play or draw), washed-up seats, draw bookkeeping."""
    from domino_envs.layout import lay_count, lay_init, lay_place, lay_size

    g = game(**kw)
    n = g.num_players
    side = (lambda k: k % 2) if g.config.teams else (lambda k: k)
    nsides = 2 if g.config.teams else n
    s = g.new_state()
    rng = np.random.default_rng(99)
    seen = {"out": 0, "block": 0, "washed": 0, "tie": 0}
    for seed in range(400):
        g.reset(s, seed)
        while not g.is_over(s):
            legal_ids = np.flatnonzero(g.legal_mask(s))
            g.step(s, int(legal_ids[rng.integers(legal_ids.size)]))
        # count points, placement by placement
        scratch = np.zeros(lay_size(g.num_arms), dtype=np.int64)
        lay_init(scratch, 0, g.num_arms, int(g.params[rh.P_SPIN]))
        points = [0] * nsides
        for t, arm in g.line(s):
            lay_place(scratch, 0, t, arm)
            c = lay_count(scratch, 0)
            if c > 0 and c % 5 == 0:
                points[side(int(s[rh.PLAYED_BY + t]))] += c // 5
        hands = [int(s[rh.HANDS + k]) for k in range(n)]
        washed = g.washed_up(s)
        total = [0] * nsides
        eligible = [False] * nsides
        for k in range(n):
            total[side(k)] += sum(int(TILE_A[t] + TILE_B[t]) for t in range(28) if (hands[k] >> t) & 1)
            eligible[side(k)] |= not washed[k]
        best = min((total[d] for d in range(nsides) if eligible[d]), default=None)  # None: all washed up
        winners = [d for d in range(nsides) if eligible[d] and total[d] == best]
        res = g.last_result(s)
        if len(winners) == 1:
            w = winners[0]
            pips = sum(total) - total[w]
            award = pips if g.config.award == "per_pip" else (pips + 2) // 5
            assert side(res["winner"]) == w and res["award"] == award
            points[w] += award
        else:
            assert res["winner"] == -1 and res["award"] == 0
            seen["tie"] += 1
        assert [g.scores(s)[k] for k in range(n)] == [points[side(k)] for k in range(n)], seed
        line = g.line(s)
        if res["out"] >= 0:  # a proper domino: the last tile placed was the seat's last, not special
            seen["out"] += 1
            t_last = line[-1][0]
            assert hands[res["out"]] == 0 and not washed[res["out"]]
            assert int(s[rh.PLAYED_BY + t_last]) == res["out"] and not (SPECIAL_MASK >> t_last) & 1
        else:  # a block: no seat with turns can play or draw
            seen["block"] += 1
            ends = set(g.open_ends(s).values())
            bone = len(g.boneyard(s))
            for k in range(n):
                if washed[k]:
                    continue
                assert not any((hands[k] >> t) & 1 and (TILE_A[t] in ends or TILE_B[t] in ends) for t in range(28))
                assert n == 4 or bone == 0 or (hands[k] == 0 and bone <= rh.RESERVE[n])
        for k in range(n):
            if washed[k]:
                seen["washed"] += 1
                assert hands[k] == 0
                mine = [t for t, _ in line if int(s[rh.PLAYED_BY + t]) == k]
                if n == 4:
                    assert (SPECIAL_MASK >> mine[-1]) & 1  # washed up by a special last tile
        drawn = obs(g, s, 0)["drawn"].sum()
        assert drawn + len(g.boneyard(s)) == 28 - 7 * n
    assert seen["out"] > 0 and seen["block"] > 0


def test_same_pip_ends_that_count_differently_keep_both_placements():
    """Issue 13 item 9: the uncovered side of the set 5-5 (a crosswise double: counts 10) and a
    plain 5 at the other end both take 2-5, but the count after the play differs (12 vs 7), so
    both placements stay actions; a mirror pair (both sides of the lone 5-5) is one action."""
    g = game()
    s = start(g, [[(5, 5), (3, 3), (1, 5), (5, 6)], [(1, 6), (2, 5), (0, 0)]])
    assert play(g, s, 5, 5) == [2, -2]  # the lone 5-5 counts 10: 2 points; obliged again
    assert legal(g, s) == {(1, 5, 0), (5, 6, 0)}  # the two sides alike: the left one only
    with pytest.raises(IllegalActionError, match="legal actions"):
        g.step(s, g.encode_action(1, 5, 1))
    play(g, s, 1, 5, 0)  # 1 + 10 = 11
    play(g, s, 1, 6, 0)  # seat 1: 6 + 10 = 16
    assert play(g, s, 5, 6, 0) == [3, -3]  # 5 + 10 = 15
    assert g.open_ends(s) == {0: 5, 1: 5} and s[H_TURN] == 1
    assert legal(g, s) == {(2, 5, 0), (2, 5, 1)}
    counts = []
    for arm in (0, 1):
        x = s.copy()
        g.step(x, g.encode_action(2, 5, arm))
        counts.append(g.count(x))
    assert counts == [12, 7]


def test_a_tile_fitting_only_twin_sides_is_played_by_the_engine():
    """The obliged play after setting 6-6 is 3-6 on either side of the lone double (twins): one
    action, so the engine plays it on the left and pays its points with the set's step."""
    g = game()
    s = start(g, [[(6, 6), (5, 5), (3, 6), (0, 1)], [(1, 3), (3, 4), (0, 2)]])
    assert play(g, s, 6, 6) == [3, -3]  # 12 (6-6, right side open) + 3 = 15
    assert placed(g, s) == [((6, 6), 0), ((3, 6), 0)] and s[H_TURN] == 1
