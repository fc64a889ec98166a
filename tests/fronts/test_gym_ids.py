"""The gymnasium ids (domino_envs/gym_ids.py): one per env, registered on `import domino_envs` without
building anything, made with options as `gymnasium.make` kwargs, passing gymnasium's env checker, and
trained on by SB3's `make_vec_env` + MaskablePPO; a bad kwarg is a ConfigError naming it."""
from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest

import domino_envs
from domino_agents import GreedyAgent, RandomAgent
from domino_agents.heuristics import heuristic_class
from domino_envs.errors import ConfigError
from domino_envs.gym_ids import ENTRY_POINT, gym_id, gym_ids
from domino_envs.wrappers import SingleSeatEnv

# a rule key per game that differs from its default, to see that make() kwargs reach the engine
RULE_KWARGS = {
    "block_v0": {"num_players": 3},
    "draw_v0": {"num_players": 3},
    "magic7_v0": {"num_players": 3},
    "racehorse_v0": {"num_players": 3},
    "seven_toed_pete_v0": {"double_extra_turn": True},
    "sum7_v0": {"num_players": 3},
}


def test_every_env_has_an_id_whose_version_follows_its_suffix():
    ids = gym_ids()
    assert sorted(ids) == domino_envs.game_names() == sorted(RULE_KWARGS)
    assert ids["draw_v0"] == "domino_envs/draw-v0"
    assert ids["seven_toed_pete_v0"] == "domino_envs/seven_toed_pete-v0"
    for name, env_id in ids.items():
        spec = gymnasium.spec(env_id)
        assert (spec.namespace, f"{spec.name}_v{spec.version}") == ("domino_envs", name)
        assert spec.entry_point == ENTRY_POINT and spec.kwargs == {"game": name}
    with pytest.raises(ConfigError, match="unknown game 'chess_v0'"):
        gym_id("chess_v0")


def test_import_registers_the_ids_without_building_a_game():
    """A fresh interpreter: after `import domino_envs` every id is in gymnasium's registry, and no game
    module (the compiled kernels) nor anything of domino_agents has been imported."""
    code = ("import sys, gymnasium, domino_envs\n"
            "print(sorted(i for i in gymnasium.registry if i.startswith('domino_envs/')))\n"
            "print(sorted(m for m in sys.modules if m.startswith(('domino_envs.games', 'domino_agents'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    ids, loaded = out.stdout.splitlines()
    assert ids == str(sorted(gym_ids().values()))
    assert loaded == "[]"


def test_registering_twice_adds_nothing_and_warns_nothing():
    before = dict(gymnasium.registry)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        domino_envs.gym_ids.register()
    assert dict(gymnasium.registry) == before


@pytest.mark.parametrize("name", sorted(RULE_KWARGS))
def test_make_every_id_with_kwargs(name):
    """Rule keys, the opponents (a spec), the seat and the seed all arrive; the episode plays to its end
    with legal moves only (illegal_action="raise" would stop it otherwise)."""
    kwargs = RULE_KWARGS[name]
    env = gymnasium.make(gym_id(name), opponents="heuristic", seat=1, seed=7, **kwargs)
    inner = env.unwrapped
    assert isinstance(inner, SingleSeatEnv) and env.spec.id == gym_id(name)
    for key, value in kwargs.items():
        assert getattr(inner.game.config, key) == value
    n = inner.game.num_players
    assert len(inner.opponents) == n - 1
    assert all(type(o) is heuristic_class(inner.game) for o in inner.opponents)
    obs, info = env.reset()
    assert info["seat"] == 1 and obs.shape == env.observation_space.shape
    same, _ = gymnasium.make(gym_id(name), opponents="heuristic", seat=1, seed=7, **kwargs).reset()
    np.testing.assert_array_equal(obs, same)  # seed= reached the env
    done, steps = False, 0
    while not done:
        mask = env.unwrapped.action_masks()
        np.testing.assert_array_equal(mask, info["action_mask"] != 0)
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(mask)[0]))
        done, steps = terminated or truncated, steps + 1
    assert steps >= 1


