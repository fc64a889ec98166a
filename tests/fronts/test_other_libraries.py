"""Other RL libraries run our envs unchanged (issue 15, criterion 5).

Two ways people plug a PettingZoo AEC env with action masks into a library they already use,
each driven here on every registered env exactly as shipped (``domino_envs.<name>.env()`` or
``domino_envs.make(name)``), with no adapter of ours in between:

- PettingZoo's "SB3: Action Masked PPO" tutorial pattern: a small user-side wrapper that is both a
  PettingZoo ``BaseWrapper`` and a ``gymnasium.Env`` (reset/step for the seat to act, the mask
  through ``action_mask()``), then sb3-contrib's ``ActionMasker`` and ``MaskablePPO``, one policy
  playing every seat.
- Tianshou's ``PettingZooEnv`` in its ``DummyVectorEnv``, collected by its ``Collector`` with a
  ``MultiAgentPolicy`` of masked random policies.

Our env raises on an illegal action (the default ``illegal_action="raise"``), so a run that finishes
proves every action was legal; each library also gets a run with the mask ignored, which must raise,
so these tests can fail. Budgets are tiny: a few hundred steps per env.
"""
from __future__ import annotations

import importlib

import gymnasium
import numpy as np
import pettingzoo.utils
import pytest

import domino_envs
from domino_envs import IllegalActionError

ENV_NAMES = domino_envs.game_names()
STEPS = 300


def test_every_env_is_covered():
    assert sorted(ENV_NAMES) == sorted(
        ["draw_v0", "block_v0", "seven_toed_pete_v0", "racehorse_v0", "sum7_v0", "magic7_v0"])


# ------------------------------------------------------------------ PettingZoo's SB3 tutorial pattern
class SB3ActionMaskWrapper(pettingzoo.utils.BaseWrapper, gymnasium.Env):
    """The user-side wrapper of PettingZoo's SB3 action-masking tutorial, in its shape: a gymnasium
    face for whichever seat is to act, so one single-agent policy plays every seat.

    reset() fixes the spaces to the first agent's (the mask stripped from the observation) and
    returns the seat to act's observation; step() steps the AEC env and returns the next seat to
    act's observation with the reward, termination, truncation and info of the seat that acted.
    (So the learner hears only the acting seat's reward: the other seats' rewards at the end of a
    hand reach no one. That is the tutorial's design, not the env's; SingleSeatEnv and the vector
    env give every seat its own.)"""

    def reset(self, seed=None, options=None):
        super().reset(seed, options)
        first = self.possible_agents[0]
        self.observation_space = super().observation_space(first)["observation"]
        self.action_space = super().action_space(first)
        return self.observe(self.agent_selection), {}

    def step(self, action):
        actor = self.agent_selection
        super().step(action)
        return (self.observe(self.agent_selection), self._cumulative_rewards[actor],
                self.terminations[actor], self.truncations[actor], self.infos[actor])

    def observe(self, agent):
        return super().observe(agent)["observation"]

    def action_mask(self):
        return super().observe(self.agent_selection)["action_mask"]


class MaskIgnoredWrapper(SB3ActionMaskWrapper):
    """The same wrapper with a broken mask (every action offered): the env must refuse the run."""

    def action_mask(self):
        return np.ones_like(super().action_mask())


def mask_fn(env):
    return env.action_mask()


def train_tutorial_style(wrapper_cls, name: str, steps: int):
    """The tutorial's training recipe with tiny budgets: wrap, reset (fixes the spaces), ActionMasker,
    MaskablePPO on an MLP, learn. (SB3 seeds python's, numpy's and torch's global RNGs: callers run
    it inside `seeded_globals`, which puts them back.)"""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.wrappers import ActionMasker

    env = wrapper_cls(importlib.import_module(f"domino_envs.{name}").env())
    env.reset(seed=0)
    env = ActionMasker(env, mask_fn)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [16]})
    return model.learn(total_timesteps=steps)


def play_tutorial_style(model, name: str, games: int) -> list[dict]:
    """The tutorial's evaluation loop on the plain AEC env: the model (with the mask) plays the
    second seat, the other seats sample a legal action from their action space; each game stops at
    the first done agent, whose `env.rewards` are the game's result."""
    env = importlib.import_module(f"domino_envs.{name}").env()
    results = []
    for game in range(games):
        env.reset(seed=game)
        for agent in env.possible_agents:
            env.action_space(agent).seed(game)
        for agent in env.agent_iter():
            obs, reward, termination, truncation, info = env.last()
            observation, action_mask = obs.values()
            if termination or truncation:
                results.append(dict(env.rewards))
                break
            if agent == env.possible_agents[1]:
                action = int(model.predict(observation, action_masks=action_mask, deterministic=True)[0])
            else:
                action = env.action_space(agent).sample(action_mask)
            env.step(action)
    return results


@pytest.mark.parametrize("name", ENV_NAMES)
def test_sb3_tutorial_pattern_trains_maskable_ppo(name):
    from domino_training.learners.sb3 import seeded_globals

    with seeded_globals(0, threads=1):
        model = train_tutorial_style(SB3ActionMaskWrapper, name, STEPS)
        results = play_tutorial_style(model, name, games=3)
    assert model.num_timesteps >= STEPS
    episodes = list(model.ep_info_buffer)  # SB3's Monitor: one entry per finished episode
    assert episodes, f"{name}: no episode ended in {model.num_timesteps} steps"
    assert any(ep["r"] != 0 for ep in episodes), f"{name}: no reward reached the learner"
    assert len(results) == 3 and any(any(r.values()) for r in results)


