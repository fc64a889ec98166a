"""PettingZoo API conformance for every registered configuration, plus what api_test only warns about."""
from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import domino_envs
from tests.env_cases import CONFIG_IDS, CONFIGS


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=CONFIG_IDS)
def test_pettingzoo_api_and_seed(name, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(domino_envs.make(name, **kwargs), num_cycles=300)
        seed_test(functools.partial(domino_envs.make, name, **kwargs), num_cycles=300)


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=CONFIG_IDS)
def test_masks_hard(name, kwargs):
    """Mask dtype int8, never all-zero for the agent to act, all-zero for every other agent."""
    env = domino_envs.make(name, **kwargs)
    rng = np.random.default_rng(7)
    for episode in range(20):
        env.reset(seed=episode)
        for agent in env.agent_iter(max_iter=5000):
            obs, _, term, trunc, _ = env.last()
            mask = obs["action_mask"]
            assert mask.dtype == np.int8
            assert obs["observation"].dtype == np.float32
            assert env.observation_space(agent)["observation"].contains(obs["observation"])
            for other in env.agents:
                if other != agent:
                    assert not env.observe(other)["action_mask"].any(), "mask set off turn"
            if term or trunc:
                assert not mask.any(), "mask set after the end"
                env.step(None)
                continue
            assert mask.any(), "all-zero mask for the agent to act"
            legal = np.flatnonzero(mask)
            env.step(int(rng.choice(legal)))


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=CONFIG_IDS)
def test_rewards_zero_sum_and_state_view(name, kwargs):
    env = domino_envs.make(name, **kwargs)
    rng = np.random.default_rng(3)
    for episode in range(10):
        env.reset(seed=100 + episode)
        total = {a: 0.0 for a in env.possible_agents}
        assert env.state().shape == env.state_space.shape
        while not any(env.terminations.values()) and not any(env.truncations.values()):
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
            assert abs(sum(env.rewards.values())) < 1e-9
            for a in env.possible_agents:
                total[a] += env.rewards[a]
        assert abs(sum(total.values())) < 1e-9


@pytest.mark.parametrize("name", sorted({n for n, _ in CONFIGS}))
def test_render_ansi_and_observation_decoder(name):
    env = domino_envs.make(name, render_mode="ansi")
    env.reset(seed=1)
    text = env.render()
    assert isinstance(text, str) and "seat" in text
    obs = env.observe(env.agent_selection)
    pieces = env.decode_observation(obs)
    names = [p for p, _ in env.game.obs_pieces()]
    assert list(pieces) == names
    assert sum(v.size for v in pieces.values()) == obs["observation"].size
    for a in env.legal_actions():
        assert isinstance(env.describe_action(a), str)


def test_registry_lists_every_game_module():
    assert {"draw_v0", "block_v0"} <= set(domino_envs.game_names())
    from domino_envs import block_v0, draw_v0  # noqa: F401 - the PettingZoo import style works
    assert draw_v0.env(num_players=3).num_agents == 3


@pytest.mark.parametrize("name", sorted({n for n, _ in CONFIGS}))
def test_pettingzoo_render_test(name, capsys):
    from pettingzoo.test import render_test

    render_test(functools.partial(domino_envs.make, name))
    assert "seat" in capsys.readouterr().out  # "human" printed the table


def test_seeded_reset_deals_again_when_forced_moves_finish_the_deal():
    """A seeded reset never hands back a finished game. No shipped config with a decision finishes
    a deal at once on the engine alone, so the engine here marks chosen deals finished: those are
    dealt again from the row's stream; the others are still mix_seed(seed, k)."""
    from domino_envs.core import H_DONE, H_RNG, H_TURN
    from domino_envs.rng import mix_seed, next_seed

    game = domino_envs.make_game("draw_v0")
    doomed = {mix_seed(5, k) for k in (1, 4)}
    real_reset = game.reset

    def reset(state, seed):
        real_reset(state, seed)
        if seed in doomed:  # as if forced moves had played this deal out
            state[H_DONE], state[H_TURN] = 1, -1

    game.reset = reset
    env = domino_envs.DominoEnv(game)
    raw = game.new_state()
    for k in range(6):
        env.reset(seed=5) if k == 0 else env.reset()
        assert not any(env.terminations.values()) and not any(env.truncations.values())
        assert env.observe(env.agent_selection)["action_mask"].any()
        reset(raw, mix_seed(5, k))
        if k in (1, 4):
            reset(raw, int(next_seed(raw, H_RNG)))  # the retry: drawn from the finished row
        assert np.array_equal(raw, env._state)


def test_a_config_without_decisions_is_refused_not_hung():
    env = domino_envs.make("draw_v0", hand_size=1, num_players=4)
    with pytest.raises(domino_envs.ConfigError, match=r"1000 deals in a row .*hand_size=1"):
        env.reset(seed=0)


def test_reset_with_a_deal_is_atomic():
    """A rejected deal leaves the env exactly as it was; an accepted one replaces the whole episode."""
    env = domino_envs.make("draw_v0", match=True, target=100)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(6):
        env.step(int(rng.choice(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
    before = (env._state.copy(), env._episode, env._seed_base, dict(env.rewards), dict(env._cumulative_rewards),
              env.agent_selection, list(env.agents))
    with pytest.raises(domino_envs.DealError):
        env.reset(seed=3, options={"deal": {"hands": [[(1, 2)], [(1, 2)]]}})
    with pytest.raises(domino_envs.ConfigError):
        env.reset(seed=1.5)
    after = (env._state, env._episode, env._seed_base, env.rewards, env._cumulative_rewards, env.agent_selection,
             env.agents)
    assert np.array_equal(before[0], after[0]) and before[1:] == after[1:]
    deal = {"hands": [[(1, 2), (3, 4), (0, 0)], [(5, 6), (2, 2), (6, 6)]]}
    env.reset(seed=3, options={"deal": deal})
    fresh = domino_envs.make("draw_v0", match=True, target=100)
    fresh.reset(seed=3, options={"deal": deal})
    assert np.array_equal(env._state, fresh._state)  # nothing of the old match carried over
    assert env._episode == fresh._episode == 1


def test_a_deal_finished_before_any_decision_is_refused():
    env = domino_envs.make("block_v0")
    env.reset(seed=0)
    state = env._state.copy()
    with pytest.raises(domino_envs.DealError, match="played to the end by forced moves"):
        env.reset(seed=1, options={"deal": {"hands": [[(6, 6)], [(2, 3)]]}})
    assert np.array_equal(env._state, state)


def test_aec_env_legal_actions_do_not_share_a_buffer():
    """The env reads no per-Game scratch buffer (two envs on one Game in two threads would race on
    it): with Game._mask_buf made unusable, legal_actions() still answers."""
    game = domino_envs.make_game("draw_v0")
    poisoned = np.zeros(game.num_actions, dtype=np.int8)
    poisoned.flags.writeable = False
    game._mask_buf = poisoned
    a, b = domino_envs.DominoEnv(game), domino_envs.DominoEnv(game)
    a.reset(seed=0)
    b.reset(seed=1)
    for env in (a, b):
        assert env.legal_actions() == np.flatnonzero(env.observe(env.agent_selection)["action_mask"]).tolist()
