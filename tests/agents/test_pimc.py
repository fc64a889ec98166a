"""PIMC: picks the clearly winning move of a hand-set position, judges wins on the whole episode
(returns so far included), and reports returns in the instance's reward units."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from domino_agents.pimc import PIMCAgent
from domino_agents.registry import make_agent
from domino_envs import make_game
from domino_envs.core import H_TURN
from tests.helpers import deal_state


def _lead_position():
    """Draw Game, 2 players, empty boneyard. Seat 0 leads holding 6-6 and 0-6; seat 1 holds one
    tile (out-of-play tiles make it unknown to seat 0). Whatever seat 1 holds:
    - lead 6-6: seat 1 answers only with a 6 (then goes out); else it passes and 0-6 goes out;
    - lead 0-6: seat 1 answers with a 0 or a 6; else it passes and 6-6 goes out on the 6.
    So 6-6 wins in every deal where 0-6 wins, and more (seat 1 holding a 0 but no 6)."""
    game = make_game("draw_v0")
    state = deal_state(game, [[(0, 6), (6, 6)], [(1, 1)]], stock=[], first=0)
    assert int(state[H_TURN]) == 0
    good, bad = game.encode_action(6, 6, 0), game.encode_action(0, 6, 0)
    assert sorted(game.legal_actions(state)) == sorted([good, bad])
    return game, state, good, bad


@pytest.mark.parametrize("rollout", ["greedy", "random"])
@pytest.mark.parametrize("objective", ["win", "return"])
def test_pimc_picks_the_clearly_winning_lead(rollout, objective):
    game, state, good, bad = _lead_position()
    for seed in range(3):
        agent = PIMCAgent(game, seed=seed, n=32, rollout=rollout, objective=objective)
        agent.observe_state(state, 0)
        legal, (win, ret) = agent.action_values(game.legal_mask(state))
        w = dict(zip(legal.tolist(), win.tolist()))
        assert w[good] > w[bad], w
        agent.observe_state(state, 0)
        assert agent.act(game.observe(state, 0), game.legal_mask(state)) == good


def test_pimc_win_share_counts_the_returns_so_far():
    """A win is the top episode return: with the opponent far ahead nothing wins, far behind
    everything does; even returns so far give the same values as none."""
    game, state, good, bad = _lead_position()
    mask = game.legal_mask(state)

    def values(returns):
        agent = PIMCAgent(game, seed=4, n=16)
        agent.observe_state(state, 0, returns)
        return agent.action_values(mask)[1]

    win0, ret0 = values(None)
    assert 0 < win0.max() < 1
    win, ret = values([0.0, 1000.0])
    assert np.all(win == 0) and np.allclose(ret, ret0)  # the return stays the one from here on
    win, _ = values([1000.0, 0.0])
    assert np.all(win == 1)
    win, ret = values([7.0, 7.0])
    assert np.allclose(win, win0) and np.allclose(ret, ret0)
    with pytest.raises(ValueError, match="returns must be 2 finite numbers"):
        values([1.0])


def test_pimc_returns_use_the_instance_reward_scale(monkeypatch):
    """Magic-7's reward_scale is set per instance (num_players); the class's is 1.0."""
    game = make_game("magic7_v0")
    assert game.reward_scale == 4.0 != type(game).reward_scale
    state = game.new_state()
    game.reset(state, 3)
    agent = PIMCAgent(game, seed=0, n=2)
    agent.observe_state(state, int(state[H_TURN]))

    def fake_search(self, samples, p, seat, legal, seeds, kind, eps, weight, n_act, n_pl, base, out):
        out[:, 1] = 8 * self.n  # each sample's rollout returned 8 header units (= 2 game points)

    monkeypatch.setattr(PIMCAgent, "_run_search", fake_search)
    legal, (win, ret) = agent.action_values(game.legal_mask(state))
    assert np.allclose(ret, 2.0)


# ------------------------------------------------------------------ rollout=policy (a trained actor)
def _reference_policy_values(agent, game, samples, seat, legal, u_rng, base, temperature):
    """action_values of a policy-rollout PIMC recomputed one rollout at a time through the Python
    API: the k-th policy move of sample i's rollouts uses the i-th entry of the k-th `u_rng.random(n)`
    draw, as the lockstep search does, drawn until the longest rollout ends; the softmax is of the
    logits over `temperature` (the test's own, not read back from the agent)."""
    from domino_agents.trained import mlp_logits
    from domino_envs.core import H_REWARD

    n = samples.shape[0]
    draws: list[np.ndarray] = []
    sums = np.zeros((legal.size, 2))
    for i in range(n):
        for j, first in enumerate(legal):
            s = samples[i].copy()
            game.step(s, int(first))
            tot = base + s[H_REWARD:H_REWARD + game.num_players]
            k = 0
            while not game.is_over(s):
                while len(draws) <= k:
                    draws.append(u_rng.random(n))
                mask = game.legal_mask(s)
                logits = mlp_logits(agent._layers, game.observe(s, game.current_seat(s))).astype(np.float64)
                logits /= temperature
                prob = np.where(mask != 0, np.exp(logits - logits[mask != 0].max()), 0.0)
                cum = np.cumsum(prob)
                game.step(s, int(np.searchsorted(cum, draws[k][i] * cum[-1], side="right")))
                tot = tot + s[H_REWARD:H_REWARD + game.num_players]
                k += 1
            top = tot.max()
            if tot[seat] == top:
                sums[j, 0] += 1.0 / np.count_nonzero(tot == top)
            sums[j, 1] += tot[seat] - base[seat]
    return sums[:, 0] / n, sums[:, 1] / n / game.reward_scale


@pytest.mark.parametrize("name,temperature", [("draw_v0", 1.0), ("magic7_v0", 1.0), ("draw_v0", 2.5)])
def test_pimc_policy_rollouts_equal_one_rollout_at_a_time(name, temperature):
    """The lockstep batch gives exactly the sums of each rollout played alone through the game's
    Python API with the same uniform draws (the shipped actor, a few decision points)."""
    game = make_game(name)
    rng = np.random.default_rng(7)
    checked = 0
    for seed in range(6):
        state = game.new_state()
        game.reset(state, seed)
        while not game.is_over(state) and checked < 4:
            mask = game.legal_mask(state)
            if mask.sum() > 1:
                seat = game.current_seat(state)
                agent = PIMCAgent(game, seed=seed, n=3, rollout="policy", policy="trained", temperature=temperature)
                agent.observe_state(state, seat)
                samples = agent._samples.copy()
                twin = np.random.default_rng(seed)  # the agent's stream after its sample draws
                for _ in range(3):
                    from domino_envs.sampling import checked_sample
                    checked_sample(game, state, seat, twin)
                legal, (win, ret) = agent.action_values(mask)
                ref_win, ref_ret = _reference_policy_values(agent, game, samples, seat, legal, twin, agent._base,
                                                            temperature)
                assert np.array_equal(win, ref_win) and np.allclose(ret, ref_ret, rtol=0, atol=1e-12), (win, ref_win)
                checked += 1
                break
            legal = np.flatnonzero(mask)
            game.step(state, int(legal[rng.integers(legal.size)]))
    assert checked == 4


def test_the_rollout_temperature_changes_the_searchs_values():
    """The same search (same seed, samples and draws) at temperature 1 and 50: a softmax of logits over
    50 is nearly uniform, so the rollouts play differently and some action's values change; the
    agent plays what its spec says (temperature 50 read from the spec string)."""
    game = make_game("draw_v0")
    rng = np.random.default_rng(3)
    changed = 0
    for seed in range(4):
        state = game.new_state()
        game.reset(state, seed)
        while not game.is_over(state):
            mask = game.legal_mask(state)
            if mask.sum() > 1:
                seat = game.current_seat(state)
                values = []
                for agent in (PIMCAgent(game, seed=seed, n=8, rollout="policy", policy="trained", temperature=1.0),
                              make_agent("pimc:n=8,rollout=policy,policy=trained,temperature=50", game, seed=seed)):
                    agent.observe_state(state, seat)
                    values.append(agent.action_values(mask)[1][1])
                changed += not np.array_equal(values[0], values[1])
                break
            legal = np.flatnonzero(mask)
            game.step(state, int(legal[rng.integers(legal.size)]))
    assert changed >= 3, changed


def test_pimc_policy_rollouts_find_the_winning_lead():
    game, state, good, bad = _lead_position()
    agent = PIMCAgent(game, seed=1, n=32, rollout="policy", policy="trained")
    agent.observe_state(state, 0)
    legal, (win, _) = agent.action_values(game.legal_mask(state))
    w = dict(zip(legal.tolist(), win.tolist()))
    assert w[good] > w[bad], w


def test_pimc_policy_rollouts_never_read_hidden_state():
    """A redraw of the seat's own view gives the same choice (the leakage test of test_agents,
    for the policy rollout on two engine families)."""
    from tests.agents.test_agents import _decision_points

    for name in ("draw_v0", "sum7_v0"):
        game = make_game(name)
        differs = 0
        for i, real in enumerate(_decision_points(game, 3, 4)):
            seat = game.current_seat(real)
            fake = game.sample_hidden(real, seat, np.random.default_rng(50 + i))
            differs += not np.array_equal(fake, real)
            choices = []
            for s in (real, fake):
                agent = PIMCAgent(game, seed=i, n=4, rollout="policy", policy="trained")
                agent.observe_state(s, seat)
                choices.append(agent.act(game.observe(s, seat), game.legal_mask(s)))
            assert choices[0] == choices[1]
        assert differs > 0


def test_pimc_policy_spec_errors(tmp_path):
    from domino_agents.registry import make_agent
    from domino_envs.errors import CheckpointError

    game = make_game("draw_v0")
    with pytest.raises(CheckpointError, match="rollout=policy needs policy=trained or policy=PATH"):
        make_agent("pimc:rollout=policy", game)
    with pytest.raises(ValueError, match="is for rollout=policy only"):
        make_agent("pimc:rollout=greedy,policy=trained", game)
    with pytest.raises(ValueError, match="temperature=2 is for rollout=policy only"):
        make_agent("pimc:rollout=random,temperature=2", game)
    for bad in ("0", "-1", "inf", "hot"):
        with pytest.raises(ValueError, match="must be a number > 0"):
            make_agent(f"pimc:rollout=policy,policy=trained,temperature={bad}", game)
    with pytest.raises(CheckpointError, match="does not fit draw_v0"):
        make_agent("pimc:rollout=policy,policy=" + str(Path(__file__).parents[2] / "agents/checkpoints/sum7_v0.npz"),
                   game)
    with pytest.raises(CheckpointError):
        make_agent(f"pimc:rollout=policy,policy={tmp_path / 'missing.npz'}", game)
    from domino_agents.trained import load_policy, policy_meta, save_policy, shipped_path

    layers, meta = load_policy(shipped_path("draw_v0"))
    q = save_policy(tmp_path / "q.npz", layers, policy_meta(game, meta["hidden"], "dmc", 0))
    with pytest.raises(CheckpointError, match="is a dmc Q-network"):
        make_agent(f"pimc:rollout=policy,policy={q}", game)


def test_pimc_that_sees_all_searches_the_true_state_and_only_that():
    """`sees=all` (the headroom's ceiling, issue 60): its values are a search whose every determinization is the
    true state, and its choices follow the hidden tiles, which the fair agent's never do."""
    from tests.agents.test_agents import _decision_points

    game = make_game("draw_v0")
    follows_hidden = 0
    for i, real in enumerate(_decision_points(game, 4, 6)):
        seat = game.current_seat(real)
        mask = game.legal_mask(real)
        if mask.sum() < 2:
            continue
        oracle = PIMCAgent(game, seed=i, n=8, rollout="random", sees="all")
        oracle.observe_state(real, seat)
        assert all(np.array_equal(s, real) for s in oracle._samples)
        fair = PIMCAgent(game, seed=i, n=8, rollout="random")
        fair.observe_state(real, seat)
        fair._samples = oracle._samples.copy()  # the same rollouts from the same states
        fair._rng = np.random.default_rng(i)
        oracle._rng = np.random.default_rng(i)
        assert [v.tolist() for v in oracle.action_values(mask)[1]] == [v.tolist() for v in fair.action_values(mask)[1]]
        for k in range(6):
            fake = game.sample_hidden(real, seat, np.random.default_rng(100 * i + k))
            values = []
            for s in (real, fake):
                agent = PIMCAgent(game, seed=i, n=8, rollout="random", sees="all")
                agent.observe_state(s, seat)
                values.append(agent.action_values(mask)[1][0].tolist())
            follows_hidden += values[0] != values[1]
    assert follows_hidden > 0
    with pytest.raises(ValueError, match=r"sees='both' is not allowed; allowed values: \['own', 'all'\]"):
        PIMCAgent(game, sees="both")
