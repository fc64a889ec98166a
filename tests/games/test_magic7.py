"""Magic-7: every rule of rules-spec section 5 and M7-1..M7-9 on hand-set deals.

Forced steps (a lone legal action, passes) are taken by the engine, so each scenario asserts the
state where the engine stops: the seat to act, its exact legal actions, and what the forced steps did.
"""
from __future__ import annotations

import numpy as np
import pytest

import domino_envs
from domino_envs import ConfigError, DealError, IllegalActionError, make_game
from domino_envs.core import H_DONE, H_HAND, H_STEPS, H_TURN
from domino_envs.games import magic7 as M


def deal(hands, pile=(), first=0, **cfg):
    game = make_game("magic7_v0", num_players=len(hands), **cfg)
    state = game.new_state()
    game.reset(state, 0)
    game.set_deal(state, {"hands": hands, "stock": list(pile), "first": first})
    return game, state


def A(game, kind, what=None, end=None):
    return game.encode_action(kind, what, end)


def legal(game, state):
    return {game.describe_action(a) for a in game.legal_actions(state)}


def obs(game, state, seat):
    return game.decode(game.observe(state, seat))


def step(game, state, *spec):
    a = A(game, *spec)
    assert a in game.legal_actions(state), (game.describe_action(a), legal(game, state))
    game.step(state, a)


# ---------------------------------------------------------------------------- set and deal
def test_tile_ids_and_table_1_penalties_m7_2():
    assert M.card_id("AC") == 0 and M.card_id("7C") == 6 and M.card_id("KC") == 12
    assert M.card_id("AD") == 13 and M.card_id("10h") == 35 and M.card_id("KS") == 51
    assert M.card_id("JK") == 52 and M.tile_name(53) == "JK"
    assert [M.tile_name(t) for t in (0, 9, 10, 11, 12)] == ["AC", "10C", "JC", "QC", "KC"]
    pen = {M.tile_name(t): int(M.PENALTY[t]) for t in range(52)}
    assert pen["AS"] == 1  # M7-2: Table-1's A = 1 beats the strategy note's "Ace of Spades 15"
    assert [pen[r + "H"] for r in M.RANKS] == list(range(1, 14))
    assert int(M.PENALTY[52]) == int(M.PENALTY[53]) == 20
    # a game that ends with AS and a joker left in a hand charges 1 + 20 (see the scored game)
    game, s = deal([["2C", "AS", "JK"], ["3C", "4C"]], first=0)
    # no 7 is out anywhere: nobody can play; pile empty: everyone kills out
    assert legal(game, s) == {"kill 2C", "kill AS", "kill a joker"}
    step(game, s, "kill", "AS")
    assert legal(game, s) == {"kill 3C", "kill 4C"}
    step(game, s, "kill", "3C")
    step(game, s, "kill", "JK")  # seat 1's last kill (4C) and seat 0's (2C) are forced
    assert s[H_DONE] == 1
    assert game.last_penalties(s) == [2 + 1 + 20, 3 + 4]


@pytest.mark.parametrize("n,size,pile", [(2, 25, 4), (3, 16, 6), (4, 12, 6), (5, 9, 9), (6, 8, 6)])
def test_deal_table(n, size, pile):
    game = make_game("magic7_v0", num_players=n)
    assert n * size + pile == 54
    s = game.new_state()
    for seed in range(20):
        game.reset(s, seed)
        o = obs(game, s, 0)
        drawn = o["drawn"].sum()
        assert o["pile"][0] == pile - drawn
        for k in range(n):
            ok = obs(game, s, k)
            placed = ok["played_by"][0].sum()  # cards relative seat 0 (= k) placed, 7s included
            assert ok["live_counts"][0] + ok["killed_counts"][0] + placed + ok["jokers_played"][0] \
                - ok["drawn"][0] == size
        assert game.invariants_ok(s)


