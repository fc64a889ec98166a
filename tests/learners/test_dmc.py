"""DMC's pieces, each on its own (training/learners/dmc.py): the episode bookkeeping of `collect` on a
scripted vector env whose games end when the script says (ties included), the replay ring buffer
wrapping around, the regression target of `learn` and its steps per new decision (sample_reuse), and
epsilon-greedy exploration at its extremes, set through the learner's params as a user sets it."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from scipy import stats

from domino_training.learners import LearnerRun
from domino_training.learners.dmc import DMCTrainer, dmc_settings
from tests.helpers import ScriptedVenv

GAME = "draw_v0"
TINY = {"dmc.num_envs": 2, "dmc.rollout_steps": 4, "dmc.batch_size": 8, "dmc.replay_size": 64,
        "network.hidden": [8], "dmc.torch_threads": 1}


def trainer(tmp_path, config=None, **params) -> DMCTrainer:
    run = LearnerRun(GAME, dict(config or {}), 0, 1024, [1024], tmp_path, {**TINY, **params})
    return DMCTrainer(GAME, dict(config or {}), dmc_settings(run), 0, tmp_path)


def script_two_games(t: DMCTrainer, n: int):
    """Row 0: one game over the 4 steps (seats 0, 1, 0, 1 for 2 players), ending in a tie at the top.
    Row 1: a game won by seat 0 at step 1, then a new game (seats 1, 0) still running at the end."""
    A = t.game.num_actions
    seats = [[0, 0], [1, 1], [0, 1], [1 % n, 0]]
    masks = np.ones((4, 2, A), np.int8)
    rewards = np.zeros((4, 2, n))
    rewards[1, 1, :2] = [3.0, -3.0]
    rewards[2, 0, 0] = 2.0
    rewards[3, 0, 1] = 2.0  # row 0's game: seats 0 and 1 tie at 2 points (a third seat, if any, has 0)
    done = [[False, False], [False, True], [False, False], [True, False]]
    return ScriptedVenv(t.game.obs_size, seats, masks, rewards, done)


def replay_by_decision(t: DMCTrainer) -> dict[tuple[int, int], float]:
    """(row, step) -> the replay target of that decision."""
    obs = t.rp_obs[:t.rp_size]
    return {(int(o[0]), int(o[1])): float(v) for o, v in zip(obs, t.rp_target[:t.rp_size])}


@pytest.mark.parametrize("n", [2, 3])
def test_collect_gives_each_decision_its_games_result_ties_shared(tmp_path, n):
    """Hand-worked: row 0's game ends tied at the top between seats 0 and 1, so each of their decisions
    has target 1/2 - 1/n (0 with two players; 1/6 with three, a tie is not a loss); row 1's first game is
    won by seat 0 (1 - 1/n) and lost by seat 1 (-1/n); row 1's second game is still running, so its two
    decisions stay staged under the new game's id and seat."""
    t = trainer(tmp_path, {"num_players": n} if n != 2 else None)
    t.venv = script_two_games(t, n)
    made = t.collect()
    assert made == 8
    tie, win, loss = 0.5 - 1 / n, 1 - 1 / n, -1 / n
    expected = {(0, 0): tie, (0, 1): tie, (0, 2): tie, (0, 3): tie, (1, 0): win, (1, 1): loss}
    got = replay_by_decision(t)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-6), key
    # the actions stored are the ones played
    played = {(int(o[i, 0]), int(o[i, 1])): int(a[i]) for o, _, a in t.venv.taken for i in range(2)}
    assert all(played[(int(o[0]), int(o[1]))] == a for o, a in zip(t.rp_obs[:t.rp_size], t.rp_act[:t.rp_size]))
    # still running: row 1's new game (id 2: ids 0 and 1 were the first games), seats 1 then 0
    assert t.st_ep.tolist() == [2, 2] and t.st_seat.tolist() == [1, 0]
    assert t.st_obs[:, :2].tolist() == [[1, 2], [1, 3]]
    assert t.episode.tolist() == [3, 2] and t.next_episode == 4
    assert t.returns.tolist() == [[0.0] * n, [0.0] * n]  # both rows' finished games reset their returns


def test_score_targets_are_the_points_times_the_scale(tmp_path):
    t = trainer(tmp_path, **{"dmc.reward": "score", "dmc.score_scale": 0.25})
    t.venv = script_two_games(t, 2)
    t.collect()
    got = replay_by_decision(t)
    assert got[(1, 0)] == 0.75 and got[(1, 1)] == -0.75  # seat 0 won 3 points
    assert got[(0, 0)] == 0.5 and got[(0, 1)] == 0.5  # both seats of the tied game scored 2


def test_replay_wraps_around_keeping_the_most_recent(tmp_path):
    t = trainer(tmp_path, **{"dmc.replay_size": 4})
    width = t.rp_obs.shape[1]

    def push(values):
        v = np.asarray(values, np.float32)
        t._push(np.repeat(v[:, None], width, axis=1), v.astype(np.int64), v)

    push([1, 2, 3])
    assert (t.rp_ptr, t.rp_size) == (3, 3) and t.rp_target[:3].tolist() == [1, 2, 3]
    push([4, 5, 6])  # 4 fills the last slot, 5 and 6 overwrite the oldest two
    assert (t.rp_ptr, t.rp_size) == (2, 4)
    assert t.rp_target.tolist() == [5, 6, 3, 4] and t.rp_act.tolist() == [5, 6, 3, 4]
    assert t.rp_obs[:, 0].tolist() == [5, 6, 3, 4] and t.rp_obs[:, -1].tolist() == [5, 6, 3, 4]
    push([7, 8, 9, 10, 11, 12])  # more than the buffer holds: the last four, in order from the pointer
    assert (t.rp_ptr, t.rp_size) == (2, 4)
    ring = np.roll(t.rp_target, -t.rp_ptr).tolist()  # oldest first
    assert ring == [9, 10, 11, 12] and sorted(t.rp_act.tolist()) == [9, 10, 11, 12]


