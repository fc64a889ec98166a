"""The compiled heuristics make the Python heuristics' choices (issue 24, criterion 4).

tests/data/heuristic_positions.npz holds positions of every env and config family with the scores
and best-action sets the per-observation Python heuristics of commit 7b59658 gave them (written by
tests/agents/record_heuristics.py, which says how). Pinned here, on every recorded position:

- the kernel's score of every legal action equals the recorded one (float tolerance: the Python
  code rounded some terms through float32, the kernels compute in float64);
- the kernel's tie set (scores within np.isclose of the top) is the recorded best set, and the
  action it picks lies in it;
- the agent and the batch agree: `act` row by row with one Generator picks exactly what one
  `act_batch` call picks with a Generator seeded the same (so `HeuristicBatch` plays as the agent);
- a tie is broken as the Python agents broke it: ``best[rng.integers(len(best))]``, so a seeded
  agent reproduces the old agents' choices draw for draw; different seeds reach every tied action.
"""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from domino_agents.heuristics import make_heuristic
from domino_envs.errors import IllegalActionError, StateError
from domino_envs.registry import make_game
from domino_training.learners.pool import HeuristicBatch

DATA = Path(__file__).resolve().parents[1] / "data" / "heuristic_positions.npz"


@cache
def _meta() -> dict:
    with np.load(DATA) as z:
        return json.loads(str(z["meta"]))


def _family(name: str):
    """(game, agent with the recorded weights, obs, int8 masks, recorded scores (flat, legal order),
    recorded best flags (flat))."""
    m = _meta()[name]
    game = make_game(m["env"], **m["config"])
    agent = make_heuristic(game, seed=0, **m["params"])
    with np.load(DATA) as z:
        obs = z[f"{name}/obs"].astype(np.float32)  # uint8 / int16 where exact (the recorder's choice)
        masks = np.unpackbits(z[f"{name}/mask"], axis=1, count=game.num_actions).astype(np.int8)
        scores = z[f"{name}/scores"]
        best = np.unpackbits(z[f"{name}/best"], count=scores.size).astype(bool)
    assert obs.shape == (m["positions"], game.obs_size) and scores.size == m["legal"] == int(masks.sum())
    return game, agent, obs, masks, scores, best


def _tie_flags(flat_scores: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Per legal action (flat, row-major legal order): within np.isclose of its row's top score."""
    rows = np.repeat(np.arange(masks.shape[0]), masks.sum(axis=1))
    top = np.full(masks.shape[0], -np.inf)
    np.maximum.at(top, rows, flat_scores)
    return np.isclose(flat_scores, top[rows])


def test_every_env_is_recorded_with_thousands_of_positions():
    from domino_envs.registry import GAMES

    per_env: dict[str, int] = {}
    for m in _meta().values():
        per_env[m["env"]] = per_env.get(m["env"], 0) + m["positions"]
    assert set(per_env) == set(GAMES), per_env
    assert min(per_env.values()) >= 3000, per_env


@pytest.mark.parametrize("name", sorted(_meta()))
def test_kernel_scores_and_choices_match_the_recorded_python_heuristic(name):
    game, agent, obs, masks, recorded, best = _family(name)
    s = agent.batch_scores(obs, masks)
    assert np.isneginf(s[masks == 0]).all()
    flat = s[masks != 0]  # row-major: each row's legal actions in ascending id order, as recorded
    bad = np.flatnonzero(~np.isclose(flat, recorded, rtol=1e-5, atol=1e-6))
    assert bad.size == 0, f"{name}: {bad.size} scores differ, first kernel {flat[bad[0]]} vs {recorded[bad[0]]}"
    ties = _tie_flags(flat, masks)
    assert (ties == best).all(), f"{name}: {int((ties != best).sum())} legal actions differ in the best sets"
    actions = agent.act_batch(obs, masks, np.random.default_rng(1))
    legal_pos = np.cumsum(masks, axis=1) - 1  # position of an action among its row's legal ones
    offsets = np.concatenate([[0], np.cumsum(masks.sum(axis=1))[:-1]])
    chosen = offsets + legal_pos[np.arange(len(actions)), actions]
    assert (masks[np.arange(len(actions)), actions] == 1).all() and best[chosen].all()


@pytest.mark.parametrize("name", ["draw_3p", "pete", "racehorse_3p_first_double", "sum7_4p", "magic7_4p"])
def test_the_agent_and_the_batch_break_ties_alike_and_as_the_python_agents_did(name):
    game, agent, obs, masks, recorded, best = _family(name)
    rows = obs[:400], masks[:400]
    one = np.random.default_rng(7)
    agent_choices = np.array([agent.act_batch(o[None], m[None], one)[0] for o, m in zip(*rows)])
    agent.reset(7)
    assert (np.array([agent.act(o, m) for o, m in zip(*rows)]) == agent_choices).all()
    assert (agent.act_batch(*rows, np.random.default_rng(7)) == agent_choices).all()
    # the Python agents' rule: best[rng.integers(best.size)] when there is a tie, no draw otherwise
    py = np.random.default_rng(7)
    split = np.cumsum(masks.sum(axis=1))[:-1]
    for i, (flags, m) in enumerate(zip(np.split(best, split)[:400], rows[1])):
        tied = np.flatnonzero(m)[flags]
        expected = tied[py.integers(tied.size)] if tied.size > 1 else tied[0]
        assert agent_choices[i] == expected, (name, i)


def test_seeds_reach_every_action_of_a_two_way_tie():
    _, agent, obs, masks, _, best = _family("draw_2p")
    split = np.cumsum(masks.sum(axis=1))[:-1]
    flags = np.split(best, split)
    two = [i for i, f in enumerate(flags) if f.sum() == 2][:20]
    assert len(two) >= 5
    picks = np.stack([agent.act_batch(obs[two], masks[two], np.random.default_rng(s)) for s in range(24)])
    for j, i in enumerate(two):
        assert set(picks[:, j]) == set(np.flatnonzero(masks[i])[flags[i]]), i


def test_heuristic_batch_seeds_its_ties_from_one_draw_of_the_callers_stream():
    game, agent, obs, masks, _, _ = _family("block_4p")
    batch = HeuristicBatch(game, seed=0)
    rng = np.random.default_rng(3)
    got = batch.act_batch(obs[:300], masks[:300], rng)
    ref = np.random.default_rng(3)
    assert (agent.act_batch(obs[:300], masks[:300], np.random.default_rng(int(ref.integers(2**62)))) == got).all()
    assert rng.random() == ref.random()  # the caller's stream moved by exactly that one draw


def test_bad_rows_name_the_problem():
    game = make_game("sum7_v0")
    agent = make_heuristic(game, seed=0)
    obs = np.zeros(game.obs_size, np.float32)
    with pytest.raises(IllegalActionError, match="no legal action"):
        agent.act(obs, np.zeros(game.num_actions, np.int8))
    with pytest.raises(StateError, match=rf"shape \(rows, {game.obs_size}\).*got \(3,\)"):
        agent.act(np.zeros(3, np.float32), np.ones(game.num_actions, np.int8))
    with pytest.raises(StateError, match=r"masks of shape"):
        agent.act_batch(np.zeros((2, game.obs_size), np.float32), np.ones((3, game.num_actions), np.int8),
                        np.random.default_rng(0))