# ---------------------------------------------------------------------------- M7-1 sevens
def test_m7_1_sevens_go_out_at_setup_and_a_pile_seven_waits_to_be_drawn():
    game, s = deal([["7H", "7S", "6H", "8S", "QC", "8D"], ["7C", "2D", "9S", "5H"]], pile=["7D", "KD"], first=0)
    # setup: the 7s in hands start their rows at once, placed by their holders; 7D stays in the pile
    assert game.rows(s) == [(7, 7), (0, 0), (7, 7), (7, 7)]
    assert game.played_by(s, "7H") == 0 and game.played_by(s, "7S") == 0 and game.played_by(s, "7C") == 1
    assert game.played_by(s, "7D") == -1 and game.pile(s) == ["7D", "KD"]
    assert game.hand(s, 0) == ["QC", "8D", "6H", "8S"]
    assert obs(game, s, 0)["live_counts"].tolist() == [4, 3]
    # 8D is not playable: the diamond row is not out
    assert s[H_TURN] == 0 and legal(game, s) == {"play 6H", "play 8S"}
    step(game, s, "play", "8S")
    # forced: seat 1 9S, seat 0 6H, seat 1 5H; seat 0 (QC, 8D) cannot play: draws 7D, which is
    # placed at once and starts its row (M7-1, M7-6); seat 1 draws KD (kept); seat 0 plays 8D
    assert game.played_by(s, "7D") == 0 and game.played_by(s, "8D") == 0
    assert game.rows(s) == [(7, 7), (7, 8), (5, 7), (7, 9)]
    assert game.hand(s, 0) == ["QC"] and game.hand(s, 1) == ["2D", "KD"]
    assert obs(game, s, 0)["drawn"].tolist() == [1, 1]
    assert s[H_TURN] == 1 and legal(game, s) == {"kill 2D", "kill KD"}


def test_m7_1_turn_order_is_seat_plus_one():
    game, s = deal([["7H", "8H", "9C"], ["6H", "5H", "2C"], ["9H", "4H", "3C"]], first=1)
    # seat 1 starts: 6H (its only playable card) is forced
    assert game.played_by(s, "6H") == 1
    # seat 2 holds 9H (not adjacent to 7) and 4H (not adjacent to 6): no playable card, pile empty:
    # it must kill - a real decision between its three tiles
    assert s[H_TURN] == 2
    assert legal(game, s) == {"kill 4H", "kill 9H", "kill 3C"}


# ---------------------------------------------------------------------------- rows
def test_rows_grow_down_to_ace_which_is_next_to_two_only():
    game, s = deal([["7C", "6C", "4C", "2C", "QH"], ["5C", "3C", "AC", "KC", "JK"]], first=0)
    # seat 0's only playable card is 6C: forced. Seat 1 may play 5C or a joker at either end
    assert game.rows(s)[0] == (6, 7) and s[H_TURN] == 1
    assert legal(game, s) == {"play 5C", "joker on the low end of clubs", "joker on the high end of clubs"}
    step(game, s, "play", "5C")
    assert game.rows(s)[0] == (4, 7)  # seat 0's 4C was forced
    step(game, s, "play", "3C")
    assert game.rows(s)[0] == (2, 7)  # seat 0's 2C was forced
    assert legal(game, s) == {"play AC", "joker on the low end of clubs", "joker on the high end of clubs"}
    step(game, s, "play", "AC")
    assert game.rows(s)[0] == (1, 7)
    # seat 0 held only QH (no hearts row): with an empty pile it had to kill it (forced)
    assert game.killed(s, 0) == ["QH"] and game.hand(s, 0) == []
    # the clubs row ends at A below: no play and no joker slot there; K is not next to A
    assert s[H_TURN] == 1
    assert legal(game, s) == {"joker on the high end of clubs", "kill KC", "kill a joker"}


def test_rows_grow_up_to_king_and_stop():
    game, s = deal([["7H", "8H", "10H", "QH", "3C"], ["9H", "JH", "KH", "2C", "JK"]], first=0)
    assert game.rows(s)[2] == (7, 8)
    step(game, s, "play", "9H")
    step(game, s, "play", "JH")
    assert game.rows(s)[2] == (7, 12)
    assert legal(game, s) == {"play KH", "joker on the low end of hearts", "joker on the high end of hearts"}
    step(game, s, "play", "KH")
    assert game.rows(s)[2] == (7, 13)
    assert game.killed(s, 0) == ["3C"]  # forced: no playable card, empty pile
    assert legal(game, s) == {"joker on the low end of hearts", "kill 2C", "kill a joker"}


# ---------------------------------------------------------------------------- M7-3 jokers are not playable cards
def test_m7_3_a_joker_is_never_a_playable_card_draw_stays_legal():
    game, s = deal([["JK", "5H"], ["6H", "2C"]], pile=["3S", "7H", "9D"], first=0)
    # no 7 is out: the joker has no slot, so seat 0 must draw (kept 3S); seat 1 draws 7H: placed
    assert game.hand(s, 0) == ["5H", "3S", "JK"] and game.played_by(s, "7H") == 1
    # now the joker has slots, yet seat 0 holds no playable card: it may draw OR play the joker
    assert s[H_TURN] == 0
    assert legal(game, s) == {"draw", "joker on the low end of hearts", "joker on the high end of hearts"}


