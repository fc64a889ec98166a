"""Seven-Toed Pete: every rule of rules-spec section 2 and P-1..P-7 on hand-set deals.

Scripts are lists of (seat, tile, arm). `follow` checks each placement: if the engine already made it
(the seat's only legal action is a forced step) it checks who placed it and where; otherwise the seat
must be the one to act and the placement legal, and it is stepped. Counts, extra turns, next seats,
legal sets, chips and rewards are asserted by hand-worked values."""
from __future__ import annotations

import numpy as np
import pytest

import domino_envs
from domino_envs import ConfigError, DealError, IllegalActionError, make_game
from domino_envs.core import H_HAND, H_RNG, H_TURN
from domino_envs.games import pete as P
from domino_envs.tiles import TILE_A, TILE_B, tile_id

NAME = "seven_toed_pete_v0"


def game_of(**cfg):
    return make_game(NAME, **cfg)


def deal(game, hands, leader=0, chips=None):
    state = game.new_state()
    game.reset(state, 0)
    d = {"hands": hands, "first": leader}
    if chips is not None:
        d["chips"] = chips
    game.set_deal(state, d)
    return state


def legal_moves(game, state):
    """Legal actions as ((a, b), arm)."""
    return {((int(TILE_A[a // 4]), int(TILE_B[a // 4])), a % 4) for a in game.legal_actions(state)}


def obs_of(game, state, seat):
    return game.decode(game.observe(state, seat))


def follow(game, state, script):
    for seat, (a, b), arm in script:
        t = tile_id(a, b)
        placed = dict(game.line(state))
        if t in placed:  # the engine took it as a forced step
            assert placed[t] == arm and int(state[P.PLAYED_BY + t]) == seat, (seat, (a, b), arm)
            continue
        assert int(state[H_TURN]) == seat, f"expected seat {seat} to play {a}-{b}, seat {state[H_TURN]} is to act"
        game.step(state, game.encode_action(a, b, arm))


def pips(hand):
    return sum(a + b for a, b in hand)


# ---------------------------------------------------------------- deals used by several tests
# P-5 lead duty: seats 0 and 1 hold no double and no scoring tile
LEAD_DEAL = [
    [(0, 1), (0, 2), (0, 3), (0, 4), (0, 6), (1, 2), (1, 3)],
    [(1, 5), (1, 6), (2, 4), (2, 5), (2, 6), (3, 4), (3, 5)],
    [(3, 6), (4, 5), (5, 6), (0, 5), (2, 3), (0, 0), (1, 1)],
    [(1, 4), (4, 6), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6)],
]

# a lead spinner 4-4 (seat 0's only lead tile: forced), both sides covered, a branch scores
SPIN_DEAL = [
    [(4, 4), (0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (1, 5)],
    [(4, 6), (2, 4), (2, 5), (2, 6), (3, 5), (5, 6), (0, 0)],
    [(3, 4), (1, 6), (0, 6), (1, 1), (2, 2), (2, 3), (3, 6)],
    [(0, 4), (0, 5), (1, 4), (3, 3), (4, 5), (5, 5), (6, 6)],
]

# a hand that blocks with every seat holding tiles (every 6 ends up placed, both ends show 6)
BLOCK_DEAL = [
    [(2, 3), (3, 6), (6, 6), (0, 6), (5, 5), (4, 4), (3, 5)],  # 26 pips left at the end
    [(4, 6), (2, 6), (0, 0), (0, 2), (1, 5), (3, 3), (0, 4)],  # 18
    [(4, 5), (1, 6), (1, 1), (1, 2), (1, 3), (2, 2), (0, 5)],  # 18
    [(5, 6), (0, 1), (0, 3), (1, 4), (2, 4), (2, 5), (3, 4)],  # 28
]
BLOCK_SCRIPT = [
    (0, (2, 3), 0),  # lead, count 5: scoring, seat 0 again (P-1)
    (0, (3, 6), 1),  # 2 + 6 = 8
    (1, (4, 6), 1),  # 2 + 4 = 6
    (2, (4, 5), 1),  # 2 + 5 = 7
    (3, (5, 6), 1),  # 2 + 6 = 8
    (0, (6, 6), 1),  # first double: the spinner, at the right end: 2 + 12 = 14
    (1, (2, 6), 0),  # 6 + 12 = 18
    (2, (1, 6), 0),  # 1 + 12 = 13
    (3, (0, 1), 0),  # 0 + 12 = 12
    (0, (0, 6), 0),  # 6 + 12 = 18; all seven 6s are out: nobody can play
]
BLOCK_COUNTS = [5, 8, 6, 7, 8, 14, 18, 13, 12, 18]


def test_config_defaults_and_action_space():
    game = game_of()
    c = game.config
    assert (c.num_players, c.double_extra_turn, c.match, c.chips_to_win, c.first_leader) == (4, False, False, 5, None)
    assert game.num_actions == 28 * 4
    assert game.reward_scale == 4
    assert game.encode_action(5, 5, "up") == tile_id(5, 5) * 4 + 2
    assert game.encode_action(6, 4, 3) == tile_id(4, 6) * 4 + 3
    assert "down branch" in game.describe_action(game.encode_action(1, 2, 3))


def test_p1_deal_every_tile_no_boneyard_and_random_designated_leader():
    """P-1 setup / P-5: 4 x 7 tiles, all 28 dealt; the designated leader of hand 1 comes from the seed."""
    game = game_of()
    s = game.new_state()
    designated = set()
    for seed in range(60):
        game.reset(s, seed)
        held = [len(game.hand(s, k)) for k in range(4)]
        assert sum(held) + len(game.line(s)) == 28
        designated.add(game.designated_leader(s))
        again = game.new_state()
        game.reset(again, seed)
        assert np.array_equal(again, s)
    assert designated == {0, 1, 2, 3}
    fixed = game_of(first_leader=2)
    for seed in range(10):
        fixed.reset(s, seed)
        assert fixed.designated_leader(s) == 2


def test_p5_lead_duty_passes_to_a_seat_with_a_double_or_scoring_tile():
    game = game_of()
    s = deal(game, LEAD_DEAL, leader=0)
    assert [game.no_lead(s, k) for k in range(4)] == [True, True, False, False]
    assert s[H_TURN] == 2 and game.line(s) == []
    # only doubles and scoring tiles may lead, on arm 0
    assert legal_moves(game, s) == {((0, 5), 0), ((2, 3), 0), ((0, 0), 0), ((1, 1), 0)}
    o = obs_of(game, s, 3)
    assert list(o["no_lead"]) == [0, 1, 1, 0]  # seat 3's view: relative seats 1, 2 are seats 0, 1
    assert list(o["leader"]) == [0, 0, 0, 1]  # seat 2 holds the duty
    with pytest.raises(IllegalActionError, match="legal actions"):
        game.step(s, game.encode_action(3, 6, 0))  # not a double, not a scoring tile
    with pytest.raises(IllegalActionError):
        game.step(s, game.encode_action(0, 5, 1))  # the lead goes on arm 0


def test_p5_lead_with_a_single_eligible_tile_is_forced():
    game = game_of()
    s = deal(game, SPIN_DEAL, leader=0)
    assert game.line(s) == [(tile_id(4, 4), 0)]
    assert game.leader(s) == 0 and not game.no_lead(s, 0)
    assert s[H_TURN] == 1


def test_p1_scoring_lead_gives_another_turn_and_p3_repeats_then_mid_line_spinner():
    game = game_of()
    s = deal(game, LEAD_DEAL, leader=0)
    game.step(s, game.encode_action(0, 5, 0))
    assert game.count(s) == 5  # a lone tile counts all its pips
    assert s[H_TURN] == 2 and game.extra_turn(s)
    assert obs_of(game, s, 2)["extra_turn"][0] == 1
    assert legal_moves(game, s) == {((0, 0), 0), ((4, 5), 1), ((5, 6), 1)}
    game.step(s, game.encode_action(0, 0, 0))  # first double: the spinner, mid-line on the left arm
    assert game.spinner(s) == (0, 0)
    assert game.count(s) == 0 + 5  # spinner 2*0 + the centre tile's open 5: scores again (P-3)
    assert s[H_TURN] == 2 and game.extra_turn(s)
    assert legal_moves(game, s) == {((4, 5), 1), ((5, 6), 1)}  # branches closed: one side uncovered
    game.step(s, game.encode_action(5, 6, 1))
    assert game.count(s) == 6 and not game.extra_turn(s)
    assert s[H_TURN] == 3
    assert legal_moves(game, s) == {((4, 6), 1), ((6, 6), 1)}
    game.step(s, game.encode_action(6, 6, 1))  # a later double: crosswise in line, no new branches
    assert game.count(s) == 0 + 12
    assert game.spinner(s) == (0, 0) and s[H_TURN] == 0
    assert legal_moves(game, s) == {((0, 1), 0), ((0, 2), 0), ((0, 3), 0), ((0, 4), 0), ((0, 6), 0), ((0, 6), 1)}
    game.step(s, game.encode_action(0, 3, 0))  # covers the spinner's second side: branches open
    assert game.open_ends(s) == {0: 3, 1: 6, 2: 0, 3: 0}
    assert game.count(s) == 3 + 12  # the spinner stops counting, empty branches add nothing: 15
    assert s[H_TURN] == 0 and game.extra_turn(s)
    # the two empty branches are twins (same pip, neither counts): offered on arm 2 only
    assert legal_moves(game, s) == {
        ((1, 3), 0), ((0, 6), 1),
        ((0, 1), 2), ((0, 2), 2), ((0, 4), 2), ((0, 6), 2),
    }


def test_p3_count_zero_is_not_a_score_and_p2_double_extra_turn_flag():
    hands = [
        [(0, 0), (0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (1, 5)],  # only lead tile 0-0: forced
        [(0, 4), (0, 6), (2, 4), (2, 5), (2, 6), (3, 5), (5, 6)],
        [(3, 4), (1, 6), (1, 1), (2, 2), (2, 3), (3, 6), (4, 5)],
        [(0, 5), (1, 4), (3, 3), (4, 4), (4, 6), (5, 5), (6, 6)],
    ]
    game = game_of()
    s = deal(game, hands, leader=0)
    assert game.line(s) == [(tile_id(0, 0), 0)] and game.count(s) == 0
    assert s[H_TURN] == 1 and not game.extra_turn(s)  # count 0 is not a multiple of five that scores
    # both sides of the lone 0-0 show 0 alike (twins): offered on arm 0 only
    assert legal_moves(game, s) == {((0, 4), 0), ((0, 6), 0)}
    flag = game_of(double_extra_turn=True)
    s = deal(flag, hands, leader=0)
    assert s[H_TURN] == 0 and flag.extra_turn(s)  # a double gives another turn under the flag
    assert legal_moves(flag, s) == {((0, 1), 0), ((0, 2), 0), ((0, 3), 0)}
    flag.step(s, flag.encode_action(0, 1, 0))  # count 1 + 0: no score, no double
    assert s[H_TURN] == 1 and not flag.extra_turn(s)


def test_spinner_game_both_sides_covered_then_a_branch_scores_repeatedly():
    game = game_of()
    s = deal(game, SPIN_DEAL, leader=0)
    assert game.count(s) == 8 and not game.extra_turn(s)  # a 4-4 lead: 8, no score
    # branches take nothing until both sides are covered
    assert legal_moves(game, s) == {((4, 6), 0), ((2, 4), 0)}  # the lead's two sides are twins
    with pytest.raises(IllegalActionError, match="legal actions"):
        game.step(s, game.encode_action(4, 6, 2))
    game.step(s, game.encode_action(4, 6, 0))
    assert game.count(s) == 6 + 8  # one side covered: the spinner still counts 2d
    assert s[H_TURN] == 2
    assert legal_moves(game, s) == {((3, 4), 1), ((1, 6), 0), ((0, 6), 0), ((3, 6), 0)}
    game.step(s, game.encode_action(3, 4, 1))
    assert game.count(s) == 6 + 3  # both sides covered: only the branch ends would count
    assert game.open_ends(s) == {0: 6, 1: 3, 2: 4, 3: 4}
    assert s[H_TURN] == 3 and not game.extra_turn(s)
    assert legal_moves(game, s) == {  # the empty branches are twins: arm 2 only
        ((6, 6), 0), ((3, 3), 1), ((0, 4), 2), ((1, 4), 2), ((4, 5), 2),
    }
    game.step(s, game.encode_action(1, 4, 2))  # a branch scores: 6 + 3 + 1 = 10
    assert game.count(s) == 10
    assert s[H_TURN] == 3 and game.extra_turn(s)
    assert legal_moves(game, s) == {((6, 6), 0), ((3, 3), 1), ((0, 4), 3), ((4, 5), 3)}
    game.step(s, game.encode_action(4, 5, 3))  # 6 + 3 + 1 + 5 = 15: again
    assert game.count(s) == 15 and s[H_TURN] == 3 and game.extra_turn(s)
    game.step(s, game.encode_action(5, 5, 3))  # a crosswise double on a branch: 6 + 3 + 1 + 10 = 20
    assert game.count(s) == 20 and s[H_TURN] == 3 and game.extra_turn(s)
    assert legal_moves(game, s) == {((6, 6), 0), ((3, 3), 1), ((0, 5), 3)}
    game.step(s, game.encode_action(3, 3, 1))  # 6 + 6 + 1 + 10 = 23: no score, turn passes
    assert game.count(s) == 23 and s[H_TURN] == 0 and not game.extra_turn(s)
    assert legal_moves(game, s) == {
        ((0, 3), 1), ((1, 3), 1), ((1, 3), 2), ((0, 1), 2), ((1, 2), 2), ((1, 5), 2), ((1, 5), 3),
    }
    o = obs_of(game, s, 0)
    assert list(o["spinner"]) == [0, 0, 0, 0, 1, 0, 0] and o["branches_open"][0] == 1
    assert list(o["arm_tiles"]) == [1, 2, 1, 2]
    assert list(o["arm_double"]) == [0, 1, 0, 1]
    assert [int(np.argmax(r)) for r in o["arm_ends"]] == [6, 3, 1, 5]
    assert o["count"][0] == 23
    assert list(o["hand_sizes"]) == [6, 6, 6, 3]
    assert list(o["to_move"]) == [1, 0, 0, 0] and o["extra_turn"][0] == 0
    assert list(o["played_by"][3][[tile_id(1, 4), tile_id(4, 5), tile_id(5, 5), tile_id(3, 3)]]) == [1, 1, 1, 1]
    text = game.render(s, 0)
    line = "[6|4]{4|4}[4|3][3|3]"
    col = line.index("{")
    rows = text.splitlines()
    i = rows.index(line)
    assert rows[i - 1] == " " * col + "[1|4]"  # up branch above the spinner
    assert rows[i + 1:i + 3] == [" " * col + "[4|5]", " " * col + "[5|5]"]  # down branch below
    assert "count 23" in text and "<- to move" in text


def test_p2_double_extra_turn_gives_one_turn_even_when_it_scores_and_p6_unusable_extra_turn():
    game = game_of(double_extra_turn=True)
    s = deal(game, SPIN_DEAL, leader=0)
    # the 4-4 lead earned seat 0 another turn (P-2) but it holds no 4: it passes (P-6)
    assert game.voids(s, 0) == [4]
    assert s[H_TURN] == 1 and not game.extra_turn(s)
    assert list(obs_of(game, s, 1)["voids"][3]) == [0, 0, 0, 0, 1, 0, 0]  # seat 0 is 3 seats after 1
    follow(game, s, [(1, (4, 6), 0), (2, (3, 4), 1)])
    assert s[H_TURN] == 3 and game.count(s) == 9
    game.step(s, game.encode_action(6, 6, 0))  # 12 + 3 = 15: a double that scores
    assert s[H_TURN] == 3 and game.extra_turn(s)
    game.step(s, game.encode_action(1, 4, 2))  # 12 + 3 + 1 = 16, not a double: only one extra turn
    assert s[H_TURN] == 0 and not game.extra_turn(s)


def test_p6_a_scoring_lead_whose_extra_turn_cannot_be_used_is_a_pass():
    hands = [
        [(2, 3), (0, 1), (0, 4), (0, 6), (1, 5), (1, 6), (4, 5)],  # only lead tile: 2-3
        [(1, 2), (1, 3), (2, 4), (2, 5), (2, 6), (0, 3), (5, 6)],
        [(0, 0), (1, 1), (2, 2), (3, 3), (3, 4), (3, 5), (3, 6)],
        [(0, 2), (0, 5), (1, 4), (4, 4), (4, 6), (5, 5), (6, 6)],
    ]
    game = game_of()
    s = deal(game, hands, leader=0)
    assert game.line(s) == [(tile_id(2, 3), 0)] and game.count(s) == 5
    assert game.voids(s, 0) == [2, 3]  # the extra turn was a pass: seat 0 lacks both open numbers
    assert s[H_TURN] == 1 and not game.extra_turn(s)
    assert legal_moves(game, s) == {((1, 2), 0), ((2, 4), 0), ((2, 5), 0), ((2, 6), 0),
                                    ((1, 3), 1), ((0, 3), 1)}


@pytest.mark.parametrize("swap,chips,rewards", [
    (False, [0, 1, 1, 0], [-0.5, 0.5, 0.5, -0.5]),  # seats 1 and 2 tie on 18 pips: both take a chip
    (True, [0, 1, 0, 0], [-0.25, 0.75, -0.25, -0.25]),  # seat 1 alone lowest (16)
])
def test_p7_block_with_nobody_out_lowest_pips_take_chips(swap, chips, rewards):
    hands = [list(h) for h in BLOCK_DEAL]
    if swap:  # seat 1's 0-4 for seat 2's 1-1: seat 1 ends on 16, seat 2 on 20
        hands[1][hands[1].index((0, 4))] = (1, 1)
        hands[2][hands[2].index((1, 1))] = (0, 4)
    game = game_of()
    s = deal(game, hands, leader=0)
    for i, step in enumerate(BLOCK_SCRIPT):
        follow(game, s, [step])
        if i < len(BLOCK_SCRIPT) - 1:
            assert game.count(s) == BLOCK_COUNTS[i]
            assert game.extra_turn(s) == (i == 0)
            assert not game.is_over(s)
            assert list(game.rewards(s)) == [0, 0, 0, 0]
            assert game.open_ends(s).keys() == {0, 1}  # the spinner's outer side is never covered
    assert game.is_over(s) and s[H_TURN] == -1
    left = [pips(game.hand(s, k)) for k in range(4)]
    assert left == ([26, 16, 20, 28] if swap else [26, 18, 18, 28])
    assert all(len(game.hand(s, k)) > 0 for k in range(4))
    assert game.chips(s) == chips and game.hand_winners(s) == [k for k in range(4) if chips[k]]
    assert list(game.rewards(s)) == rewards
    assert not game.legal_mask(s).any()


def test_p4_dominoed_seats_leave_the_order_and_the_rest_play_on():
    hands = [
        [(2, 3), (3, 6), (6, 6), (0, 6)],  # goes out with its last tile at the end
        [(4, 6), (2, 6), (0, 0), (0, 2), (1, 5), (3, 3), (0, 4)],
        [(4, 5), (1, 6)],  # goes out mid-hand
        [(5, 6), (0, 1), (0, 3), (1, 4), (2, 4), (2, 5), (3, 4), (5, 5), (4, 4), (3, 5),
         (1, 1), (1, 2), (1, 3), (2, 2), (0, 5)],
    ]
    game = game_of()
    s = deal(game, hands, leader=0)
    follow(game, s, BLOCK_SCRIPT[:4])  # seat 2's 4-5 is its only legal action: a forced step
    assert s[H_TURN] == 3
    follow(game, s, BLOCK_SCRIPT[4:8])
    assert game.hand(s, 2) == []  # seat 2 dominoed with 1-6
    assert s[H_TURN] == 3  # play goes on with the next seat holding tiles
    assert list(obs_of(game, s, 0)["dominoed"]) == [0, 0, 1, 0]
    game.step(s, game.encode_action(0, 1, 0))
    assert s[H_TURN] == 0  # seat 3 -> seat 0 (seat 2 is out of the order)
    assert legal_moves(game, s) == {((0, 6), 0), ((0, 6), 1)}
    game.step(s, game.encode_action(0, 6, 0))  # seat 0 dominoes; nobody holding tiles can play
    assert game.is_over(s)
    assert game.chips(s) == [1, 0, 1, 0]
    assert list(game.rewards(s)) == [0.5, -0.5, 0.5, -0.5]


def test_p4_last_seat_holding_tiles_plays_on_alone():
    hands = [[(2, 3)], [(3, 4)], [(2, 5)], None]
    used = {tile_id(2, 3), tile_id(3, 4), tile_id(2, 5)}
    hands[3] = [(int(TILE_A[t]), int(TILE_B[t])) for t in range(28) if t not in used]
    game = game_of()
    s = deal(game, hands, leader=0)
    # 2-3 led (forced; seat 0 is out, its scoring extra turn void), 3-4 and 2-5 forced: three out
    assert game.line(s) == [(tile_id(2, 3), 0), (tile_id(3, 4), 1), (tile_id(2, 5), 0)]
    assert [len(game.hand(s, k)) for k in range(4)] == [0, 0, 0, 25]
    assert s[H_TURN] == 3
    rng = np.random.default_rng(5)
    while not game.is_over(s):
        assert s[H_TURN] == 3
        legal = game.legal_actions(s)
        game.step(s, legal[rng.integers(len(legal))])
    rest = game.hand(s, 3)
    if rest:  # blocked: seat 3 cannot play any tile it holds
        ends = set(game.open_ends(s).values())
        assert not any(a in ends or b in ends for a, b in rest)
        assert game.chips(s) == [1, 1, 1, 0] and list(game.rewards(s)) == [0.25, 0.25, 0.25, -0.75]
    else:  # everybody dominoed: a chip each, nothing changes hands
        assert game.chips(s) == [1, 1, 1, 1] and list(game.rewards(s)) == [0, 0, 0, 0]


def test_p7_match_continues_rotates_designated_leader_and_ends_at_chips_to_win():
    game = game_of(match=True, chips_to_win=2)
    s = deal(game, BLOCK_DEAL, leader=0)
    follow(game, s, BLOCK_SCRIPT)  # seats 1 and 2 take a chip each
    assert not game.is_over(s) and s[H_HAND] == 1
    assert game.chips(s) == [0, 1, 1, 0]
    assert list(game.rewards(s)) == [-0.5, 0.5, 0.5, -0.5]
    assert game.designated_leader(s) == 1  # designated 0 in hand 1 (seat 0 led), so seat 1 now
    # the new hand: a fresh 7-7-7-7 deal; seats from 1 on that passed the duty held no lead tile
    start = [set(game.hand(s, k)) | {(int(TILE_A[t]), int(TILE_B[t])) for t, _ in game.line(s)
                                     if s[P.PLAYED_BY + t] == k} for k in range(4)]
    assert [len(h) for h in start] == [7, 7, 7, 7]
    lead_tiles = {(int(TILE_A[t]), int(TILE_B[t])) for t in P.LEAD_TILES}
    k = 1
    while not (start[k] & lead_tiles):
        assert game.no_lead(s, k)
        k = (k + 1) % 4
    assert not game.no_lead(s, k)
    if game.line(s):
        assert game.leader(s) == k
    else:
        assert s[H_TURN] == k
    o = obs_of(game, s, 0)
    assert list(o["chips"]) == [0, 1, 1, 0] and o["voids"].sum() == 0 and o["played_by"].sum() == len(game.line(s))


@pytest.mark.parametrize("before,after,winners", [
    ([1, 0, 1, 0], [1, 1, 2, 0], [2]),
    ([0, 1, 1, 0], [0, 2, 2, 0], [1, 2]),  # ties share the match
])
def test_p7_match_ends_when_a_seat_reaches_chips_to_win(before, after, winners):
    game = game_of(match=True, chips_to_win=2)
    s = deal(game, BLOCK_DEAL, leader=0, chips=before)
    follow(game, s, BLOCK_SCRIPT)
    assert game.is_over(s)
    assert game.chips(s) == after and game.match_winners(s) == winners
    assert "match won by" in game.render(s, 0)


def test_p7_match_of_random_play_ends_with_a_seat_at_target_and_returns_sum_to_relative_chips():
    game = game_of(match=True, chips_to_win=3)
    s = game.new_state()
    rng = np.random.default_rng(1)
    for seed in range(40):
        game.reset(s, seed)
        total = np.zeros(4)
        decisions = 0
        while not game.is_over(s):
            legal = game.legal_actions(s)
            game.step(s, legal[rng.integers(len(legal))])
            total += game.rewards(s)
            decisions += 1
        chips = np.array(game.chips(s))
        assert chips.max() >= 3 and decisions <= game.max_decisions()
        assert np.allclose(total, chips - chips.mean())
        assert s[H_HAND] <= 4 * (3 - 1) + 1


def test_env_extra_turn_keeps_agent_selection_and_says_so():
    env = domino_envs.make(NAME)
    env.reset(seed=0, options={"deal": {"hands": SPIN_DEAL, "first": 0}})
    for seat, (a, b), arm in [(1, (4, 6), 0), (2, (3, 4), 1)]:
        assert env.agent_selection == f"player_{seat}"
        env.step(env.encode_action(a, b, arm))
    assert env.agent_selection == "player_3"
    env.step(env.encode_action(1, 4, "up"))
    assert env.agent_selection == "player_3"
    obs = env.observe("player_3")
    assert env.decode_observation(obs)["extra_turn"][0] == 1
    assert obs["action_mask"].sum() == 4
    assert not env.observe("player_0")["action_mask"].any()


def test_sample_hidden_respects_passed_lead_voids_and_a_decision():
    game = game_of()
    s = deal(game, LEAD_DEAL, leader=0)
    lead_tiles = {(int(TILE_A[t]), int(TILE_B[t])) for t in P.LEAD_TILES}
    for i in range(30):
        smp = game.sample_hidden(s, 3, np.random.default_rng(i))
        assert game.invariants_ok(smp)
        assert game.hand(smp, 3) == game.hand(s, 3)
        # seats 0, 1 passed the duty: every lead tile seat 3 cannot see is with seat 2
        assert not (set(game.hand(smp, 0)) | set(game.hand(smp, 1))) & lead_tiles
        assert {(0, 0), (1, 1), (0, 5), (2, 3)} <= set(game.hand(smp, 2))
        assert np.array_equal(game.observe(smp, 3), game.observe(s, 3))
    # voids and dominoed seats: the P-4 position after seat 2 went out
    hands = [
        [(2, 3), (3, 6), (6, 6), (0, 6)],
        [(4, 6), (2, 6), (0, 0), (0, 2), (1, 5), (3, 3), (0, 4)],
        [(4, 5), (1, 6)],
        [(5, 6), (0, 1), (0, 3), (1, 4), (2, 4), (2, 5), (3, 4), (5, 5), (4, 4), (3, 5),
         (1, 1), (1, 2), (1, 3), (2, 2), (0, 5)],
    ]
    s = deal(game, hands, leader=0)
    follow(game, s, BLOCK_SCRIPT[:8])
    for i in range(30):
        smp = game.sample_hidden(s, 0, np.random.default_rng(i))
        assert game.hand(smp, 2) == []  # dominoed: holds nothing
        assert [len(game.hand(smp, k)) for k in range(4)] == [len(game.hand(s, k)) for k in range(4)]
        assert len(legal_moves(game, smp)) >= 2  # seat 3 is at a decision
        assert np.array_equal(game.observe(smp, 0), game.observe(s, 0))


def test_sample_hidden_keeps_voids():
    game = game_of()
    hands = [
        [(2, 3), (0, 1), (0, 4), (0, 6), (1, 5), (1, 6), (4, 5)],
        [(1, 2), (1, 3), (2, 4), (2, 5), (2, 6), (0, 3), (5, 6)],
        [(0, 0), (1, 1), (2, 2), (3, 3), (3, 4), (3, 5), (3, 6)],
        [(0, 2), (0, 5), (1, 4), (4, 4), (4, 6), (5, 5), (6, 6)],
    ]
    s = deal(game, hands, leader=0)
    assert game.voids(s, 0) == [2, 3]
    for i in range(30):
        smp = game.sample_hidden(s, 2, np.random.default_rng(i))
        assert not any(2 in t or 3 in t for t in game.hand(smp, 0))
        assert game.invariants_ok(smp)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("cfg,msg", [
    ({"num_players": 3}, "exactly 4 players"),
    ({"num_players": True}, "exactly 4 players"),
    ({"double_extra_turn": 1}, "double_extra_turn"),
    ({"match": "yes"}, "match"),
    ({"chips_to_win": 0}, "chips_to_win"),
    ({"chips_to_win": 2.5}, "chips_to_win"),
    ({"first_leader": 4}, "first_leader"),
    ({"target": 61}, "unknown config key"),
])
def test_bad_config(cfg, msg):
    with pytest.raises(ConfigError, match=msg):
        game_of(**cfg)


@pytest.mark.parametrize("mutate,msg", [
    (lambda d: d.update(hands=d["hands"][:3]), "a list of 4 hands"),
    (lambda d: d["hands"][0].pop(), "missing"),
    (lambda d: d["hands"][0].append((2, 3)), "dealt twice"),
    (lambda d: d["hands"][0].__setitem__(0, (7, 1)), "not in a double-6 set"),
    (lambda d: d["hands"][0].__setitem__(0, "55"), "not a tile"),
    (lambda d: d["hands"].__setitem__(0, []), "non-empty"),
    (lambda d: d.update(first=4), "first=4"),
    (lambda d: d.update(first=True), "first=True"),
    (lambda d: d.update(leader=1), "deal key 'leader' is now 'first'"),
    (lambda d: d.update(stock=[(0, 0)]), "there is no stock"),
    (lambda d: d.update(hands=5), "'hands' must be a list of 4 hands"),
    (lambda d: d.update(boneyard=[]), "keys"),
    (lambda d: d.update(chips=[0, 0, 0, 0]), "match mode"),
])
def test_bad_deals(mutate, msg):
    game = game_of()
    d = {"hands": [list(h) for h in SPIN_DEAL], "first": 0}
    mutate(d)
    s = game.new_state()
    game.reset(s, 0)
    with pytest.raises(DealError, match=msg):
        game.set_deal(s, d)


def test_bad_chips_in_match_mode_and_bad_actions():
    game = game_of(match=True, chips_to_win=3)
    s = game.new_state()
    game.reset(s, 0)
    for chips in ([0, 0, 3, 0], [0, 0, 0], [0, -1, 0, 0]):
        with pytest.raises(DealError, match="chips"):
            game.set_deal(s, {"hands": SPIN_DEAL, "chips": chips})
    with pytest.raises(DealError, match="a deal is a dict"):
        game.set_deal(s, [SPIN_DEAL])
    with pytest.raises(ValueError, match="arm"):
        game.encode_action(1, 2, "sideways")
    with pytest.raises(ValueError, match="arm"):
        game.encode_action(1, 2, 4)
    s = deal(game_of(), SPIN_DEAL)
    with pytest.raises(IllegalActionError, match="out of range"):
        game_of().step(s, 112)


def test_no_hidden_tile_stays_in_a_dead_slot_after_the_deal():
    """Item 8 of issue 13: the deal shuffles its deck in the layout's slots. Two rows holding the
    same deal, one from reset(seed) and one from set_deal of that deal over another reset, must be
    equal but for the random stream: a slot that differs holds a trace of a shuffle (hidden tiles
    of a hand), and sample_hidden, which copies the row, must not differ either."""
    game = game_of()
    for seed in range(30):
        a = game.new_state()
        game.reset(a, seed)
        if game.leader(a) >= 0:  # forced plays already: rebuild the deal only from a fresh hand
            continue
        hands = [game.hand(a, k) for k in range(4)]
        b = game.new_state()
        game.reset(b, seed + 1000)
        game.set_deal(b, {"hands": hands, "first": game.designated_leader(a)})
        diff = np.flatnonzero(a != b).tolist()
        assert diff in ([], [H_RNG]), f"seed {seed}: slots {diff} differ"
        for v in range(4):
            sa = game.sample_hidden(a, v, np.random.default_rng(seed))
            sb = game.sample_hidden(b, v, np.random.default_rng(seed))
            assert np.array_equal(sa, sb), f"seed {seed}: the sample of seat {v} depends on the row's past"


def test_twin_arms_offer_a_tile_once_and_the_step_refuses_the_mirror():
    """Issue 13 item 9: the two empty branches of the spinner show 4 alike (neither counts), so a
    4 is offered on branch 2 only, and stepping it on branch 3 is an illegal action."""
    game = game_of()
    s = deal(game, SPIN_DEAL, leader=0)
    assert legal_moves(game, s) == {((4, 6), 0), ((2, 4), 0)}  # the lead's two sides are twins
    with pytest.raises(IllegalActionError, match="legal actions"):
        game.step(s, game.encode_action(4, 6, 1))
    game.step(s, game.encode_action(4, 6, 0))
    game.step(s, game.encode_action(3, 4, 1))
    assert game.open_ends(s) == {0: 6, 1: 3, 2: 4, 3: 4}
    assert ((1, 4), 2) in legal_moves(game, s) and ((1, 4), 3) not in legal_moves(game, s)
    assert game.legal_mask(s)[game.encode_action(1, 4, 3)] == 0
    with pytest.raises(IllegalActionError, match="legal actions"):
        game.step(s, game.encode_action(1, 4, 3))
