"""Regressions of the Draw and Block Games that once passed the whole suite, each derived by hand
from the rules: D-5 in a match (the last placer leads the next hand, not its winner), voids cleared
by drawing unseen tiles, and observations that are seat-relative from every seat. tests/mutations/
run.py plants each bug on a copy and checks these catch it."""
from __future__ import annotations

import numpy as np

from domino_envs import make_game
from domino_envs.core import H_DONE, H_TURN
from domino_envs.games import draw as D
from tests.helpers import deal_state


def obs_of(game, state, seat):
    return game.decode(game.observe(state, seat))


def tiles_of(game, row):
    """The (a, b) tiles set in a 0/1 row over tile ids."""
    return sorted((int(D.TILE_A[t]), int(D.TILE_B[t])) for t in np.flatnonzero(row))


# ------------------------------------------------------------------------------ D-5
def test_d5_blocked_hand_next_hand_led_by_last_placer_not_by_winner():
    """Seat 0 leads 6-6; seat 1 (0-1, 2-3) has no 6 and no boneyard: passes; seat 0's 5-5 does
    not fit: blocked. Pips: seat 0 holds 10, seat 1 holds 6, so seat 1 wins the block (D-3) and
    takes 10. D-5: the next hand is led by whoever placed the last tile: seat 0."""
    game = make_game("draw_v0", match=True, target=100)
    s = deal_state(game, [[(6, 6), (5, 5)], [(0, 1), (2, 3)]], stock=[], first=0)
    assert s[H_TURN] == 0
    game.step(s, game.encode_action(6, 6, 0))
    assert game.rewards(s).tolist() == [-10.0, 10.0]
    assert game.scores(s) == [0, 10]
    assert s[H_DONE] == 0  # the match goes on: hand 2 is dealt
    assert s[H_TURN] == 0, "D-5: the last placer (seat 0) leads, not the block's winner (seat 1)"
    assert obs_of(game, s, 0)["to_move"].tolist() == [1, 0]


# ------------------------------------------------------------------------------ Draw voids
def test_draw_voids_reset_after_drawing_and_keeping_unseen_tiles():
    """Seat 0 leads 3-4. Seat 1 (0-0, 1-1) lacks 3 and 4: draws 4-6, which fits at once (nothing
    kept): voids {3, 4}; 4-6 goes on the 4 (ends 3, 6). Seat 0 plays 3-5 on the 3 (ends 5, 6).
    Seat 1 lacks 5 and 6: draws 2-2 (kept: unseen to the others, who therefore learn nothing about
    its 3s and 4s any more), then 0-5, which goes on the 5: voids are now exactly {5, 6}."""
    game = make_game("draw_v0")
    s = deal_state(game, [[(3, 4), (3, 5), (6, 6), (1, 6)], [(0, 0), (1, 1)]],
                   stock=[(4, 6), (2, 2), (0, 5), (1, 2)], first=0)
    game.step(s, game.encode_action(3, 4, 0))
    assert s[H_TURN] == 0 and game.ends(s) == (3, 6)
    assert np.flatnonzero(obs_of(game, s, 0)["voids"][1]).tolist() == [3, 4]
    game.step(s, game.encode_action(3, 5, 0))
    assert s[H_TURN] == 0 and game.ends(s) == (0, 6)
    assert sorted(game.hand(s, 1)) == [(0, 0), (1, 1), (2, 2)]
    assert np.flatnonzero(obs_of(game, s, 0)["voids"][1]).tolist() == [5, 6]
    assert np.flatnonzero(obs_of(game, s, 1)["voids"][0]).tolist() == [5, 6]


# ------------------------------------------------------------------------------ seat-relative
def test_draw_observation_is_seat_relative_from_every_seat():
    """3 players. Seat 0 leads 3-4; seat 1 (0-0, 1-1) lacks 3 and 4, draws 0-3 (fits: nothing
    kept), voids {3, 4}, plays it on the 3 (ends 0, 4); seat 2 (4-5, 0-2, 2-2) decides.
    Relative seat r of observer v is seat (v + r) mod 3."""
    game = make_game("draw_v0", num_players=3)
    s = deal_state(game, [[(3, 4), (6, 6), (5, 6)], [(0, 0), (1, 1)], [(4, 5), (0, 2), (2, 2)]],
                   stock=[(0, 3)], first=0)
    game.step(s, game.encode_action(3, 4, 0))
    assert s[H_TURN] == 2 and game.ends(s) == (0, 4)
    played = {0: [(3, 4)], 1: [(0, 3)], 2: []}
    voids = {0: [], 1: [3, 4], 2: []}
    sizes = {0: 2, 1: 2, 2: 3}
    for v in range(3):
        o = obs_of(game, s, v)
        for r in range(3):
            seat = (v + r) % 3
            assert tiles_of(game, o["played_by"][r]) == played[seat], f"observer {v}, relative {r}"
            assert np.flatnonzero(o["voids"][r]).tolist() == voids[seat], f"observer {v}, relative {r}"
            assert o["hand_sizes"][r] == sizes[seat]
            assert o["drawn"][r] == (1 if seat == 1 else 0)
        assert o["to_move"].tolist() == [1 if (v + r) % 3 == 2 else 0 for r in range(3)]


def test_block_observation_is_seat_relative_from_every_seat():
    """Block Game, 3 players. Seat 0 leads 3-4; seat 1 (0-0, 1-1) cannot play and passes: voids
    {3, 4}; seat 2 (4-5, 3-3, 2-2) decides."""
    game = make_game("block_v0", num_players=3)
    s = deal_state(game, [[(3, 4), (6, 6), (5, 6)], [(0, 0), (1, 1)], [(4, 5), (3, 3), (2, 2)]], first=0)
    game.step(s, game.encode_action(3, 4, 0))
    assert s[H_TURN] == 2
    played = {0: [(3, 4)], 1: [], 2: []}
    voids = {0: [], 1: [3, 4], 2: []}
    for v in range(3):
        o = obs_of(game, s, v)
        for r in range(3):
            seat = (v + r) % 3
            assert tiles_of(game, o["played_by"][r]) == played[seat], f"observer {v}, relative {r}"
            assert np.flatnonzero(o["voids"][r]).tolist() == voids[seat], f"observer {v}, relative {r}"