def test_m7_3_with_an_empty_pile_a_joker_holder_without_a_card_must_kill_or_play_the_joker():
    game, s = deal([["7D", "JK", "2S"], ["9D", "3S"]], first=0)
    assert legal(game, s) == {"joker on the low end of diamonds", "joker on the high end of diamonds",
                              "kill 2S", "kill a joker"}
    step(game, s, "kill", "JK")  # M7-9: a joker may be killed
    assert game.killed(s, 0) == ["JK"]
    assert obs(game, s, 1)["killed_counts"].tolist() == [0, 1]


# ---------------------------------------------------------------------------- M7-4 / M7-5 jokers
def test_m7_4_joker_target_in_another_hand_is_placed_out_of_turn_then_successor_moves():
    game, s = deal([["7S", "JK", "2D", "3D"], ["8S", "5S", "2H"], ["6S", "QD", "KD"]],
                   pile=["4C"], first=0)
    assert s[H_TURN] == 0
    assert legal(game, s) == {"draw", "joker on the low end of spades", "joker on the high end of spades"}
    step(game, s, "joker", "S", "low")
    # 6S was in seat 2's hand: seat 2 placed it at once, out of turn; the turn goes to seat 1
    assert game.played_by(s, "6S") == 2 and game.hand(s, 2) == ["QD", "KD"]
    assert game.rows(s)[3] == (6, 7) and game.covered(s) == {}
    o = obs(game, s, 1)
    assert o["jokers"][3, 5] == 1 and o["jokers"].sum() == 1
    assert o["jokers_played"].tolist() == [0, 0, 1]  # relative: seat 1, seat 2, seat 0
    assert s[H_TURN] == 1
    assert legal(game, s) == {"play 5S", "play 8S"}
    assert obs(game, s, 0)["live_counts"].tolist() == [2, 3, 2]


def test_m7_4_joker_on_your_own_card_places_it_yourself():
    game, s = deal([["7S", "JK", "6S", "3D"], ["KH", "5S", "2H"]], pile=["4C"], first=0)
    assert legal(game, s) == {"play 6S", "joker on the low end of spades", "joker on the high end of spades"}
    step(game, s, "joker", "S", "low")
    assert game.played_by(s, "6S") == 0
    # seat 1: 5S forced; seat 0 (3D) draws 4C (forced, kept); seat 1 (KH, 2H) must kill
    assert game.played_by(s, "5S") == 1 and game.hand(s, 0) == ["4C", "3D"]
    assert s[H_TURN] == 1 and legal(game, s) == {"kill 2H", "kill KH"}


def test_m7_4_joker_on_a_killed_target_is_wasted_and_blocks_the_end_for_good():
    game, s = deal([["7S", "6S", "JK", "4S", "9H"], ["5S", "2D"]], first=1)
    # seat 1: 5S is not next to 7: no playable card, empty pile -> kill (its choice)
    assert s[H_TURN] == 1 and legal(game, s) == {"kill 5S", "kill 2D"}
    step(game, s, "kill", "5S")
    assert legal(game, s) == {"play 6S", "joker on the low end of spades", "joker on the high end of spades"}
    step(game, s, "play", "6S")
    # seat 1 killed 2D (forced) and now only passes (forced)
    assert game.killed(s, 1) == ["2D", "5S"] and s[H_TURN] == 0
    assert legal(game, s) == {"joker on the low end of spades", "joker on the high end of spades",
                              "kill 4S", "kill 9H", "kill a joker"}
    steps = int(s[H_STEPS])
    step(game, s, "joker", "S", "low")
    # the target 5S is killed: the joker is wasted and covers the low end for good
    assert game.covered(s) == {("S", "low"): "5S"} and game.rows(s)[3] == (6, 7)
    assert obs(game, s, 0)["covered"][3].tolist() == [1, 0]
    # seat 1 passed (forced, not a decision); seat 0 cannot play 4S: its end is covered
    assert s[H_TURN] == 0 and int(s[H_STEPS]) == steps + 1
    assert legal(game, s) == {"kill 4S", "kill 9H"}
    with pytest.raises(IllegalActionError, match=r"play 4S\) is illegal"):
        game.step(s, A(game, "play", "4S"))
    step(game, s, "kill", "4S")
    # seat 0's last kill is forced; nobody holds a live tile: the game ends (M7-8)
    assert s[H_DONE] == 1 and game.killed(s, 0) == ["9H", "4S"]
    assert game.last_penalties(s) == [4 + 9, 5 + 2]
    # rewards: mean - own penalty = 10 - 13, 10 - 7 (integer units sum - n*pen over scale n = 2)
    assert game.rewards(s).tolist() == [-3.0, 3.0]


