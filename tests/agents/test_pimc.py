"""PIMC: picks the clearly winning move of a hand-set position, judges wins on the whole episode
(returns so far included), and reports returns in the instance's reward units."""
from __future__ import annotations

import numpy as np
import pytest

from domino_agents.pimc import PIMCAgent
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