def test_opponents_as_a_class_a_list_of_specs_and_agents_or_the_default():
    env = gymnasium.make("domino_envs/draw-v0", opponents=GreedyAgent)
    assert [type(o) for o in env.unwrapped.opponents] == [GreedyAgent]
    game = env.unwrapped.game
    mine = RandomAgent(game, seed=3)
    env = gymnasium.make("domino_envs/draw-v0", num_players=3, opponents=["greedy", mine])
    assert type(env.unwrapped.opponents[0]) is GreedyAgent and env.unwrapped.opponents[1] is mine
    env = gymnasium.make("domino_envs/magic7-v0")  # default: random opponents, learner seat rotating
    assert [type(o) for o in env.unwrapped.opponents] == [RandomAgent] * 3
    assert env.unwrapped.seat_mode == "rotate"
    env.reset(seed=0)


@pytest.mark.parametrize("kwargs, message", [
    ({"foo": 1}, r"unknown config key\(s\) \['foo'\]"),
    ({"num_players": 9}, r"num_players=9"),
    ({"seat": 5}, r"seat=5 must be 'rotate' or a seat 0\.\.1"),
    ({"opponents": "nosuch"}, r"opponents='nosuch': unknown agent 'nosuch'"),
    ({"opponents": "pimc:bogus=1"}, r"opponents='pimc:bogus=1'.*unknown parameter\(s\) \['bogus'\]"),
    ({"opponents": 3}, r"opponents=3 must be an agent spec"),
    ({"opponents": ["random", "random"]}, r"need 1 opponents"),
    ({"opponents": [object()]}, r"opponents entry <object"),
    ({"render_mode": "x"}, r"render_mode='x'"),
    ({"illegal_action": "ignore"}, r"illegal_action='ignore'"),
    ({"seed": -1}, r"seed=-1"),
])
def test_bad_kwargs_raise_config_error_naming_the_key(kwargs, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gymnasium's own note on an unknown render_mode
        with pytest.raises(ConfigError, match=message):
            gymnasium.make("domino_envs/draw-v0", **kwargs)


def test_gymnasium_env_checker_passes_on_a_made_env():
    """gymnasium's check_env steps unmasked random actions, so the penalize mode; any warning it gives
    about the env fails the test."""
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make("domino_envs/sum7-v0", opponents="greedy", illegal_action="penalize", render_mode="ansi",
                         num_players=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message=".*No render fps.*")
        check_env(env.unwrapped)


def test_maskable_ppo_learns_on_make_vec_env_of_an_id():
    """SB3's make_vec_env(id, n_envs=2): MaskablePPO finds `action_masks` through the Monitor and
    gymnasium wrappers, so it trains with illegal_action="raise" (one unmasked illegal action would
    raise) and its weights change."""
    import sb3_contrib
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env("domino_envs/draw-v0", n_envs=2, seed=0, env_kwargs={"opponents": "greedy"})
    assert is_masking_supported(venv)
    venv.reset()
    masks = get_action_masks(venv)
    assert masks.shape == (2, 56) and masks.dtype == bool and masks.any(axis=1).all()
    model = sb3_contrib.MaskablePPO("MlpPolicy", venv, n_steps=128, batch_size=64, n_epochs=2, seed=0,
                                    device="cpu", verbose=0, policy_kwargs={"net_arch": [32]})
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    assert any(not np.allclose(b.numpy(), a.detach().numpy()) for b, a in zip(before, model.policy.parameters()))
    obs = venv.reset()
    actions, _ = model.predict(obs, action_masks=get_action_masks(venv), deterministic=True)
    assert all(get_action_masks(venv)[i, int(a)] for i, a in enumerate(actions))


def test_readme_gymnasium_example_runs():
    from pathlib import Path

    from tests.helpers import fenced_blocks, run_snippet

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    (block,) = [b for b in fenced_blocks(readme) if 'gymnasium.make("domino_envs/' in b]
    env = run_snippet(block, "README.md")["env"]
    assert env.spec.id == "domino_envs/draw-v0" and env.unwrapped.game.num_players == 3
    assert env.reset(seed=0)[1]["action_mask"].any()
    for _name, env_id in gym_ids().items():  # the README lists every id
        assert f"`{env_id}`" in readme, env_id