def test_m7_4_joker_whose_target_is_in_the_pile_waits_until_someone_draws_it():
    game, s = deal([["7S", "JK", "QD", "2H"], ["5S", "9C"]], pile=["3D", "6S", "10C"], first=0)
    assert legal(game, s) == {"draw", "joker on the low end of spades", "joker on the high end of spades"}
    step(game, s, "joker", "S", "low")
    # 6S is in the pile: nobody places it; the low end is covered (its status is not shown)
    # seat 1 then had no playable card (5S's end is covered) and drew 3D (kept, forced);
    # seat 0 drew 6S (forced): the pending target is placed at once on the joker by the drawer;
    # seat 1's 5S became playable (forced); seat 0 drew 10C (kept)
    assert game.played_by(s, "6S") == 0 and game.played_by(s, "5S") == 1
    assert game.covered(s) == {} and game.rows(s)[3] == (5, 7)
    o = obs(game, s, 1)
    assert o["jokers"][3, 5] == 1 and o["drawn"].tolist() == [1, 2]
    assert s[H_TURN] == 1 and legal(game, s) == {"kill 3D", "kill 9C"}
    # public lacks: seat 1 drew while only 8S was open; seat 0 last drew with 4S and 8S open
    o = obs(game, s, 0)
    lack = {(r, M.tile_name(c)) for r, c in zip(*np.nonzero(o["lacks"]))}
    assert lack == {(0, "4S"), (0, "8S"), (1, "8S")}


def test_pending_target_is_covered_and_the_end_takes_no_joker_or_card():
    game, s = deal([["7S", "JK", "JK", "QD"], ["5S", "8S", "9C"]], pile=["6S", "10C"], first=0)
    step(game, s, "joker", "S", "low")
    assert game.covered(s) == {("S", "low"): "6S"}
    # seat 1: 8S is playable, 5S is not (the end is covered): 8S was its lone action
    assert game.played_by(s, "8S") == 1 and game.hand(s, 1) == ["9C", "5S"]
    # seat 0 holds a second joker: only the high end of spades takes it, not the covered low end
    assert s[H_TURN] == 0
    assert legal(game, s) == {"draw", "joker on the high end of spades"}
    r = game.render(s, 0)
    assert "[JK>6S]" in r and "jokers: 1" in r


def test_m7_5_joker_as_last_tile_goes_out_after_its_target_is_placed():
    game, s = deal([["7S", "JK"], ["6S", "2C", "3C"], ["KD", "QD"]], first=0)
    assert legal(game, s) == {"joker on the low end of spades", "joker on the high end of spades", "kill a joker"}
    step(game, s, "joker", "S", "low")
    assert s[H_DONE] == 1 and game.played_by(s, "6S") == 1
    assert int(s[M.WENT_OUT]) == 0
    assert game.last_penalties(s) == [0, 2 + 3, 13 + 12]
    # units: sum 30 - 3 * pen, over scale 3: 10, 5, -15
    assert game.rewards(s).tolist() == [10.0, 5.0, -15.0]


def test_m7_5_joker_then_own_target_empties_the_hand_seed_strategy():
    game, s = deal([["7H", "JK", "6H"], ["8H", "2C", "3C"]], first=0)
    step(game, s, "joker", "H", "low")
    assert s[H_DONE] == 1 and int(s[M.WENT_OUT]) == 0
    assert game.last_penalties(s) == [0, 8 + 2 + 3]


def test_m7_8_target_holder_goes_out_out_of_turn():
    game, s = deal([["7S", "JK", "KD"], ["6S"], ["2C", "3C"]], first=0)
    step(game, s, "joker", "S", "low")
    assert s[H_DONE] == 1 and int(s[M.WENT_OUT]) == 1
    assert game.last_penalties(s) == [13, 0, 5]


def test_m7_5_a_joker_can_be_played_while_holding_a_playable_card():
    game, s = deal([["7C", "6C", "JK", "KD"], ["8C", "2D"]], pile=["3H"], first=0)
    assert legal(game, s) == {"play 6C", "joker on the low end of clubs", "joker on the high end of clubs"}
    step(game, s, "joker", "C", "high")
    assert game.played_by(s, "8C") == 1
    # seat 1 drew 3H (forced); seat 0 played 6C (forced); seat 1 must kill
    assert game.played_by(s, "6C") == 0 and game.rows(s)[0] == (6, 8)
    assert s[H_TURN] == 1 and legal(game, s) == {"kill 2D", "kill 3H"}


