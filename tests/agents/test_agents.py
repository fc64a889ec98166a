"""Baseline agents: legal play in every registered game, no hidden-state reads, and that the
cheap baselines order as they should on a small duplicate-deal run.

The leakage test hands each agent the observation (and, for searching agents, the state) of a
`sample_hidden` redraw of its own seat's view instead of the real one: with the same seed it must
choose exactly the same action, since nothing it may know differs between the two.
"""
from __future__ import annotations

import numpy as np
import pytest

import domino_envs
from domino_agents import GreedyAgent, RandomAgent
from domino_agents.registry import make_agent, parse_spec
from domino_envs.rng import mix_seed
from domino_training.evaluate import evaluate, play_hand

GAMES = domino_envs.game_names()
SPECS = ["random", "greedy", "heuristic", "pimc:n=4"]
HANDS = {"random": 12, "greedy": 12, "heuristic": 12, "pimc:n=4": 4}


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("name", GAMES)
def test_agents_play_only_legal_actions(name, spec):
    """Every seat played by the agent over seeded hands; play_hand raises on any illegal choice."""
    game = domino_envs.make_game(name)
    state = game.new_state()
    n = game.num_players
    agents = [make_agent(spec, game) for _ in range(n)]
    decisions = 0
    orig_act = type(agents[0]).act

    def counting(self, obs, mask):
        nonlocal decisions
        a = orig_act(self, obs, mask)
        assert mask[a] == 1, f"{spec} chose illegal {a} ({game.describe_action(a)})"
        decisions += 1
        return a

    for a in agents:
        a.act = counting.__get__(a)
    for h in range(HANDS[spec]):
        totals = play_hand(game, state, agents, mix_seed(11, h), [h * 10 + k for k in range(n)])
        assert np.isfinite(totals).all()
    assert decisions > 0


def _decision_points(game, seed, count):
    """States at decisions of a seeded random game (copies), up to `count` of them."""
    state = game.new_state()
    game.reset(state, seed)
    rng = np.random.default_rng(seed)
    out = []
    while not game.is_over(state) and len(out) < count:
        mask = game.legal_mask(state)
        if mask.sum() > 1:
            out.append(state.copy())
        legal = np.flatnonzero(mask)
        game.step(state, int(legal[rng.integers(legal.size)]))
    return out


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("name", GAMES)
def test_agents_never_read_hidden_state(name, spec):
    game = domino_envs.make_game(name)
    checked = 0
    differs = 0
    for seed in range(3):
        for i, real in enumerate(_decision_points(game, seed, 6)):
            seat = game.current_seat(real)
            fake = game.sample_hidden(real, seat, np.random.default_rng(1000 + i))
            differs += not np.array_equal(fake, real)
            choices = []
            for s in (real, fake):
                obs = game.observe(s, seat)
                mask = game.legal_mask(s)
                agent = make_agent(spec, game)
                agent.reset(seed * 100 + i)
                if getattr(agent, "searches", False):
                    agent.observe_state(s, seat)
                choices.append(agent.act(obs, mask))
            assert choices[0] == choices[1], f"{spec} on {name}: choice depends on hidden tiles"
            checked += 1
    assert checked >= 6
    assert differs > 0, "the resampled states never differed from the real ones: the test would prove nothing"


def test_greedy_prefers_heaviest_tile():
    game = domino_envs.make_game("draw_v0")
    mask = np.zeros(game.num_actions, dtype=np.int8)
    light, heavy = game.encode_action(0, 1, 0), game.encode_action(5, 6, 1)
    mask[[light, heavy]] = 1
    obs = np.zeros(game.obs_size, dtype=np.float32)
    assert GreedyAgent(game, seed=0).act(obs, mask) == heavy


