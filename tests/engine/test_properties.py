"""Seeded random games through the engine: invariants, determinism, and no information leakage."""
from __future__ import annotations

import random

import numpy as np
import pytest

from domino_envs import make_game
from domino_envs.core import H_TURN
from domino_envs.sampling import checked_sample
from tests.env_cases import CONFIG_IDS, CONFIGS
from tests.helpers import play_to_random_point

N_GAMES = 10_000
DECISION_BUDGET = 250_000  # long games (matches) stop here, after MIN_GAMES at least
MIN_GAMES = 2_000


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=CONFIG_IDS)
def test_random_games_keep_every_invariant(name, kwargs):
    """Tile conservation, mask == the step's own legal set, non-empty mask, zero-sum rewards and
    termination within a bound, after every step of 10,000 seeded random games (configs of long
    games, matches mostly: as many as fit in 250,000 decisions, never fewer than 2,000)."""
    game = make_game(name, **kwargs)
    state = game.new_state()
    rng = np.random.default_rng(12345)
    bound = getattr(game, "max_decisions", lambda: 10_000)()
    lengths = []
    for i in range(N_GAMES):
        if i >= MIN_GAMES and sum(lengths) >= DECISION_BUDGET:
            break
        game.reset(state, i)
        assert game.invariants_ok(state), f"game {i}: invariants broken after the deal"
        decisions = 0
        while not game.is_over(state):
            mask = game.legal_mask(state)
            legal = game.legal_set(state)
            assert np.array_equal(mask, legal), f"game {i} decision {decisions}: mask != legal set"
            choices = np.flatnonzero(mask)
            assert choices.size > 0, f"game {i}: empty mask while not over"
            game.step(state, int(choices[rng.integers(choices.size)]))
            decisions += 1
            assert abs(float(game.rewards(state).sum())) < 1e-9, f"game {i}: rewards not zero-sum"
            assert game.invariants_ok(state), f"game {i} decision {decisions}: invariants broken"
            assert decisions <= bound, f"game {i}: no end within {bound} decisions"
        assert not game.legal_mask(state).any()
        lengths.append(decisions)
    assert max(lengths) > 0 and len(lengths) >= MIN_GAMES


def _trajectory(game, seed, n=3):
    """Observations of the seat to act along a fixed-rule (first legal action) game."""
    state = game.new_state()
    out = []
    for k in range(n):
        game.reset(state, seed + k)
        while not game.is_over(state):
            out.append(game.observe(state, int(state[H_TURN])).copy())
            game.step(state, int(np.flatnonzero(game.legal_mask(state))[0]))
    return out


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=CONFIG_IDS)
def test_determinism(name, kwargs):
    game = make_game(name, **kwargs)
    a = _trajectory(game, 42)
    np.random.seed(999)  # stirring the global RNGs must change nothing
    random.seed(999)
    np.random.random(10)
    b = _trajectory(game, 42)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    c = _trajectory(game, 43)
    assert len(a) != len(c) or not all(np.array_equal(x, y) for x, y in zip(a, c)), \
        "different seeds gave the same games"


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=CONFIG_IDS)
def test_reset_ignores_what_the_row_held(name, kwargs):
    """A reset clears only the slots it must (the vector env resets rows in place, and the deck and
    layout history are not cleared), so a row full of junk must play exactly like a zero row:
    same observations for every seat, masks, rewards and rendering, along the same games."""
    game = make_game(name, **kwargs)
    rng = np.random.default_rng(77)
    decisions = 0
    for i in range(300):
        if i >= 30 and decisions > 100:  # 30 games, more for the small configs' short ones
            break
        clean = game.new_state()
        dirty = game.new_state()
        dirty[:] = rng.integers(-3, 120, size=dirty.size)
        game.reset(clean, 500 + i)
        game.reset(dirty, 500 + i)
        while True:
            for seat in range(game.num_players):
                assert np.array_equal(game.observe(clean, seat), game.observe(dirty, seat)), \
                    f"game {i} decision {decisions}: seat {seat}'s observation depends on old row contents"
            assert np.array_equal(game.legal_mask(clean), game.legal_mask(dirty))
            assert np.array_equal(game.rewards(clean), game.rewards(dirty))
            assert game.render(clean, 0) == game.render(dirty, 0)
            assert game.invariants_ok(dirty)
            if game.is_over(clean):
                assert game.is_over(dirty)
                break
            action = int(rng.choice(np.flatnonzero(game.legal_mask(clean))))
            game.step(clean, action)
            game.step(dirty, action)
            decisions += 1
    assert decisions > 100


def test_env_seeding_same_and_different():
    import domino_envs

    def run(seed):
        env = domino_envs.make("draw_v0", num_players=3)
        env.reset(seed=seed)
        obs = []
        for _agent in env.agent_iter(max_iter=200):
            o, _, term, trunc, _ = env.last()
            obs.append(o["observation"].copy())
            env.step(None if term or trunc else int(np.flatnonzero(o["action_mask"])[-1]))
        return obs

    a, b, c = run(5), run(5), run(6)
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    assert len(a) != len(c) or not all(np.array_equal(x, y) for x, y in zip(a, c))


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=CONFIG_IDS)
def test_no_leakage_through_sample_hidden(name, kwargs):
    """Resampling what a seat cannot see leaves its observation and mask unchanged; the sample is
    a legal state; two states the seat cannot tell apart give the same sample; and every opponent
    (each relative seat on its own, not just any of them) gets a resampled view in many samples."""
    game = make_game(name, **kwargs)
    rng = np.random.default_rng(2024)
    n = game.num_players
    checked = 0
    changed = np.zeros(n, dtype=np.int64)  # by relative seat of the opponent
    for i in range(30_000):
        if i >= 3000 and checked > 1000:  # 3000 deals, more for the small configs' short games
            break
        state = play_to_random_point(game, i, rng)
        if state is None:
            continue
        seat = int(rng.integers(game.num_players))
        sample = checked_sample(game, state, seat, np.random.default_rng(i))
        assert game.invariants_ok(sample)
        assert np.array_equal(game.observe(sample, seat), game.observe(state, seat))
        to_move = int(state[H_TURN])
        if to_move == seat:
            assert np.array_equal(game.legal_mask(sample), game.legal_mask(state))
        for j in range(n):
            if j != seat and not np.array_equal(game.observe(sample, j), game.observe(state, j)):
                changed[(j - seat) % n] += 1
        again_a = checked_sample(game, state, seat, np.random.default_rng(10_000 + i))
        again_b = checked_sample(game, sample, seat, np.random.default_rng(10_000 + i))
        assert np.array_equal(again_a, again_b), "sample depends on what the seat cannot see"
        # the sample is playable to the end under the rules
        while not game.is_over(sample):
            legal = np.flatnonzero(game.legal_mask(sample))
            game.step(sample, int(legal[rng.integers(legal.size)]))
            assert game.invariants_ok(sample)
        checked += 1
    assert checked > 1000
    assert (changed[1:] > checked // 4).all(), \
        f"sample_hidden hardly ever changes some opponent's hidden tiles (by relative seat): {changed[1:]} of {checked}"