# ---------------------------------------------------------------------------- M7-6 draw one
def test_m7_6_draw_one_tile_a_playable_draw_is_placed_and_the_turn_ends():
    game, s = deal([["7H", "2C", "3C"], ["9H", "4C", "5C"]], pile=["KD", "8H", "6H"], first=0)
    # seat 0: nothing playable -> draws KD (kept) and its turn ends, though 8H lay next in the pile
    # seat 1: nothing playable (9H is not next to 7) -> draws 8H: playable, placed at once, turn ends
    # seat 0: draws 6H: placed. seat 1: 9H now playable (forced)
    assert game.played_by(s, "8H") == 1 and game.played_by(s, "6H") == 0 and game.played_by(s, "9H") == 1
    assert game.hand(s, 0) == ["2C", "3C", "KD"]
    o = obs(game, s, 0)
    assert o["drawn"].tolist() == [2, 1] and o["pile"][0] == 0
    assert s[H_TURN] == 0 and legal(game, s) == {"kill 2C", "kill 3C", "kill KD"}


def test_m7_6_drawn_joker_is_kept():
    game, s = deal([["7H", "2C", "3C"], ["9H", "4C", "5C"]], pile=["JK", "KC"], first=0)
    assert game.hand(s, 0) == ["2C", "3C", "JK"] and game.hand(s, 1) == ["4C", "5C", "KC", "9H"]
    # seat 1 drew KC (forced, kept); the pile is empty: seat 0 plays its joker or kills
    assert s[H_TURN] == 0
    assert legal(game, s) == {"joker on the low end of hearts", "joker on the high end of hearts",
                              "kill 2C", "kill 3C", "kill a joker"}


# ---------------------------------------------------------------------------- M7-7 starter
def test_m7_7_first_game_starter_random_or_configured():
    game = make_game("magic7_v0", num_players=4)
    s = game.new_state()
    starters = set()
    for seed in range(40):
        game.reset(s, seed)
        starters.add(int(s[M.STARTER]))
    assert starters == {0, 1, 2, 3}
    game = make_game("magic7_v0", num_players=4, first_seat=2)
    for seed in range(5):
        game.reset(s, seed)
        assert int(s[M.STARTER]) == 2


def test_m7_7_next_game_starts_with_the_seat_that_went_out():
    game, s = deal([["7S", "JK", "KD"], ["6S"], ["2C", "3C"]], first=0, num_games=2)
    step(game, s, "joker", "S", "low")
    assert s[H_DONE] == 0 and s[H_HAND] == 1 and int(s[M.STARTER]) == 1
    assert game.penalties(s) == [13, 0, 5]


@pytest.mark.parametrize("first", [0, 1])
def test_m7_7_nobody_out_lowest_penalty_ties_go_to_the_first_from_the_starter(first):
    # no 7 out, empty pile: both seats kill out; penalties tie at 7
    game, s = deal([["2C", "5D"], ["3C", "4D"]], first=first, num_games=2)
    step(game, s, "kill", "2C" if first == 0 else "3C")
    step(game, s, "kill", "3C" if first == 0 else "2C")
    assert s[H_HAND] == 1 and game.penalties(s) == [7, 7]
    assert int(s[M.STARTER]) == first
    assert int(s[M.WENT_OUT]) == -1


def test_m7_7_nobody_out_lowest_penalty_starts():
    game, s = deal([["2C", "9D"], ["3C", "4D"]], first=0, num_games=2)
    step(game, s, "kill", "2C")
    step(game, s, "kill", "3C")
    assert game.penalties(s) == [11, 7] and int(s[M.STARTER]) == 1


# ---------------------------------------------------------------------------- M7-8 end, M7-9 kills
def test_m7_9_a_kill_blocks_a_row_for_good():
    game, s = deal([["7S", "5S", "4S", "3S", "AS", "KD"], ["2S", "6S", "9D"]], first=1)
    # seat 1: 6S forced; seat 0: 5S forced; seat 1: no playable card, empty pile -> kill
    assert s[H_TURN] == 1 and legal(game, s) == {"kill 2S", "kill 9D"}
    step(game, s, "kill", "2S")  # the seed's blocking kill
    # seat 0 plays 4S (forced), seat 1 kills 9D (forced), seat 0 plays 3S (forced), seat 1 passes
    assert game.rows(s)[3] == (3, 7)
    # AS can never be played: its neighbour 2S is dead
    assert s[H_TURN] == 0 and legal(game, s) == {"kill AS", "kill KD"}
    step(game, s, "kill", "KD")
    assert s[H_DONE] == 1
    assert game.last_penalties(s) == [1 + 13, 2 + 9]
    assert game.rewards(s).tolist() == [-1.5, 1.5]  # units (25 - 28, 25 - 22) over scale 2


