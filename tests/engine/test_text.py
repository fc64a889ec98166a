"""The seat's text view (domino_envs/text.py) leaks nothing and names moves the way `domino play`
parses them: for every game in its default config and one other, about 200 positions of seeded
random play, the seat's text, its log's new lines and the rules are identical after the hidden
tiles are resampled (`sample_hidden` from that seat), and they DO change when the seat's own hand
does (so the identity is not vacuous). parse_move round-trips every legal move's number and name."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from domino_envs import make_game
from domino_envs.errors import MoveEntryError
from domino_envs.fronts import deal_to_decision
from domino_envs.text import SeatLog, move_name, move_names, parse_move, rules_text, seat_text

CONFIGS = [
    ("draw_v0", {}), ("draw_v0", {"num_players": 3}),
    ("block_v0", {}), ("block_v0", {"num_players": 4}),
    ("sum7_v0", {}), ("sum7_v0", {"num_players": 3, "zero_rule": "wild"}),
    ("seven_toed_pete_v0", {}), ("seven_toed_pete_v0", {"double_extra_turn": True, "match": True}),
    ("racehorse_v0", {}), ("racehorse_v0", {"num_players": 4, "teams": True, "spinner": "all_doubles"}),
    ("magic7_v0", {}), ("magic7_v0", {"num_players": 3, "num_games": 2}),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in cfg.items()) or 'default'}" for name, cfg in CONFIGS]
POSITIONS = 200


def positions(game, count=POSITIONS, seed=0):
    """Seeded random play over as many deals as it takes: yields (state, logs) at each decision, the
    logs (one SeatLog per seat) having observed every position so far but this one."""
    rng = np.random.default_rng(seed)
    found, deal = 0, 0
    while found < count:
        row = game.new_state()
        deal_to_decision(game, row, seed * 1000 + deal)
        deal += 1
        logs = [SeatLog(game, k) for k in range(game.num_players)]
        while not game.is_over(row) and found < count:
            yield row, logs
            found += 1
            for lg in logs:
                lg.observe(game.observe(row, lg.seat))
            game.step(row, int(rng.choice(game.legal_actions(row))))


@pytest.mark.parametrize("name,config", CONFIGS, ids=IDS)
def test_text_is_the_same_whatever_the_hidden_tiles_are(name, config):
    """Every seat at every position: its log's new lines and its whole text (hand, table, counts, log,
    numbered moves) from the true state and from a state resampled from its view are identical."""
    game = make_game(name, **config)
    rules = rules_text(game)
    rng = np.random.default_rng(1)
    checked = moved = 0
    for row, logs in positions(game):
        for seat in range(game.num_players):
            sample = game.sample_hidden(row, seat, rng)
            moved += not np.array_equal(sample, row)
            texts = []
            for state in (row, sample):
                log = copy.deepcopy(logs[seat])
                new = log.observe(game.observe(state, seat))
                texts.append((new, seat_text(game, game.observe(state, seat), _mask(game, state, seat), log.lines,
                                             seat=seat)))
            assert texts[0] == texts[1], f"seat {seat} can tell the resampled state apart"
            checked += 1
    assert rules_text(game) == rules
    assert checked >= POSITIONS and moved > checked // 2  # the samples did move hidden tiles


def _mask(game, row, seat):
    return game.legal_mask(row) if game.current_seat(row) == seat else np.zeros(game.num_actions, dtype=np.int8)


@pytest.mark.parametrize("name,config", CONFIGS, ids=IDS)
def test_text_changes_with_the_seats_own_hand(name, config):
    """Not vacuous: resampled from ANOTHER seat's view (which redeals this seat's hand), the text of
    the seat to act differs whenever its hand does."""
    game = make_game(name, **config)
    rng = np.random.default_rng(2)
    differ = 0
    for row, logs in positions(game, count=40, seed=3):
        seat = game.current_seat(row)
        other = (seat + 1) % game.num_players
        sample = game.sample_hidden(row, other, rng)
        hand, sampled_hand = (game.decode(game.observe(s, seat))["hand"] for s in (row, sample))
        if np.array_equal(hand, sampled_hand):
            continue
        real = seat_text(game, game.observe(row, seat), game.legal_mask(row), logs[seat].lines, seat=seat)
        fake = seat_text(game, game.observe(sample, seat), game.legal_mask(sample), logs[seat].lines, seat=seat)
        assert real != fake
        differ += 1
    assert differ >= 10


@pytest.mark.parametrize("name,config", CONFIGS, ids=IDS)
def test_parse_move_round_trips_every_legal_number_and_name(name, config):
    game = make_game(name, **config)
    for row, _ in positions(game, count=30, seed=4):
        legal = game.legal_actions(row)
        text = seat_text(game, game.observe(row, game.current_seat(row)), game.legal_mask(row))
        for i, a in enumerate(legal, 1):
            assert parse_move(game, str(i), legal) == a
            assert parse_move(game, move_name(game, a), legal) == a
            assert parse_move(game, f"#{a}", legal) == a
            assert f"  {i}. {move_name(game, a)}" in text.splitlines()  # numbered as the text numbers them


@pytest.mark.parametrize("entry,kind", [("", "empty"), ("0", "range"), ("99", "range"), ("#999", "id"),
                                        ("#x", "id"), ("banana", "unknown"), ("#0", "illegal"),
                                        ("play 0-0 on the left end (or lead it)", "illegal")])
def test_bad_entries_say_what_is_wrong_and_name_the_legal_moves(entry, kind):
    game = make_game("draw_v0")
    row = game.new_state()
    game.reset(row, 5)
    legal = game.legal_actions(row)
    assert 0 not in legal
    with pytest.raises(MoveEntryError) as err:
        parse_move(game, entry, legal)
    assert err.value.kind == kind and err.value.legal == legal
    assert all(f"{i}. {move_name(game, a)}" in str(err.value) for i, a in enumerate(legal, 1))


def test_a_word_that_fits_several_moves_is_ambiguous_and_a_tile_may_be_typed_either_way():
    game = make_game("draw_v0")
    for row, _ in positions(game, count=60, seed=6):
        legal = game.legal_actions(row)
        tiles = [move_name(game, a).split()[1] for a in legal]
        twice = [t for t in tiles if tiles.count(t) == 2]
        once = [t for t in tiles if tiles.count(t) == 1 and t.split("-")[0] != t.split("-")[1]]
        if twice:
            with pytest.raises(MoveEntryError) as err:
                parse_move(game, twice[0], legal)
            assert err.value.kind == "ambiguous"
        for t in once:
            low, high = t.split("-")
            assert parse_move(game, f"{high}|{low}", legal) == legal[tiles.index(t)]


def test_the_log_names_the_seat_that_acted():
    """Observations are seat-relative: every other seat's log names a placement's absolute seat."""
    game = make_game("seven_toed_pete_v0")
    names = move_names(game)
    seen = 0
    for row, logs in positions(game, count=120, seed=7):
        actor = game.current_seat(row)
        before = [copy.deepcopy(lg) for lg in logs]
        for lg in before:
            lg.observe(game.observe(row, lg.seat))
        trial = row.copy()
        legal = game.legal_actions(trial)
        action = legal[0]
        game.step(trial, action)
        tile = names[action].split()[1]
        for lg in before:
            if lg.seat != actor:
                lines = lg.observe(game.observe(trial, lg.seat))
                assert any(line.startswith(f"seat {actor} ") and tile in line for line in lines), lines
                seen += 1
    assert seen > 100
