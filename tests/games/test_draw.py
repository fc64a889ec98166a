"""Draw Game and Block Game: every rule of rules-spec section 1 and D-1..D-6 on hand-set deals."""
from __future__ import annotations

import numpy as np
import pytest

import domino_envs
from domino_envs import make_game
from domino_envs.core import H_DONE, H_HAND, H_RNG, H_TURN
from domino_envs.games import draw as D


def deal(game, hands, boneyard=(), first=0):
    state = game.new_state()
    game.reset(state, 0)
    game.set_deal(state, {"hands": hands, "stock": list(boneyard), "first": first})
    return state


def act(game, a, b, end):
    return game.encode_action(a, b, end)


def legal_moves(game, state):
    """Legal actions as (tile, end) pairs."""
    return {(tuple(int(x) for x in (D.TILE_A[a // 2], D.TILE_B[a // 2])), a % 2) for a in game.legal_actions(state)}


def obs_of(game, state, seat):
    return game.decode(game.observe(state, seat))


@pytest.mark.parametrize("max_pip,n,size", [(6, 2, 7), (6, 3, 5), (6, 4, 5), (9, 2, 9), (9, 3, 7), (9, 4, 7)])
def test_d1_deal_sizes(max_pip, n, size):
    game = make_game("draw_v0", max_pip=max_pip, num_players=n)
    total = (max_pip + 1) * (max_pip + 2) // 2
    state = game.new_state()
    for seed in range(5):
        game.reset(state, seed)
        o = obs_of(game, state, 0)
        held = [len(game.hand(state, k)) for k in range(n)]
        played = len(game.line(state))
        drawn = int(state[D.DRAWN:D.DRAWN + n].sum())
        assert sum(held) == n * size + drawn - played
        assert o["boneyard"][0] == total - n * size - drawn
        if played == 0:  # nobody acted yet: the deal itself
            assert held == [size] * n


def test_opener_plays_any_tile_and_double_opens_two_sides_only_d6():
    game = make_game("draw_v0")
    assert game.num_actions == 56  # tile x 2 ends: no spinner arms exist
    s = deal(game, [[(5, 5), (1, 2), (3, 4)], [(1, 5), (2, 5), (6, 6)]], boneyard=[(2, 2), (4, 4)])
    assert legal_moves(game, s) == {((5, 5), 0), ((1, 2), 0), ((3, 4), 0)}
    game.step(s, act(game, 5, 5, 0))
    assert game.ends(s) == (5, 5)
    # the double leads in line: a 5 goes on an end, nowhere else (both ends show 5: the left
    # one is offered, the right would mirror it)
    assert s[H_TURN] == 1
    assert legal_moves(game, s) == {((1, 5), 0), ((2, 5), 0)}


def test_must_play_if_able_and_only_matching_tiles():
    game = make_game("draw_v0")
    s = deal(game, [[(5, 5), (1, 2), (1, 3)], [(1, 5), (2, 5), (0, 0)]], boneyard=[(6, 6)])
    game.step(s, act(game, 5, 5, 0))
    # boneyard not empty, but the seat can play: no drawing, 0-0 not playable
    assert legal_moves(game, s) == {((1, 5), 0), ((2, 5), 0)}
    game.step(s, act(game, 1, 5, 0))
    assert game.ends(s) == (1, 5) and s[H_TURN] == 0
    assert obs_of(game, s, 0)["boneyard"][0] == 1  # nobody drew


def test_draw_until_playable_then_forced_single_placement():
    game = make_game("draw_v0")
    s = deal(game, [[(3, 4), (3, 5), (1, 6), (2, 5)], [(0, 0), (1, 1)]],
             boneyard=[(2, 2), (0, 1), (4, 6), (5, 5)])
    game.step(s, act(game, 3, 4, 0))
    # seat 1 had nothing for 3 or 4: drew 2-2, 0-1 (kept), 4-6 (playable on the 4 only -> played)
    assert game.line(s)[-1] == (D.tile_id(4, 6), 1)
    assert game.ends(s) == (3, 6)
    assert sorted(game.hand(s, 1)) == [(0, 0), (0, 1), (1, 1), (2, 2)]
    assert game.boneyard(s) == [(5, 5)]
    o = obs_of(game, s, 0)
    assert o["drawn"].tolist() == [0, 3]
    assert np.flatnonzero(o["voids"][1]).tolist() == [3, 4]  # relative seat 1 showed it lacks 3 and 4
    assert s[H_TURN] == 0
    assert legal_moves(game, s) == {((3, 5), 0), ((1, 6), 1)}


def test_drawn_tile_fitting_both_ends_is_a_decision():
    game = make_game("draw_v0")
    s = deal(game, [[(3, 4), (0, 6), (1, 6)], [(4, 5), (0, 0), (1, 2)]], boneyard=[(1, 1), (3, 5), (6, 6)])
    game.step(s, act(game, 3, 4, 0))
    # seat 1's 4-5 was its only play (forced, on the 4); seat 0 lacks 3 and 5 and draws
    assert game.ends(s) == (3, 5) and s[H_TURN] == 0
    assert legal_moves(game, s) == {((3, 5), 0), ((3, 5), 1)}  # must play the drawn tile
    for seat in (0, 1):
        o = obs_of(game, s, seat)
        assert o["just_drew"][0] == 1
    assert obs_of(game, s, 0)["drawn"].tolist() == [2, 0]
    game.step(s, act(game, 3, 5, 1))
    assert obs_of(game, s, 0)["just_drew"][0] == 0
    assert game.line(s)[-1] == (D.tile_id(3, 5), 1) and game.ends(s)[1] == 3


def test_d2_no_reserve_last_tile_drawn_then_pass():
    game = make_game("draw_v0")
    s = deal(game, [[(3, 3), (3, 5), (3, 6)], [(0, 0), (1, 2)]], boneyard=[(1, 1)])
    game.step(s, act(game, 3, 3, 0))
    # seat 1 draws the very last tile (no reserve), still cannot play, passes
    assert game.boneyard(s) == []
    assert sorted(game.hand(s, 1)) == [(0, 0), (1, 1), (1, 2)]
    assert s[H_TURN] == 0
    assert np.flatnonzero(obs_of(game, s, 0)["voids"][1]).tolist() == [3]
    assert legal_moves(game, s) == {((3, 5), 0), ((3, 6), 0)}  # both ends show 3: the left one


def test_pass_with_empty_boneyard_keeps_game_going_then_block_d3():
    game = make_game("draw_v0")
    # boneyard empty from the start
    s = deal(game, [[(6, 6), (0, 1)], [(2, 3), (4, 5)]])
    game.step(s, act(game, 6, 6, 0))
    # seat 1 cannot play and cannot draw -> passes; seat 0 cannot play either -> blocked
    assert s[H_DONE] == 1
    assert game.rewards(s).tolist() == [14.0, -14.0]  # 2+3+4+5 = 14 to the lowest (0-1 = 1 pip)
    assert game.scores(s) == [14, 0]


def test_d3_block_winner_takes_all_opponents_pips_three_players():
    game = make_game("block_v0", num_players=3)
    s = deal(game, [[(6, 6), (0, 1)], [(2, 3), (4, 5)], [(0, 2), (1, 3), (0, 0)]])
    game.step(s, act(game, 6, 6, 0))
    # nobody holds a 6: blocked; pips 1 / 14 / 6 -> seat 0 takes 14 + 6
    assert s[H_DONE] == 1
    assert game.rewards(s).tolist() == [20.0, -14.0, -6.0]


def test_d4_tied_block_scores_nothing():
    game = make_game("block_v0")
    s = deal(game, [[(6, 6), (1, 2)], [(0, 3)]])
    game.step(s, act(game, 6, 6, 0))
    assert s[H_DONE] == 1
    assert game.rewards(s).tolist() == [0.0, 0.0]
    assert game.scores(s) == [0, 0]
    assert int(s[D.LAST_WINNER]) == -1


def test_tie_for_lowest_with_a_higher_third_still_scores_nothing():
    game = make_game("block_v0", num_players=3)
    s = deal(game, [[(6, 6), (1, 2)], [(0, 3)], [(4, 5)]])
    game.step(s, act(game, 6, 6, 0))
    assert s[H_DONE] == 1 and game.rewards(s).tolist() == [0.0, 0.0, 0.0]


def test_going_out_scores_sum_of_opponents_pips():
    game = make_game("block_v0", num_players=3)
    s = deal(game, [[(1, 2), (2, 3)], [(5, 5), (6, 6)], [(4, 4), (0, 0)]])
    game.step(s, act(game, 1, 2, 0))
    # seats 1 and 2 pass, seat 0's 2-3 is its only move and is played: out
    assert s[H_DONE] == 1
    assert game.rewards(s).tolist() == [30.0, -22.0, -8.0]
    o = obs_of(game, s, 0)
    assert np.flatnonzero(o["voids"][1]).tolist() == [1, 2]
    assert np.flatnonzero(o["voids"][2]).tolist() == [1, 2]


def test_d5_match_next_hand_led_by_last_placer_and_scores_carry():
    game = make_game("draw_v0", match=True, target=100)
    s = deal(game, [[(1, 2), (5, 5)], [(2, 3)]])
    game.step(s, act(game, 1, 2, 0))
    # seat 1 plays its only tile and goes out: +10 (the 5-5)
    assert game.rewards(s).tolist() == [-10.0, 10.0]
    assert game.scores(s) == [0, 10]
    assert s[H_DONE] == 0
    assert int(s[D.FIRST_SEAT]) == 1 and s[H_TURN] == 1  # D-5: the last placer leads hand 2
    o = obs_of(game, s, 0)
    assert o["hand_sizes"].tolist() == [7, 7] and o["boneyard"][0] == 14
    assert o["scores"].tolist() == [0, 10]


def test_match_ends_when_target_reached():
    game = make_game("draw_v0", match=True, target=10)
    s = deal(game, [[(1, 2), (5, 5)], [(2, 3)]])
    game.step(s, act(game, 1, 2, 0))
    assert s[H_DONE] == 1 and game.scores(s) == [0, 10]


def test_single_hand_by_default_and_first_seat_random_in_hand_one():
    game = make_game("draw_v0")
    state = game.new_state()
    firsts = set()
    for seed in range(40):
        game.reset(state, seed)
        firsts.add(int(state[D.FIRST_SEAT]))
    assert firsts == {0, 1}
    fixed = make_game("draw_v0", first_seat=1)
    for seed in range(10):
        fixed.reset(state, seed)
        assert int(state[D.FIRST_SEAT]) == 1


def test_block_game_no_drawing_undealt_tiles_out_of_play():
    game = make_game("block_v0")
    state = game.new_state()
    game.reset(state, 3)
    assert int(state[D.FIRST_SEAT]) == 0  # block_v0 default first seat
    o = obs_of(game, state, 0)
    assert o["boneyard"][0] == 0
    s = deal(game, [[(3, 3), (3, 5), (3, 6)], [(0, 0), (1, 2)]])
    game.step(s, act(game, 3, 3, 0))
    # seat 1 passes without drawing even though 21 tiles are undealt
    assert sorted(game.hand(s, 1)) == [(0, 0), (1, 2)]
    assert s[H_TURN] == 0
    assert obs_of(game, s, 0)["drawn"].tolist() == [0, 0]


def test_block_game_four_players_full_deal():
    game = make_game("block_v0", num_players=4, hand_size=7)
    state = game.new_state()
    game.reset(state, 1)
    assert [len(game.hand(state, k)) for k in range(4)] == [7, 7, 7, 7]


def test_env_reset_with_deal_and_rewards_through_pettingzoo():
    env = domino_envs.make("block_v0")
    env.reset(seed=0, options={"deal": {"hands": [[(6, 6), (0, 1)], [(2, 3), (4, 5)]], "first": 0}})
    assert env.agent_selection == "player_0"
    env.step(env.encode_action(6, 6, 0))
    assert all(env.terminations.values())
    assert env.rewards == {"player_0": 14.0, "player_1": -14.0}
    _, r, term, _, _ = env.last()
    assert term and r == 14.0


def test_encode_and_describe_actions():
    game = make_game("draw_v0", max_pip=9)
    a = game.encode_action(9, 4, 1)
    assert a == D.tile_id(4, 9) * 2 + 1
    assert game.describe_action(a) == "play 4-9 on the right end"  # only the left end takes a lead
    assert game.describe_action(a - 1) == "play 4-9 on the left end (or lead it)"
    with pytest.raises(ValueError, match="end must be 0"):
        game.encode_action(1, 2, 2)
    with pytest.raises(ValueError, match="not in a double-6 set"):
        make_game("draw_v0").encode_action(7, 7, 0)


def test_a_deal_starts_a_new_match():
    """Issue 13 item 4 (engine side): a deal after a reset whose forced moves played a whole match
    starts at hand 1 with no scores and no rewards, not where that match ended."""
    game = make_game("draw_v0", hand_size=1, match=True, target=1000)
    state = game.new_state()
    game.reset(state, 0)
    assert state[H_HAND] > 1 and max(game.scores(state)) > 0  # forced moves played a whole match
    game.set_deal(state, {"hands": [[(6, 6), (0, 1)], [(2, 3), (4, 5)]], "first": 0})
    assert state[H_HAND] == 0 and game.scores(state) == [0, 0]
    assert not game.is_over(state) and game.rewards(state).tolist() == [0, 0]
    fresh = game.new_state()
    game.reset(fresh, 5)
    game.set_deal(fresh, {"hands": [[(6, 6), (0, 1)], [(2, 3), (4, 5)]], "first": 0})
    assert np.flatnonzero(fresh != state).tolist() in ([], [H_RNG])


def test_mirror_placement_on_ends_showing_one_pip_is_not_offered():
    """Issue 13 item 9: with both ends showing 5, a 5 goes on the left end only: the right-end
    placement gives the same game mirrored, so the mask leaves it out and the step refuses it."""
    from domino_envs import IllegalActionError
    game = make_game("block_v0")
    s = deal(game, [[(5, 5), (1, 2), (1, 3)], [(1, 5), (2, 5), (6, 6)]])
    game.step(s, act(game, 5, 5, 0))
    assert game.ends(s) == (5, 5) and s[H_TURN] == 1
    assert legal_moves(game, s) == {((1, 5), 0), ((2, 5), 0)}
    mask = game.legal_mask(s)
    assert mask[act(game, 1, 5, 1)] == 0 and mask[act(game, 2, 5, 1)] == 0
    with pytest.raises(IllegalActionError, match="legal actions"):
        game.step(s, act(game, 1, 5, 1))


def test_a_tile_fitting_only_ends_showing_one_pip_is_played_by_the_engine():
    """The lone tile fitting both ends (5 | 5) is one action, so the engine plays it (on the left),
    as it plays every forced move; then seat 0 decides between 1-2 and 1-3 on the 1."""
    game = make_game("block_v0")
    s = deal(game, [[(5, 5), (1, 2), (1, 3)], [(1, 5), (6, 6)]])
    game.step(s, act(game, 5, 5, 0))
    assert game.line(s) == [(D.tile_id(5, 5), 0), (D.tile_id(1, 5), 0)]
    assert game.ends(s) == (1, 5) and s[H_TURN] == 0
    assert legal_moves(game, s) == {((1, 2), 0), ((1, 3), 0)}
    # Draw: a drawn tile that fits only through two ends showing 3 is placed by the engine too
    game = make_game("draw_v0")
    s = deal(game, [[(3, 3), (0, 6), (1, 6)], [(0, 0), (1, 2)]], boneyard=[(1, 1), (3, 5), (6, 6)])
    game.step(s, act(game, 3, 3, 0))
    assert game.line(s)[:2] == [(D.tile_id(3, 3), 0), (D.tile_id(3, 5), 0)]
    assert obs_of(game, s, 0)["drawn"].tolist()[1] >= 2