def test_m7_9_no_kill_while_a_card_is_playable_or_the_pile_is_not_empty():
    game, s = deal([["7C", "6C", "2D", "3D"], ["KH", "QH"]], pile=["4H"], first=0)
    # seat 0 could only play 6C (no kill, no draw): forced
    assert game.played_by(s, "6C") == 0
    # seat 1: nothing playable, pile not empty: it drew 4H (forced), no kill was possible
    assert game.hand(s, 1) == ["4H", "QH", "KH"] and game.killed(s, 1) == []
    # seat 0: no playable card, empty pile: now it must kill
    assert legal(game, s) == {"kill 2D", "kill 3D"}


def test_m7_8_a_seat_with_kills_that_plays_its_last_live_tile_is_not_out():
    game, s = deal([["7C", "5C", "QD"], ["6C", "4C", "KH"]], first=0)
    assert legal(game, s) == {"kill 5C", "kill QD"}
    step(game, s, "kill", "QD")
    # seat 1: 6C forced; seat 0 plays 5C, its last live tile (forced) - but it holds a killed tile,
    # so it is not out and play goes on: seat 1 plays 4C, seat 0 passes, seat 1 kills KH
    assert game.played_by(s, "5C") == 0 and game.played_by(s, "4C") == 1
    assert s[H_DONE] == 1 and int(s[M.WENT_OUT]) == -1
    assert game.last_penalties(s) == [12, 13]


def test_m7_8_going_out_ends_the_game_at_once():
    game, s = deal([["7C", "6C", "8C"], ["5C", "KH", "QH", "JH"], ["9C", "2S"]], first=0)
    assert legal(game, s) == {"play 6C", "play 8C"}
    step(game, s, "play", "8C")
    # seat 1: 5C needs 6C out; no playable card, empty pile -> kill
    assert s[H_TURN] == 1 and legal(game, s) == {"kill 5C", "kill JH", "kill QH", "kill KH"}
    step(game, s, "kill", "KH")
    # seat 2: 9C forced; seat 0: 6C forced -> seat 0 holds nothing: out, the game ends at once
    assert s[H_DONE] == 1 and int(s[M.WENT_OUT]) == 0
    assert game.last_penalties(s) == [0, 5 + 11 + 12 + 13, 2]
    assert game.hand(s, 1) == ["5C", "JH", "QH"] and game.killed(s, 1) == ["KH"]


def test_pass_is_forced_and_only_with_no_live_tiles():
    game, s = deal([["7C", "2D", "3D", "4D"], ["5H", "6H"]], first=1)
    assert s[H_TURN] == 1 and legal(game, s) == {"kill 5H", "kill 6H"}
    step(game, s, "kill", "5H")
    assert s[H_TURN] == 0 and legal(game, s) == {"kill 2D", "kill 3D", "kill 4D"}
    step(game, s, "kill", "2D")
    # seat 1 killed 6H (forced): from now on it holds no live tile and only passes
    assert game.killed(s, 1) == ["5H", "6H"]
    assert s[H_TURN] == 0 and legal(game, s) == {"kill 3D", "kill 4D"}
    with pytest.raises(IllegalActionError, match=r"pass\) is illegal"):
        game.step(s, A(game, "pass"))
    steps = int(s[H_STEPS])
    step(game, s, "kill", "3D")  # seat 1's pass and seat 0's last kill are forced: not decisions
    assert s[H_DONE] == 1 and int(s[H_STEPS]) == steps + 1


# ---------------------------------------------------------------------------- rewards and match
def test_match_over_num_games_rewards_add_up_to_mean_minus_total():
    env = domino_envs.make("magic7_v0", num_players=3, num_games=3)
    rng = np.random.default_rng(0)
    env.reset(seed=5)
    game = env.game
    total = np.zeros(3)
    ends = 0
    while not all(env.terminations.values()):
        before = int(env._state[H_HAND])
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        r = np.array([env.rewards[a] for a in env.possible_agents])
        total += r
        if int(env._state[H_HAND]) > before:
            ends += 1
            assert np.any(r != 0) or len(set(game.last_penalties(env._state))) == 1
        else:
            assert not r.any()  # rewards come only at the end of a game
    assert ends == 3 and int(env._state[H_HAND]) == 3
    pens = np.array(game.penalties(env._state), dtype=float)
    assert np.allclose(total, pens.mean() - pens)
    assert abs(total.sum()) < 1e-9
    assert game.reward_scale == 3.0


