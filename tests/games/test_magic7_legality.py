"""Magic-7's one legality source (magic7._legal_words) against the rules, on many random positions.

The engine's mask, the step's check (legal_set) and the forced-move count (_count_legal) all read
_legal_words, so comparing them with each other proves nothing; here each is compared with a
reference written from the rules (module docstring, rules-spec section 5) in plain Python, reading
the position through the public inspection helpers (rows, covers, hands, pile) rather than the
engine's cached PLAYABLE slot.
"""
from __future__ import annotations

import numpy as np
import pytest

from domino_envs import make_game
from domino_envs.core import H_TURN
from domino_envs.games import magic7 as M


def reference_legal(game, s) -> set[int]:
    """The legal actions of the seat to act, from the rules."""
    seat = int(s[H_TURN])
    live = game.hand(s, seat)
    if not live:
        return {M.A_PASS}  # pass: only with no live tiles
    cards = {M.card_id(c) for c in live if c != "JK"}
    has_joker = "JK" in live
    covered = game.covered(s)
    open_slots = {}  # (suit, end) -> the card that would go there
    for su, (lo, hi) in enumerate(game.rows(s)):
        if lo == 0:
            continue  # a row whose 7 is not out takes nothing
        if lo > 1 and (M.SUITS[su], "low") not in covered:
            open_slots[(su, 0)] = su * 13 + lo - 2  # one rank below the lowest (A is next to 2 only)
        if hi < 13 and (M.SUITS[su], "high") not in covered:
            open_slots[(su, 1)] = su * 13 + hi  # one rank above the highest
    playable = cards & set(open_slots.values())  # jokers never count as playable (M7-3)
    legal = {M.A_JOKER + 2 * su + e for su, e in open_slots} if has_joker else set()  # M7-5
    if playable:
        return legal | playable
    if game.pile(s):
        return legal | {M.A_DRAW}  # M7-6
    legal |= {M.A_KILL + c for c in cards}  # M7-9
    if has_joker:
        legal.add(M.A_KILL_JOKER)
    return legal


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_mask_step_check_and_forced_count_follow_the_rules(n):
    game = make_game("magic7_v0", num_players=n, num_games=2)
    rng = np.random.default_rng(n)
    s = game.new_state()
    kinds = set()
    positions = 0
    for seed in range(60):
        game.reset(s, seed)
        while not game.is_over(s):
            want = reference_legal(game, s)
            mask = set(int(a) for a in np.flatnonzero(game.legal_mask(s)))
            step_check = set(int(a) for a in np.flatnonzero(game.legal_set(s)))
            assert mask == want, (seed, sorted(mask ^ want))
            assert step_check == want, (seed, sorted(step_check ^ want))
            count, only = M._count_legal(s, game.params)
            assert count == len(want) >= 2  # the engine stops only at real decisions
            assert only == -1
            kinds |= {("play" if a < M.A_JOKER else "joker" if a < M.A_DRAW else "draw" if a == M.A_DRAW
                       else "kill") for a in want}
            positions += 1
            game.step(s, int(rng.choice(sorted(want))))
    assert positions > 1000
    assert kinds == {"play", "joker", "draw", "kill"}  # every kind of action was exercised


def test_the_forced_count_names_the_lone_action_as_the_rules_do():
    """Positions with one legal action never reach an agent (the engine takes them), so check
    _count_legal's (1, action) there directly: rows edited into such positions."""
    game = make_game("magic7_v0", num_players=2)
    s = game.new_state()
    checked = 0
    rng = np.random.default_rng(0)
    for seed in range(40):
        game.reset(s, seed)
        while not game.is_over(s):
            seat = int(s[H_TURN])
            live = int(s[M.LIVE + seat])
            for t in [-1] + [t for t in range(M.N_TILES) if (live >> t) & 1][:6]:
                edited = s.copy()
                edited[M.LIVE + seat] = 0 if t < 0 else 1 << t  # no live tile, or that one only
                want = reference_legal(game, edited)
                count, only = M._count_legal(edited, game.params)
                assert count == len(want)
                assert only == (next(iter(want)) if len(want) == 1 else -1)
                checked += count == 1
            game.step(s, int(rng.choice(game.legal_actions(s))))
    assert checked > 100
