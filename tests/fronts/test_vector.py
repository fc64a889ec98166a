"""The vector env is the same game as the engine and the AEC env, transition for transition."""
from __future__ import annotations

import numpy as np
import pytest

import domino_envs
from domino_envs import make_game
from domino_envs.core import H_TURN
from domino_envs.dispatch import GAME_IDS
from domino_envs.fronts import deal_to_decision  # the deal-again rule the vector env follows
from domino_envs.registry import GAMES
from domino_envs.vector import VectorEnv, make_vec, next_episode_seed
from tests.env_cases import CONFIG_IDS, CONFIGS
from tests.helpers import vector_reference_rows

VECTOR_CONFIGS = [(n, k) for n, k in CONFIGS if GAMES[n][1] in GAME_IDS]
VECTOR_IDS = [i for (n, k), i in zip(CONFIGS, CONFIG_IDS) if GAMES[n][1] in GAME_IDS]


def test_every_registered_game_has_vector_kernels():
    missing = sorted({name for name in domino_envs.game_names() if GAMES[name][1] not in GAME_IDS})
    assert not missing, f"games without compiled dispatch (dispatch.py): {missing}"


# compiled functions of a game module that may count references: the search and test kernels
# (they allocate) and magic7's _check_code, a helper of its _check_kernel
COUNTING_ALLOWED = {"_sample_kernel", "_legal_set_kernel", "_check_kernel", "_check_code"}


def test_game_functions_follow_the_inlining_policy():
    """dispatch.py's policy, which the vector loops' speed rests on: a game's compiled functions
    are inlined or compiled with _nrt=False, so calling one out of line from the vector loop does
    no atomic reference counting (a plain njit helper on the step path cost up to ~10%)."""
    import sys

    from numba.core.registry import CPUDispatcher

    from domino_envs.dispatch import ENGINES

    for engine in ENGINES:
        module = sys.modules[engine.__module__]
        counting = sorted(
            name for name, f in vars(module).items()
            if isinstance(f, CPUDispatcher) and f.__module__ == module.__name__
            and "inline" not in f.targetoptions and f.targetoptions.get("_nrt", True)
            and name not in COUNTING_ALLOWED
        )
        assert not counting, f"{module.__name__}: plain njit (reference counting) functions {counting}"


@pytest.mark.parametrize("name,kwargs", VECTOR_CONFIGS, ids=VECTOR_IDS)
def test_vector_env_equals_engine(name, kwargs):
    n_envs, target_games = 32, 2000
    venv = make_vec(name, n_envs, seed=7, **kwargs)
    game = make_game(name, **kwargs)
    refs = vector_reference_rows(game, n_envs, seed=7)
    obs, masks, seats = venv.reset()
    rng = np.random.default_rng(1)
    finished = 0
    while finished < target_games:
        for i, s in enumerate(refs):
            assert seats[i] == s[H_TURN]
            assert np.array_equal(obs[i], game.observe(s, int(s[H_TURN])))
            assert np.array_equal(masks[i], game.legal_mask(s))
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        obs, masks, seats, rewards, term, trunc, info = venv.step(actions)
        done_envs = []
        for i, s in enumerate(refs):
            game.step(s, int(actions[i]))
            assert np.allclose(rewards[i], game.rewards(s))
            over = game.is_over(s)
            assert bool(term[i] or trunc[i]) == over
            if over:
                done_envs.append(i)
                deal_to_decision(game, s, int(next_episode_seed(s)))
        assert info["final_index"].tolist() == done_envs
        finished += len(done_envs)


def test_aec_env_equals_engine():
    """The AEC env shows exactly the engine's observations, masks and rewards."""
    for name, kwargs in CONFIGS:
        env = domino_envs.make(name, **kwargs)
        game = make_game(name, **kwargs)
        rng = np.random.default_rng(0)
        for episode in range(5):
            env.reset(seed=episode)
            ref = env._state.copy()  # the deal itself is the engine's (seeded by mix_seed)
            while not game.is_over(ref):
                seat = int(ref[H_TURN])
                o = env.observe(env.possible_agents[seat])
                assert env.agent_selection == env.possible_agents[seat]
                assert np.array_equal(o["observation"], game.observe(ref, seat))
                assert np.array_equal(o["action_mask"], game.legal_mask(ref))
                a = int(rng.choice(np.flatnonzero(o["action_mask"])))
                env.step(a)
                game.step(ref, a)
                assert [env.rewards[p] for p in env.possible_agents] == game.rewards(ref).tolist()
            assert all(env.terminations.values()) or all(env.truncations.values())


def test_vector_env_is_deterministic_and_zero_copy_to_torch():
    import torch
    runs = []
    for _ in range(2):
        venv = make_vec("draw_v0", 16, seed=3)
        obs, masks, seats = venv.reset()
        rng = np.random.default_rng(0)
        trace = []
        for _ in range(50):
            a = (rng.random(masks.shape) * masks).argmax(axis=1)
            obs, masks, seats, rewards, *_ = venv.step(a)
            trace.append((obs.copy(), rewards.copy()))
        runs.append(trace)
    assert all(np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1]) for x, y in zip(*runs))
    t = torch.from_numpy(obs)
    obs[0, 0] = 123.0
    assert t[0, 0].item() == 123.0  # shares memory


def test_vector_env_pickles_and_continues_identically():
    import pickle

    venv = make_vec("draw_v0", 8, seed=1, num_players=3)
    obs, masks, seats = venv.reset()
    rng = np.random.default_rng(0)
    for _ in range(25):
        obs, masks, seats, *_ = venv.step((rng.random(masks.shape) * masks).argmax(axis=1))
    copy = pickle.loads(pickle.dumps(venv))
    for _ in range(40):  # long enough for games to finish and be dealt again from their streams
        a = (rng.random(masks.shape) * masks).argmax(axis=1)
        mine = [x.copy() for x in venv.step(a)[:6]]
        theirs = copy.step(a)[:6]
        masks = mine[1]
        assert all(np.array_equal(x, y) for x, y in zip(mine, theirs))
    assert np.array_equal(venv.states, copy.states)
    r1, r2 = venv.reset(seed=4), copy.reset(seed=4)
    assert np.array_equal(r1[0], r2[0])


def test_vector_env_bad_input():
    with pytest.raises(ValueError, match="num_envs=0 must be a positive integer"):
        VectorEnv("draw_v0", 0)
    with pytest.raises(domino_envs.ConfigError, match="unknown config key"):
        make_vec("draw_v0", 4, players=3)
    venv = make_vec("draw_v0", 4, seed=0)
    obs, masks, seats = venv.reset()
    with pytest.raises(domino_envs.IllegalActionError, match=r"shape \(4,\)"):
        venv.step(np.zeros(3, dtype=np.int64))
    bad = masks.argmax(axis=1)
    bad[2] = int(np.flatnonzero(masks[2] == 0)[0])
    with pytest.raises(domino_envs.IllegalActionError, match=r"env 2: .* is illegal .*envs 0\.\.1 of this batch"):
        venv.step(bad)