# ---------------------------------------------------------------------------- observation and hidden info
def test_observation_pieces_and_values():
    game, s = deal([["7S", "JK", "QD", "2H"], ["5S", "9C"]], pile=["3D", "6S", "10C"], first=0)
    step(game, s, "joker", "S", "low")
    # stopped at seat 1's kill decision (see the pending-target test)
    o = obs(game, s, 1)
    assert [p for p, _ in game.obs_pieces()] == list(o)
    assert o["hand"][0, 8] == 1 and o["hand"][1, 2] == 1 and o["hand"].sum() == 2  # 9C, 3D
    assert o["hand_jokers"][0] == 0 and o["killed"].sum() == 0
    assert o["rows"][3, 4:7].tolist() == [1, 1, 1] and o["rows"].sum() == 3
    assert o["row_ends"].tolist() == [[0, 0], [0, 0], [0, 0], [5, 7]]
    assert o["covered"].sum() == 0
    assert o["played_by"][0, M.card_id("5S")] == 1 and o["played_by"][1, M.card_id("6S")] == 1
    assert o["live_counts"].tolist() == [2, 3] and o["killed_counts"].tolist() == [0, 0]
    assert o["pile"][0] == 0 and o["to_move"].tolist() == [1, 0]
    assert o["penalties"].tolist() == [0, 0] and o["games_played"][0] == 0


def test_killed_tiles_are_hidden_only_counts_are_public():
    def run(kill):
        game, s = deal([["7S", "8S", "QD"], ["2C", "3C", "4H"]], first=1)
        step(game, s, "kill", kill)
        return game, s
    g1, s1 = run("2C")
    g2, s2 = run("3C")
    assert g1.killed(s1, 1) != g2.killed(s2, 1)
    assert np.array_equal(g1.observe(s1, 0), g2.observe(s2, 0))
    assert not np.array_equal(g1.observe(s1, 1), g2.observe(s2, 1))
    assert obs(g1, s1, 0)["killed_counts"].tolist() == [0, 1]


def test_sample_hidden_respects_pending_targets_kills_lacks_and_counts():
    game, s = deal([["7S", "JK", "JK", "QD", "2H"], ["5S", "9C", "4D"], ["KH", "QH", "2D"]],
                   pile=["10C", "JC", "6S", "3D"], first=0)
    step(game, s, "joker", "S", "low")  # 6S in the pile: pending
    assert game.covered(s) == {("S", "low"): "6S"}
    rng = np.random.default_rng(1)
    seen_hands = set()
    for i in range(200):
        seat = i % 3
        smp = game.sample_hidden(s, seat, rng)
        assert game.invariants_ok(smp)
        assert np.array_equal(game.observe(smp, seat), game.observe(s, seat))
        # the pending target is never in a live hand: with a non-empty pile it is in the pile
        assert "6S" in game.pile(smp)
        for k in range(3):
            assert len(game.hand(smp, k)) == len(game.hand(s, k))
            lacks = int(smp[M.LACK + k])
            assert int(smp[M.LIVE + k]) & lacks == 0
        if seat == 0:
            seen_hands.add(tuple(game.hand(smp, 1)))
    assert len(seen_hands) > 5


def test_sample_hidden_puts_a_wasted_target_among_the_kills_and_keeps_kill_counts():
    game, s = deal([["7S", "6S", "JK", "4S", "9H", "KC"], ["5S", "2D", "3D"], ["QH", "JH", "10H"]], first=1)
    step(game, s, "kill", "5S")       # seat 1 kills the future target
    step(game, s, "kill", "JH")       # seat 2
    step(game, s, "play", "6S")
    step(game, s, "kill", "2D")
    step(game, s, "kill", "10H")
    step(game, s, "joker", "S", "low")  # wasted on 5S
    assert game.covered(s) == {("S", "low"): "5S"}
    rng = np.random.default_rng(2)
    owners = set()
    for _i in range(200):
        smp = game.sample_hidden(s, 0, rng)
        assert game.invariants_ok(smp)
        assert np.array_equal(game.observe(smp, 0), game.observe(s, 0))
        for k in (1, 2):
            assert len(game.killed(smp, k)) == len(game.killed(s, k))
            assert "5S" not in game.hand(smp, k)
        # the target is killed, and it was killed before the joker: by seat 1 or seat 2
        owner = [k for k in (1, 2) if "5S" in game.killed(smp, k)]
        assert len(owner) == 1
        owners.add(owner[0])
    assert owners == {1, 2}


def test_sample_hidden_opponent_to_act_keeps_a_real_choice():
    game = make_game("magic7_v0", num_players=3)
    rng = np.random.default_rng(5)
    s = game.new_state()
    checked = 0
    for seed in range(60):
        game.reset(s, seed)
        for _ in range(int(rng.integers(0, 20))):
            if game.is_over(s):
                break
            game.step(s, int(rng.choice(game.legal_actions(s))))
        if game.is_over(s):
            continue
        mover = int(s[H_TURN])
        seat = (mover + 1) % 3
        for j in range(5):
            smp = game.sample_hidden(s, seat, np.random.default_rng(j))
            assert len(game.legal_actions(smp)) >= 2
            checked += 1
    assert checked > 100