def test_action_table_matches_describe_action():
    """Each engine's action table agrees with its own describe_action."""
    from domino_envs.actions import DRAW, JOKER, KILL, PASS, PLACE
    from domino_envs.tiles import TILE_A, TILE_B

    words = {PLACE: ("play", "place"), JOKER: ("joker",), DRAW: ("draw",), KILL: ("kill",), PASS: ("pass",)}
    for name in GAMES:
        game = domino_envs.make_game(name)
        table = game.action_table()
        for a in range(game.num_actions):
            text = game.describe_action(a).lower()
            k, t = int(table.kind[a]), int(table.tile[a])
            assert text.startswith(words[k]), (name, a, text)
            if table.family == "magic7":
                if k in (PLACE, KILL) and t < 52:
                    rank = "A23456789TJQK"[t % 13]
                    assert text.split()[-1][:-1].upper().replace("10", "T") == rank, (name, a, text)
                    assert text.split()[-1][-1].upper() == "CDHS"[t // 13], (name, a, text)
            elif t >= 0:
                assert f"{TILE_A[t]}-{TILE_B[t]}" in text, (name, a, text)
                arm = int(table.arm[a])
                if table.family == "line" and table.arms > 2:
                    assert f"arm {arm}" in text, (name, a, text)
                else:
                    assert ("on the left" in text) == (arm == 0), (name, a, text)


def test_random_agent_rejects_empty_mask():
    game = domino_envs.make_game("draw_v0")
    with pytest.raises(ValueError, match="no legal action"):
        RandomAgent(game, seed=0).act(np.zeros(game.obs_size, np.float32), np.zeros(game.num_actions, np.int8))


def test_agent_spec_errors_name_the_problem():
    game = domino_envs.make_game("draw_v0")
    with pytest.raises(ValueError, match="known agents"):
        make_agent("alphazero", game)
    with pytest.raises(ValueError, match="unknown parameter"):
        make_agent("pimc:depth=3", game)
    with pytest.raises(ValueError, match="not key=value"):
        parse_spec("pimc:n")
    with pytest.raises(ValueError, match="rollout"):
        make_agent("pimc:rollout=smart", game)
    with pytest.raises(ValueError, match="positive integer"):
        make_agent("pimc:n=0", game)


def test_pimc_needs_observe_state():
    game = domino_envs.make_game("draw_v0")
    state = _decision_points(game, 0, 1)[0]
    agent = make_agent("pimc:n=2", game, seed=0)
    with pytest.raises(RuntimeError, match="observe_state"):
        agent.act(game.observe(state, game.current_seat(state)), game.legal_mask(state))


def test_greedy_and_heuristic_beat_random_on_draw():
    """A small duplicate-deal run: both baselines out-earn random and out-win it, each interval clear of
    random's level (a point estimate of one seeded run could sit above it by luck)."""
    report = evaluate("draw_v0", ["greedy", "heuristic", "random"], deals=1500, seed=3,
                      pairs=[("greedy", "random"), ("heuristic", "random")], progress=False)
    for agent in ("greedy", "heuristic"):
        m = report.matchups[(agent, "random")]
        assert m.reward_stat.lo > 0.0, (agent, m.reward_stat)
        assert m.win_stat.lo > 0.5, (agent, m.win_stat)


def test_rllib_agent_refuses_what_is_not_a_checkpoint_of_this_game(tmp_path):
    """rllib:checkpoint=DIR without its domino_policy.npz, with a corrupt one, or for another game: a
    CheckpointError naming the problem, without Ray or torch (the round trip from a real RLlib
    checkpoint runs in tests/learners/test_rllib.py, with the extra)."""
    from domino_agents.rllib_agent import POLICY_FILE
    from domino_agents.trained import CheckpointError, policy_meta, save_policy

    game = domino_envs.make_game("draw_v0")
    with pytest.raises(CheckpointError, match="needs checkpoint=DIR"):
        make_agent("rllib", game)
    with pytest.raises(CheckpointError, match=f"has no {POLICY_FILE}"):
        make_agent(f"rllib:checkpoint={tmp_path}", game)
    (tmp_path / POLICY_FILE).write_bytes(b"not a zip")
    with pytest.raises(CheckpointError, match="is not a readable policy file"):
        make_agent(f"rllib:checkpoint={tmp_path}", game)
    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(8, game.obs_size)), np.zeros(8)), (rng.normal(size=(game.num_actions, 8)),
                                                                    np.zeros(game.num_actions))]
    save_policy(tmp_path / POLICY_FILE, layers, {**policy_meta(game, (8,), "rllib", 200), "activation": "tanh"})
    with pytest.raises(CheckpointError, match="trained on 'draw_v0', not 'sum7_v0'"):
        make_agent(f"rllib:checkpoint={tmp_path}", domino_envs.make_game("sum7_v0"))
    agent = make_agent(f"rllib:checkpoint={tmp_path}", game)
    x = rng.normal(size=game.obs_size).astype(np.float32)
    by_hand = layers[1][0] @ np.tanh(layers[0][0] @ x) + layers[1][1]  # tanh, as the exported module has
    assert np.allclose(agent.logits(x), by_hand, atol=1e-4)
    save_policy(tmp_path / POLICY_FILE, layers, {**policy_meta(game, (8,), "rllib", 200), "activation": "gelu"})
    with pytest.raises(CheckpointError, match="activation 'gelu' is not one of"):
        make_agent(f"rllib:checkpoint={tmp_path}", game)
