"""PettingZoo API conformance for every registered configuration, plus what api_test only warns about."""
from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import domino_envs
from tests.configs import CONFIG_IDS, CONFIGS


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