# ---------------------------------------------------------------------------- actions, render, bad input
def test_action_encoding_table():
    game = make_game("magic7_v0")
    assert game.num_actions == 115
    assert A(game, "play", "AC") == 0 and A(game, "play", "KS") == 51
    assert A(game, "joker", "C", "low") == 52 and A(game, "joker", "S", "high") == 59
    assert A(game, "joker", 2, 1) == 57
    assert A(game, "draw") == 60 and A(game, "kill", "AC") == 61 and A(game, "kill", "KS") == 112
    assert A(game, "kill", "JK") == 113 and A(game, "pass") == 114
    assert game.describe_action(57) == "joker on the high end of hearts"
    assert game.describe_action(113) == "kill a joker" and game.describe_action(115).startswith("out of range")
    for bad in [("play", "JK"), ("play", "1X"), ("joker", "Z", "low"), ("joker", "C", "middle"), ("shout",)]:
        with pytest.raises(ValueError):
            A(game, *bad)


def test_render_shows_rows_jokers_and_hand_by_suit():
    env = domino_envs.make("magic7_v0", num_players=2, render_mode="ansi")
    env.reset(seed=0, options={"deal": {"hands": [["7S", "JK", "JK", "QD", "2H", "3H"], ["5S", "8S", "9C"]],
                                        "stock": ["6S", "10C"], "first": 0}})
    env.step(env.encode_action("joker", "S", "low"))
    text = env.render()
    assert "spades: [JK>6S] 7" in text and "hearts: (7 not out)" in text
    assert "seat 0 holds: C: - | D: Q | H: 2 3 | S: - | jokers: 1" in text


@pytest.mark.parametrize("key,value,pattern", [
    ("num_players", 1, r"num_players=1 must be an integer in 2\.\.6"),
    ("num_players", 7, r"num_players=7 must be an integer in 2\.\.6"),
    ("num_games", 0, r"num_games=0 must be an integer in 1\.\.1000"),
    ("num_games", 2.5, r"num_games=2\.5 must be an integer"),
    ("first_seat", 4, r"first_seat=4 must be an integer in 0\.\.3"),
])
def test_bad_config_values(key, value, pattern):
    with pytest.raises(ConfigError, match=pattern):
        domino_envs.make("magic7_v0", **{key: value})


@pytest.mark.parametrize("bad,pattern", [
    ({"hands": [["2C"]]}, r"'hands' must be a list of 2 hands \(one per seat\)"),
    ({"hands": [["2C"], ["2C"]]}, r"hand 1: '2C' is dealt twice"),
    ({"hands": [["2C"], ["1X"]]}, r"hand 1: '1X' is not a card name"),
    ({"hands": [["2C"], [99]]}, r"hand 1: tile id 99 is outside 0\.\.53"),
    ({"hands": [["2C", "JK"], ["JK", "JK"]]}, r"hand 1: 'JK' is dealt twice"),
    ({"hands": [["2C"], ["7H", "7S"]]}, r"hand 1 needs at least one tile besides 7s"),
    ({"hands": [["2C"], []]}, r"hand 1 needs at least one tile besides 7s"),
    ({"hands": [["2C"], ["3C"]], "first": 2}, r"first=2 must be a seat 0\.\.1"),
    ({"hands": [["2C"], ["3C"]], "stock": "4C"}, r"'stock' must be a list"),
    ({"hands": [["2C"], ["3C"]], "stock": ["3C"]}, r"stock: '3C' is dealt twice"),
    ({"hands": [["2C"], ["3C"]], "pile": ["4C"]}, r"deal key 'pile' is now 'stock'"),
    ({"hands": [["2C"], ["3C"]], "first": True}, r"first=True must be a seat 0\.\.1"),
    ({"hands": [["2C"], ["3C"]], "seat": 0}, r"a deal is a dict with keys \['hands', 'stock', 'first'\]"),
    ({"hands": 5}, r"'hands' must be a list of 2 hands"),
])
def test_malformed_deals(bad, pattern):
    env = domino_envs.make("magic7_v0", num_players=2)
    with pytest.raises(DealError, match=pattern):
        env.reset(seed=0, options={"deal": bad})


def test_illegal_action_names_the_legal_set():
    game, s = deal([["7S", "JK", "2D", "3D"], ["8S", "5S", "2H"]], pile=["4C"], first=0)
    kill = A(game, "kill", "2D")
    with pytest.raises(IllegalActionError, match=r"action 75 \(kill 2D\) is illegal for seat 0 now; "
                       r"legal actions: \[58 \(joker on the low end of spades\), 59 .*60 \(draw\)\]") as err:
        game.step(s, kill)
    assert err.value.legal == [58, 59, 60]