def test_learn_regresses_the_chosen_actions_q_on_its_target(tmp_path):
    """One step's loss is the mean squared error of Q(obs)[action] against the target on the minibatch
    the trainer's Generator draws (recomputed here by hand); many steps bring Q(obs)[a] to the
    target for each (obs, action) pair of the replay, other actions of the same obs included."""
    t = trainer(tmp_path, **{"dmc.batch_size": 4, "dmc.replay_size": 4, "dmc.lr": 0.01, "network.hidden": [16]})
    width = t.rp_obs.shape[1]
    obs = np.zeros((4, width), np.float32)
    obs[:2, 0], obs[2:, 1] = 1.0, 1.0  # two positions, two actions each
    act = np.array([3, 7, 3, 7])
    target = np.array([0.5, -0.5, -0.25, 0.25], np.float32)
    t._push(obs, act, target)
    before = copy.deepcopy(t.q)
    rng = copy.deepcopy(t.rng)
    j = rng.integers(4, size=4)
    with torch.no_grad():
        pred = before(torch.from_numpy(obs[j])).numpy()[np.arange(4), act[j]]
    loss = t.learn(4)
    assert loss == pytest.approx(float(np.mean((pred - target[j]) ** 2)), rel=1e-5)
    for _ in range(400):
        t.learn(4)
    with torch.no_grad():
        q = t.q(torch.from_numpy(obs)).numpy()
    np.testing.assert_allclose(q[np.arange(4), act], target, atol=0.02)


def explore_run(tmp_path, epsilon: float, steps: int = 60):
    """A collect of `steps` steps x 16 rows (self-play, no game ends) where each row has 3 legal actions
    of 56 drawn at random; returns (masks, actions taken, greedy actions) of every decision."""
    t = trainer(tmp_path / str(epsilon), **{"dmc.epsilon": epsilon, "dmc.num_envs": 16, "dmc.rollout_steps": steps})
    rng = np.random.default_rng(5)
    A = t.game.num_actions
    masks = np.zeros((steps, 16, A), np.int8)
    for k in range(steps):
        for i in range(16):
            masks[k, i, rng.choice(A, size=3, replace=False)] = 1
    t.venv = ScriptedVenv(t.game.obs_size, np.zeros((steps, 16), np.int64), masks, np.zeros((steps, 16, 2)),
                          np.zeros((steps, 16), bool))
    t.collect()
    o = np.concatenate([x[0] for x in t.venv.taken])
    m = np.concatenate([x[1] for x in t.venv.taken]) != 0
    a = np.concatenate([x[2] for x in t.venv.taken])
    return m, a, t.greedy_q(o, m)


def test_epsilon_zero_always_plays_the_highest_legal_q_and_one_plays_uniformly(tmp_path):
    m, a, greedy = explore_run(tmp_path, 0.0)
    assert np.array_equal(a, greedy)
    m, a, greedy = explore_run(tmp_path, 1.0)
    assert m[np.arange(a.size), a].all()
    position = np.array([np.flatnonzero(row).tolist().index(x) for row, x in zip(m, a)])  # 0, 1 or 2
    counts = np.bincount(position, minlength=3)
    assert stats.chisquare(counts).pvalue > 1e-3, counts  # uniform over the legal three
    share = (a == greedy).mean()
    assert abs(share - 1 / 3) < 4 * np.sqrt(2 / 9 / a.size), share  # the greedy action only a third of the time
    m, a, greedy = explore_run(tmp_path, 0.5)
    assert abs((a != greedy).mean() - 0.5 * 2 / 3) < 0.1  # half explore, two thirds of those differ


@pytest.mark.parametrize("reuse, steps", [(0.01, 1), (1.0, 2), (2.5, 5), (4.0, 8)])
def test_sample_reuse_sets_the_adam_steps_per_new_decision(tmp_path, reuse, steps):
    """dmc.sample_reuse (set through the learner's params): 16 new decisions, minibatches of 8, make
    round(16 x reuse / 8) Adam steps (at least one), each on a minibatch of 8 replay rows; an iterate's
    steps follow the decisions its rollout finished."""
    t = trainer(tmp_path, **{"dmc.batch_size": 8, "dmc.sample_reuse": reuse})
    assert t.settings.dmc.sample_reuse == reuse
    t._push(np.zeros((16, t.rp_obs.shape[1]), np.float32), np.zeros(16, np.int64), np.zeros(16, np.float32))
    sizes = []
    t.q.register_forward_hook(lambda module, inputs, output: sizes.append(inputs[0].shape[0]))
    t.learn(16)
    assert sizes == [8] * steps
    sizes.clear()
    made = t.iterate()["learner_decisions"]  # its rollout's forward passes are of num_envs=2 rows
    assert made > 0 and [s for s in sizes if s == 8] == [8] * max(1, round(made * reuse / 8))