def test_sb3_tutorial_pattern_with_mask_ignored_is_refused():
    from domino_training.learners.sb3 import seeded_globals

    with seeded_globals(0, threads=1), pytest.raises(IllegalActionError):
        train_tutorial_style(MaskIgnoredWrapper, "draw_v0", 64)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_sb3_tutorial_pattern_masked_random_play(name):
    """A few hundred masked-random steps through the wrapper's gymnasium face (actions sampled as
    the tutorial's evaluation does, ``action_space.sample(mask)``): never an error, observations in
    the space, a legal action whenever a seat is to act, episodes end with every seat done."""
    env = SB3ActionMaskWrapper(domino_envs.make(name))
    obs, info = env.reset(seed=1)
    env.action_space.seed(1)
    finals = []
    for _ in range(STEPS):
        assert env.observation_space.contains(obs)
        mask = env.action_mask()
        assert mask.dtype == np.int8 and mask.any(), f"{name}: {env.agent_selection} is to act with no legal action"
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample(mask))
        if terminated or truncated:
            assert env.observation_space.contains(obs)
            assert all(env.terminations[a] or env.truncations[a] for a in env.agents)
            assert not env.action_mask().any()  # nobody is to act in a finished game
            finals.append([env.rewards[a] for a in env.possible_agents])
            obs, info = env.reset()
    assert len(finals) >= 2, f"{name}: {len(finals)} episodes ended in {STEPS} steps"
    assert any(any(r) for r in finals), f"{name}: every finished episode paid nothing"


# ------------------------------------------------------------------ Tianshou's PettingZooEnv
def masked_random_policy(action_space, rng: np.random.Generator, use_mask: bool = True):
    """A tianshou Policy that picks uniformly among the legal actions (``batch.obs.mask``) with a
    seeded Generator (or among all actions when `use_mask` is False, to prove the env refuses)."""
    from tianshou.algorithm.algorithm_base import Policy
    from tianshou.data import Batch

    class MaskedRandom(Policy):
        def forward(self, batch, state=None, **kwargs):
            mask = np.asarray(batch.obs.mask, dtype=bool)
            if not use_mask:
                mask = np.ones_like(mask)
            return Batch(act=np.array([rng.choice(np.flatnonzero(row)) for row in mask]))

    return MaskedRandom(action_space=action_space)


def collect_with_tianshou(name: str, steps: int, use_mask: bool = True, num_envs: int = 2):
    """Tianshou's own machinery end to end: PettingZooEnv over the shipped env, DummyVectorEnv,
    MultiAgentPolicy of one policy per agent, Collector into a VectorReplayBuffer."""
    from tianshou.algorithm.multiagent.marl import MultiAgentPolicy
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv

    venv = DummyVectorEnv([lambda: PettingZooEnv(domino_envs.make(name)) for _ in range(num_envs)])
    venv.seed(list(range(10, 10 + num_envs)))
    probe = PettingZooEnv(domino_envs.make(name))
    rng = np.random.default_rng(0)
    policy = MultiAgentPolicy({agent: masked_random_policy(probe.action_space, rng, use_mask)
                               for agent in probe.agents})
    buffer = VectorReplayBuffer(steps * 2, num_envs)
    collector = Collector(policy, venv, buffer)
    collector.reset()
    stats = collector.collect(n_step=steps)
    return stats, buffer, probe


@pytest.mark.parametrize("name", ENV_NAMES)
def test_tianshou_pettingzoo_env_collects(name):
    stats, buffer, probe = collect_with_tianshou(name, STEPS)
    assert stats.n_collected_steps >= STEPS
    assert stats.n_collected_episodes >= 1, f"{name}: no episode ended in {stats.n_collected_steps} steps"
    returns = np.asarray(stats.returns)  # one row per finished episode, one column per agent
    assert returns.shape == (stats.n_collected_episodes, len(probe.agents))
    assert np.any(returns != 0), f"{name}: every finished episode paid nothing"
    data, _ = buffer.sample(0)  # every stored transition
    assert len(data) == stats.n_collected_steps
    assert set(data.obs.agent_id) <= set(probe.agents)
    mask = np.asarray(data.obs.mask, dtype=bool)
    assert mask[np.arange(len(data)), data.act.astype(int)].all()  # each action legal where taken
    assert int(np.sum(data.terminated | data.truncated)) == stats.n_collected_episodes


def test_tianshou_with_mask_ignored_is_refused():
    with pytest.raises(IllegalActionError):
        collect_with_tianshou("draw_v0", 64, use_mask=False)


def test_tianshou_seeding_reaches_the_env():
    """`DummyVectorEnv.seed` (PettingZooEnv falls back to ``reset(seed=...)``) makes a collection
    repeatable: the same seeds give the same transitions."""
    first, second = (collect_with_tianshou("draw_v0", 100)[1].sample(0)[0] for _ in range(2))
    assert np.array_equal(first.act, second.act) and np.array_equal(first.obs.obs, second.obs.obs)
    assert np.array_equal(first.rew, second.rew)
