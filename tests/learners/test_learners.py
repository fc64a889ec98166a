"""Tests that bite for the learners (issue 21): what decides whether our PPO learns, each asserted
directly rather than incidentally. tests/mutations/run.py plants one bug for each of them on a copy
of the repo and checks the tests named there catch it.

- the learning signal: every seat's final transition carries its win share minus the fair share
  (ties split, each game summing to 0); the log-probability stored at collection is the masked one
  the update computes, so the PPO ratio starts at 1;
- hyperparameters: ``ent_coef`` and ``vf_coef`` scale their own loss term's gradient (and touch
  nothing else); the learning rate follows its linear schedule and never goes below 0;
- the opponent pool: the kinds drawn and the seat codes follow the pool weights; the heuristic's
  games are played by the heuristic; snapshots appear every ``snapshot_every`` updates and survive
  a resume;
- imitation and resume: demonstrations line up observation, mask and action; a resume after a kill
  writes each update's log row once;
- the SB3 actor's export plays the same actions as the torch policy, without sb3-contrib.
(Seat rotation of SingleSeatEnv: tests/fronts/test_wrappers.py; a reward moved in a replay: test_replay.py.)
"""
from __future__ import annotations

import copy
import dataclasses
import shutil
import sys
import zlib
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch import nn

import domino_envs
from domino_agents.registry import make_agent
from domino_envs.core import H_DONE, H_TURN
from domino_envs.errors import ConfigError
from domino_training.learners import imitate
from domino_training.learners.network import masked_log_probs
from domino_training.learners.pool import POOL_KINDS, HeuristicBatch, sample_actions
from domino_training.learners.ppo import (
    GREEDY,
    HEURISTIC,
    LEARNER,
    RANDOM,
    SNAPSHOT0,
    TARGET,
    Trainer,
    ppo_update,
)
from domino_training.learners.run_folder import CsvLog
from domino_training.learners.train import train
from tests.learners.test_training import tiny_game_run, tiny_run

SELF_PLAY = ["opponents.self_play=1.0", "opponents.snapshot=0", "opponents.random=0", "opponents.greedy=0",
             "opponents.heuristic=0"]


def with_players(run, n: int):
    """The run with `n` players (the rule config is checked when the Trainer builds the game)."""
    run.config = dict(run.config, num_players=n)
    return run


def traced_collect(trainer, monkeypatch):
    """Collect one rollout, recording for every vector step the learner decisions taken before it
    (rows, seats, buffer indices) and what the step returned (every seat's rewards, games ended)."""
    col = trainer.collector
    trace, pending = [], {}
    decide, step = col.chains.decide, col.venv.step

    def spy_decide(buf, rows, seats, idx):
        pending.update(rows=rows.copy(), seats=seats.copy(), idx=idx.copy())
        decide(buf, rows, seats, idx)

    def spy_step(actions):
        out = step(actions)
        none = np.zeros(0, np.int64)
        trace.append({"rows": pending.pop("rows", none), "seats": pending.pop("seats", none),
                      "idx": pending.pop("idx", none), "rewards": out[3].copy(), "ended": out[4] | out[5]})
        return out

    monkeypatch.setattr(col.chains, "decide", spy_decide)
    monkeypatch.setattr(col.venv, "step", spy_step)
    return col.collect(trainer.model), trace


def finished_games(trace, num_envs: int, n: int):
    """(row, each seat's game return, {seat: index of its last transition in the game}) for every
    game that ended in the traced rollout."""
    returns = np.zeros((num_envs, n))
    last = [dict() for _ in range(num_envs)]
    games = []
    for st in trace:
        for r, k, i in zip(st["rows"].tolist(), st["seats"].tolist(), st["idx"].tolist()):
            last[r][k] = i
        returns += st["rewards"]
        for r in np.flatnonzero(st["ended"]):
            games.append((int(r), returns[r].copy(), last[r]))
            returns[r], last[r] = 0.0, {}
    return games


# ------------------------------------------------------------------------------ the learning signal
@pytest.mark.parametrize("n", [2, 3])
def test_every_seat_final_transition_carries_its_win_share_minus_the_fair_share(tmp_path, monkeypatch, n):
    """Self-play, ppo.reward=win: when a game ends, the last transition of *every* seat of it (not
    only the seat that acted last) is terminal with reward (1/w if its return is one of the w top
    returns, else 0) - 1/n; each game's final rewards sum to 0; no other transition has a reward."""
    run = with_players(tiny_run("draw_v0", *SELF_PLAY, "ppo.num_envs=16", "ppo.rollout_steps=32"), n)
    trainer = Trainer(run, tmp_path)
    buf, trace = traced_collect(trainer, monkeypatch)
    games = finished_games(trace, 16, n)
    finals, not_last_actor = set(), 0
    for row, ret, last in games:
        top = ret.max()
        share = np.array([1.0 if r == top else 0.0 for r in ret])
        share /= share.sum()
        for seat, i in last.items():
            assert buf.done[i], (row, seat)
            assert buf.reward[i] == pytest.approx(share[seat] - 1.0 / n, abs=1e-6), (row, seat, ret.tolist())
            finals.add(i)
        if len(last) == n:
            assert sum(float(buf.reward[i]) for i in last.values()) == pytest.approx(0.0, abs=1e-6)
        last_actor = max(last, key=last.get)
        not_last_actor += sum(1 for seat, i in last.items() if seat != last_actor and buf.reward[i] != 0)
    assert len(games) >= 8 and not_last_actor >= len(games) // 2  # the seats that did not act last are paid
    others = np.setdiff1d(np.arange(buf.size), sorted(finals))
    assert not buf.done[others].any() and not buf.reward[others].any()


def test_ties_split_the_win_and_each_game_sums_to_zero(tmp_path):
    """Games ending with returns tied at the top pay each tied seat 1/w - 1/n (w tied seats), the
    others -1/n: the training reward stays zero-sum, as the evaluation harness counts wins."""
    trainer = Trainer(with_players(tiny_run("draw_v0", *SELF_PLAY), 3), tmp_path)
    col, buf = trainer.collector, trainer.collector.buf
    buf.clear()
    rows = np.arange(4)
    for k in range(3):
        col.chains.decide(buf, rows, np.full(4, k), rows * 3 + k)
    col.returns[:4] = [[3, 3, 0], [1, 2, 2], [5, -1, 0], [0, 0, 0]]
    col._end_games(buf, rows, True)
    paid = buf.reward[:12].reshape(4, 3)
    expected = np.array([[1 / 2, 1 / 2, 0], [0, 1 / 2, 1 / 2], [1, 0, 0], [1 / 3, 1 / 3, 1 / 3]]) - 1 / 3
    np.testing.assert_allclose(paid, expected, atol=1e-6)
    np.testing.assert_allclose(paid.sum(axis=1), 0.0, atol=1e-6)
    assert buf.done[:12].all()


def test_stored_log_prob_is_the_masked_log_prob_the_update_computes(tmp_path):
    """The log-probability stored with each learner transition equals masked_log_probs of the same
    actor on the same observation and mask (so the PPO ratio starts at exactly 1), before and after
    an update (when the policy is no longer near uniform)."""
    trainer = Trainer(tiny_run("draw_v0", "ppo.lr=0.01"), tmp_path)
    for round_ in range(2):
        buf = trainer.collector.collect(trainer.model)
        B = buf.size
        obs, mask = torch.from_numpy(buf.obs[:B]), torch.from_numpy(buf.mask[:B])
        act = torch.from_numpy(buf.action[:B])
        assert mask[torch.arange(B), act].all()
        with torch.no_grad():
            logp = masked_log_probs(trainer.model.actor(obs), mask).gather(1, act[:, None]).squeeze(1)
        np.testing.assert_allclose(buf.logp[:B], logp.numpy(), atol=2e-5)
        if round_ == 0:
            assert (mask.sum(1) < mask.shape[1]).all()  # masking matters for every transition here
            ppo_update(trainer.model, trainer.optimizer, buf, trainer.cfg.ppo, trainer.collector.rng)
    uniform = -np.log(buf.mask[:B].sum(1))
    assert np.abs(buf.logp[:B] - uniform).max() > 0.05  # the second rollout's policy is no longer uniform


def test_sampler_log_prob_is_normalised_over_the_legal_actions():
    rng = np.random.default_rng(3)
    logits = rng.normal(0, 3, (500, 12)).astype(np.float32)
    mask = rng.random((500, 12)) < 0.3
    mask[np.arange(500), rng.integers(12, size=500)] = True
    actions, logp = sample_actions(logits, mask, rng)
    expected = masked_log_probs(torch.from_numpy(logits), torch.from_numpy(mask))[np.arange(500), actions]
    np.testing.assert_allclose(logp, expected.numpy(), atol=1e-5)


# ------------------------------------------------------------------------------ hyperparameters
def _one_step(trainer, buf, **ppo):
    """(actor change, critic change, stats) of one full-batch SGD step (lr 1, no gradient clipping)
    of ppo_update from the trainer's weights, with the PPO section's keys `ppo` replaced: the change
    is then minus the loss gradient, linear in each coefficient."""
    model = copy.deepcopy(trainer.model)
    cfg = dataclasses.replace(trainer.cfg.ppo, epochs=1, minibatch_size=buf.size, max_grad_norm=1e9, **ppo)
    stats = ppo_update(model, torch.optim.SGD(model.parameters(), lr=1.0), buf, cfg, np.random.default_rng(0))

    def change(part):
        new, old = getattr(model, part), getattr(trainer.model, part)
        return torch.cat([(a - b).flatten() for a, b in zip(new.parameters(), old.parameters())]).detach().numpy()
    return change("actor"), change("critic"), stats


def test_ent_coef_and_vf_coef_scale_their_own_loss_terms(tmp_path):
    """One update's gradient is the policy term's - ent_coef x the entropy's (actor) and vf_coef x
    the value loss's (critic): the actor's change is linear in ent_coef and does not depend on
    vf_coef, the critic's is proportional to vf_coef (none at 0) and does not depend on ent_coef;
    a positive ent_coef raises the policy's entropy."""
    trainer = Trainer(tiny_run("draw_v0"), tmp_path)
    buf = trainer.collector.collect(trainer.model)
    a0, c0, s0 = _one_step(trainer, buf, ent_coef=0.0, vf_coef=0.0)
    a1, c1, s1 = _one_step(trainer, buf, ent_coef=1.0, vf_coef=0.5)
    a2, c2, s2 = _one_step(trainer, buf, ent_coef=2.0, vf_coef=1.0)
    assert not c0.any() and np.abs(c1).max() > 1e-4  # vf_coef 0: the critic does not move
    np.testing.assert_allclose(c2, 2 * c1, rtol=1e-3, atol=1e-7)  # critic change proportional to vf_coef
    assert np.abs(a1 - a0).max() > 1e-4
    np.testing.assert_allclose(a2 - a0, 2 * (a1 - a0), rtol=1e-3, atol=1e-6)  # linear in ent_coef
    a3, c3, _ = _one_step(trainer, buf, ent_coef=0.0, vf_coef=1.0)
    np.testing.assert_allclose(a3, a0, atol=1e-7)  # vf_coef leaves the actor alone
    _, c4, _ = _one_step(trainer, buf, ent_coef=2.0, vf_coef=0.5)
    np.testing.assert_allclose(c4, c1, atol=1e-7)  # ent_coef leaves the critic alone
    for stats in (s1, s2):  # the logged terms are the unscaled ones, the same whatever the coefficients
        for key in ("policy_loss", "value_loss", "entropy"):
            assert stats[key] == pytest.approx(s0[key], rel=1e-5, abs=1e-7)

    def entropy_after(ent_coef):
        model = copy.deepcopy(trainer.model)
        with torch.no_grad():  # a peaked policy (the fresh one is nearly uniform: little entropy to gain)
            model.actor[-1].weight.mul_(200.0)
        cfg = dataclasses.replace(trainer.cfg.ppo, epochs=1, minibatch_size=buf.size, max_grad_norm=1e9,
                                  ent_coef=ent_coef)
        ppo_update(model, torch.optim.SGD(model.parameters(), lr=0.01), buf, cfg, np.random.default_rng(0))
        with torch.no_grad():
            lp = masked_log_probs(model.actor(torch.from_numpy(buf.obs[:buf.size])), torch.from_numpy(buf.mask[:buf.size]))
            return float(-(lp.exp() * lp.masked_fill(~torch.from_numpy(buf.mask[:buf.size]), 0.0)).sum(1).mean())
    assert entropy_after(5.0) > entropy_after(0.0)


def test_lr_schedule_decays_linearly_and_never_goes_below_zero(tmp_path):
    """anneal_lr: update u (0-based) runs at lr x (1 - u / total updates), as the log says; past the
    budget (a caller iterating on) it stays at 0, never negative. Without anneal_lr: lr throughout."""
    trainer = Trainer(tiny_run("draw_v0", "ppo.lr=0.004", "budget.env_steps=320"), tmp_path / "a")
    assert trainer.lr_updates == 5
    logged = [trainer.iterate()["lr"] for _ in range(7)]
    np.testing.assert_allclose(logged, [0.004 * (1 - u / 5) for u in range(5)] + [0.0, 0.0], atol=1e-12)
    assert trainer.optimizer.param_groups[0]["lr"] == 0.0
    flat = Trainer(tiny_run("draw_v0", "ppo.lr=0.004", "ppo.anneal_lr=false"), tmp_path / "b")
    assert [flat.iterate()["lr"] for _ in range(3)] == [0.004] * 3


def test_lr_horizon_stretches_the_schedule_past_the_budget(tmp_path):
    """ppo.lr_horizon: a run that stops at its budget (5 updates) but anneals over 10 updates' decisions
    runs at lr x (1 - u / 10), as a time-capped run would have; a negative horizon is refused."""
    cut = Trainer(tiny_run("draw_v0", "ppo.lr=0.004", "budget.env_steps=320", "ppo.lr_horizon=640"), tmp_path)
    assert cut.lr_updates == 10
    np.testing.assert_allclose([cut.iterate()["lr"] for _ in range(5)], [0.004 * (1 - u / 10) for u in range(5)],
                               atol=1e-12)
    with pytest.raises(ConfigError, match=r"ppo.lr_horizon=-1 is not allowed; must be >= 0"):
        tiny_run("draw_v0", "ppo.lr_horizon=-1")


# ------------------------------------------------------------------------------ the opponent pool
POOL = {"self_play": 0.3, "snapshot": 0.2, "random": 0.15, "greedy": 0.1, "heuristic": 0.15, "target": 0.1}


def within(count: int, total: int, p: float, sigmas: float = 5.0) -> bool:
    """count is within `sigmas` standard deviations of a Binomial(total, p)'s mean."""
    return abs(count - total * p) <= sigmas * np.sqrt(total * p * (1 - p))


def test_drawn_opponent_kinds_and_seat_codes_follow_the_pool_weights(tmp_path):
    """12,800 draws (64 games x 200 rounds, 3 players, fixed seed): each pool kind's frequency is
    within 5 sigma of its weight; a self-play game has the learner in every seat, any other kind
    the learner in one seat (uniform over the seats) and that kind's opponent in all the others
    (a snapshot: one of the filled slots, uniformly)."""
    run = with_players(tiny_run("draw_v0", "ppo.num_envs=64", "opponents.max_snapshots=3", "opponents.target_spec=greedy",
                                *[f"opponents.{k}={w}" for k, w in POOL.items()]), 3)
    trainer = Trainer(run, tmp_path)
    col = trainer.collector
    col.add_snapshot(trainer.model.actor_layers())
    col.add_snapshot(trainer.model.actor_layers())  # slots 0 and 1 of 3 filled
    kinds, ctrls = [], []
    for _ in range(200):
        col.assign(col._rows)
        kinds.append(col.kind.copy())
        ctrls.append(col.ctrl.copy())
    kinds, ctrls = np.concatenate(kinds), np.concatenate(ctrls)
    total = kinds.size
    for k, name in enumerate(POOL_KINDS):
        count = int((kinds == k).sum())
        assert within(count, total, POOL[name]), (name, count / total, POOL[name])
    code_of = {2: RANDOM, 3: GREEDY, 4: HEURISTIC, 5: TARGET}
    assert (ctrls[kinds == 0] == LEARNER).all()
    others = ctrls[kinds != 0]
    learners = others == LEARNER
    assert (learners.sum(axis=1) == 1).all()
    for seat in range(3):
        assert within(int(learners[:, seat].sum()), len(others), 1 / 3)
    opponent = np.where(learners, -1, others).max(axis=1)  # the code in the non-learner seats
    assert ((others == opponent[:, None]) | learners).all()  # the same code in every one of them
    okind = kinds[kinds != 0]
    for k, code in code_of.items():
        assert (opponent[okind == k] == code).all(), POOL_KINDS[k]
    slots = opponent[okind == 1] - SNAPSHOT0
    assert set(slots.tolist()) == {0, 1}
    assert within(int((slots == 0).sum()), slots.size, 1 / 2)


def test_without_snapshots_their_weight_goes_to_self_play(tmp_path):
    """Before the first snapshot a game drawn for 'snapshot' is played as self-play (no slot to use)."""
    run = tiny_run("draw_v0", "ppo.num_envs=64", "opponents.target_spec=greedy",
                   *[f"opponents.{k}={w}" for k, w in POOL.items()])
    col = Trainer(run, tmp_path).collector
    kinds = []
    for _ in range(100):
        col.assign(col._rows)
        kinds.append(col.kind.copy())
    kinds = np.concatenate(kinds)
    assert not (kinds == 1).any()
    assert within(int((kinds == 0).sum()), kinds.size, POOL["self_play"] + POOL["snapshot"])


def test_heuristic_games_are_played_by_the_heuristic(tmp_path, monkeypatch):
    """With the heuristic as the only opponent, it chooses every move of the seats the learner does
    not play, and the buffer holds exactly the learner seat's decisions."""
    run = tiny_run("draw_v0", "opponents.self_play=0", "opponents.snapshot=0", "opponents.random=0",
                   "opponents.greedy=0", "opponents.heuristic=1", "ppo.rollout_steps=16")
    trainer = Trainer(run, tmp_path)
    col = trainer.collector
    moves = []
    act = HeuristicBatch.act_batch

    def counted(self, obs, masks, rng):
        moves.append(len(obs))
        return act(self, obs, masks, rng)
    monkeypatch.setattr(HeuristicBatch, "act_batch", counted)
    assert ((col.ctrl == LEARNER).sum(axis=1) == 1).all() and (col.ctrl[col.ctrl != LEARNER] == HEURISTIC).all()
    buf = col.collect(trainer.model)
    assert sum(moves) > 0 and buf.size + sum(moves) == 8 * 16


def test_snapshots_appear_every_snapshot_every_updates_and_are_played(tmp_path):
    """opponents.snapshot_every=2, max_snapshots=2: after update u there are u // 2 snapshots, the
    newest the actor as it was after that update, the oldest dropped first; once one exists the
    pool plays games against it (the log's train_win_snapshot)."""
    run = tiny_run("draw_v0", "opponents.snapshot_every=2", "opponents.max_snapshots=2", "opponents.snapshot=0.8",
                   "opponents.self_play=0.2", "ppo.num_envs=16", "opponents.random=0", "opponents.greedy=0", "opponents.heuristic=0",
                   "budget.env_steps=896")
    trainer = Trainer(run, tmp_path)
    col = trainer.collector
    kept = {}
    played = []
    for u in range(1, 8):
        row = trainer.iterate()
        played.append("train_win_snapshot" in row)
        assert col.snapshot_count == u // 2
        if u % 2 == 0:
            kept[u // 2] = trainer.model.actor_layers()
        for number, layers in kept.items():  # snapshot `number` (1-based) sits in slot (number - 1) % 2
            slot = col.snapshots[(number - 1) % 2]
            if number > col.snapshot_count - 2:  # not dropped yet
                assert all(np.array_equal(w, sw) and np.array_equal(b, sb)
                           for (w, b), (sw, sb) in zip(layers, slot.layers)), (u, number)
    assert not any(played[:2]) and all(played[3:])


def test_a_snapshot_stays_frozen_while_the_learner_trains_on(tmp_path):
    """The snapshot iterate takes after update 3 plays, two updates later, exactly as the actor of
    update 3 played (its weights and its sampled actions on the same observations and random stream),
    while the live actor has moved: a snapshot holding the live weights would follow the learner."""
    from domino_training.learners.pool import PolicyBatch

    run = tiny_run("draw_v0", "opponents.snapshot_every=3", "opponents.max_snapshots=2", "opponents.snapshot=0.5",
                   "opponents.self_play=0.5", "opponents.random=0", "opponents.greedy=0", "opponents.heuristic=0",
                   "ppo.lr=0.01", "budget.env_steps=4096")
    trainer = Trainer(run, tmp_path)
    col = trainer.collector
    for _ in range(3):
        trainer.iterate()
    frozen = [(w.copy(), b.copy()) for w, b in trainer.model.actor_layers()]
    for _ in range(2):
        trainer.iterate()
    assert col.snapshot_count == 1
    live = trainer.model.actor_layers()
    assert any(not np.array_equal(w, v) for (w, _), (v, _) in zip(frozen, live))  # the learner moved
    snap = col.snapshots[0]
    assert all(np.array_equal(w, sw) and np.array_equal(b, sb) for (w, b), (sw, sb) in zip(frozen, snap.layers))
    obs, masks = col.venv.obs.copy(), col.venv.masks.copy()
    then = PolicyBatch(frozen).act_batch(obs, masks, np.random.default_rng(9))
    now = PolicyBatch(live).act_batch(obs, masks, np.random.default_rng(9))
    assert np.array_equal(snap.act_batch(obs, masks, np.random.default_rng(9)), then) and not np.array_equal(then, now)


def test_snapshots_added_by_iterate_do_not_share_the_actors_memory(tmp_path):
    """Every array a snapshot plays with is its own: none shares memory with the live actor's tensors."""
    run = tiny_run("draw_v0", "opponents.snapshot_every=1", "opponents.snapshot=0.5", "opponents.self_play=0.5",
                   "opponents.random=0", "opponents.greedy=0", "opponents.heuristic=0")
    trainer = Trainer(run, tmp_path)
    trainer.iterate()
    params = [p.detach().numpy() for p in trainer.model.actor.parameters()]
    layers = trainer.collector.snapshots[0].layers
    assert not any(np.shares_memory(a, p) for pair in layers for a in pair for p in params)


def test_resume_with_snapshots_in_the_pool_continues_exactly(tmp_path):
    """A run with snapshots (one each update, two slots) stopped after 3 updates and resumed for 3
    more ends where 6 straight updates end: weights, games, seat controllers, snapshots, log rows."""
    extra = ["opponents.snapshot_every=1", "opponents.max_snapshots=2", "opponents.snapshot=0.5",
             "opponents.self_play=0.3", "opponents.random=0.2", "opponents.greedy=0", "opponents.heuristic=0",
             "budget.env_steps=384"]
    timing = ("seconds", "steps_per_s", "collect_steps_per_s")

    def rows(trainer, k):
        return [{c: v for c, v in trainer.iterate().items() if c not in timing} for _ in range(k)]

    straight = Trainer(tiny_run("draw_v0", *extra), tmp_path / "a")
    expected = rows(straight, 6)
    first = Trainer(tiny_run("draw_v0", *extra), tmp_path / "b")
    got = rows(first, 3)
    first.save_checkpoint()
    resumed = Trainer(tiny_run("draw_v0", *extra), tmp_path / "b")
    resumed.load_checkpoint()
    assert resumed.collector.snapshot_count == 3
    for a, b in zip(first.collector.snapshots, resumed.collector.snapshots):  # slots 0 and 1, restored
        assert all(np.array_equal(w, w2) and np.array_equal(x, x2) for (w, x), (w2, x2) in zip(a.layers, b.layers))
    got += rows(resumed, 3)
    assert got == expected and any("train_win_snapshot" in r for r in got[3:])
    for (k, a), b in zip(straight.model.state_dict().items(), resumed.model.state_dict().values()):
        assert torch.equal(a, b), k
    s, r = straight.collector, resumed.collector
    np.testing.assert_array_equal(s.venv.states, r.venv.states)
    np.testing.assert_array_equal(s.ctrl, r.ctrl)
    assert s.snapshot_count == r.snapshot_count == 6
    for a, b in zip(s.snapshots, r.snapshots):
        assert all(np.array_equal(w, w2) and np.array_equal(x, x2) for (w, x), (w2, x2) in zip(a.layers, b.layers))


# ------------------------------------------------------------------------------ imitation and resume
class ObservationTeacher:
    """A teacher whose choice is a function of the observation and the mask: the legal action at
    position crc32(observation) mod (number of legal actions)."""

    def __init__(self, game, seed=None):
        self.game = game

    @staticmethod
    def choose(observation, mask) -> int:
        legal = np.flatnonzero(mask)
        return int(legal[zlib.crc32(np.ascontiguousarray(observation, np.float32).tobytes()) % legal.size])

    def act_batch(self, obs, masks, rng):
        return np.array([self.choose(o, m) for o, m in zip(obs, masks)], dtype=np.int64)


def test_demonstrations_line_up_observation_mask_and_action(monkeypatch):
    """Each demonstration's action is the teacher's choice on that very observation and mask (a
    teacher that reads the observation), legal under the mask; observations differ row to row."""
    monkeypatch.setattr(imitate, "batch_opponent", lambda spec, game, seed=0: ObservationTeacher(game))
    obs, masks, actions, targets = imitate.demonstrations(tiny_run("draw_v0"), 1024, "greedy", num_envs=16, seed=3)
    assert len(actions) > 600 and len(obs) == len(masks) == len(targets) == len(actions)
    assert masks[np.arange(len(actions)), actions].all()
    assert all(ObservationTeacher.choose(o, m) == a for o, m, a in zip(obs, masks, actions))
    assert len({o.tobytes() for o in obs}) > 0.9 * len(obs)
    assert len(set(actions.tolist())) > 10  # the choices vary, so a shifted row would show


def test_resume_after_a_kill_writes_each_update_log_row_once(tmp_path, monkeypatch):
    """A run killed after logging updates 3 and 4 but before saving update 4's point and checkpoint (its
    folder holds update 2's) and resumed: log.csv and eval.csv hold each row once, and the replayed
    rows 3 and 4 equal the first ones (the resume is exact)."""
    kept = tmp_path / "kept"
    kept.mkdir()
    save = Trainer.save_checkpoint

    def save_and_keep(self, extra=None):
        path = save(self, extra)
        if self.update == 2:
            for name in ("checkpoint.pt", "points.json"):
                shutil.copy(path.parent / name, kept / name)
        return path
    monkeypatch.setattr(Trainer, "save_checkpoint", save_and_keep)
    run = tiny_game_run("draw_v0", "budget.checkpoint_every=2", "eval.every_updates=2", "eval.deals=2",
                   "eval.opponents=[random]")
    run_dir = tmp_path / "run"
    train(run, run_dir, progress=False, echo=lambda *_: None)
    before = CsvLog(run_dir / "log.csv").rows()
    assert [r["update"] for r in before] == ["1", "2", "3", "4"]
    assert [r["env_steps"] for r in CsvLog(run_dir / "eval.csv").rows()] == ["128", "256"]
    for name in ("checkpoint.pt", "points.json"):  # the kill: update 4's point and checkpoint never written
        shutil.copy(kept / name, run_dir / name)
    train(run, run_dir, resume=True, progress=False, echo=lambda *_: None)
    after = CsvLog(run_dir / "log.csv").rows()
    assert [r["update"] for r in after] == ["1", "2", "3", "4"]
    assert [r["env_steps"] for r in CsvLog(run_dir / "eval.csv").rows()] == ["128", "256"]
    timing = ("seconds", "steps_per_s", "collect_steps_per_s")
    assert [{k: v for k, v in r.items() if k not in timing} for r in after] == \
           [{k: v for k, v in r.items() if k not in timing} for r in before]


# ------------------------------------------------------------------------------ the SB3 actor at play time
def test_sb3_actor_export_plays_like_the_torch_policy_without_sb3_contrib(tmp_path, monkeypatch):
    """training/learners/sb3.py's actor_layers reads an MlpPolicy's actor (mlp_extractor.policy_net, then
    action_net; the value net beside it has the same widths) into policy.npz, and the ppo agent that
    `domino play` and the harness load from it picks the torch actor's best legal action. A stand-in
    with MlpPolicy's attribute names replaces SB3, whose packages are made unimportable here."""
    for name in ("sb3_contrib", "stable_baselines3"):
        monkeypatch.setitem(sys.modules, name, None)
    from domino_agents.trained import policy_meta, save_policy
    from domino_training.learners.sb3 import actor_layers

    game = domino_envs.make_game("draw_v0")
    rng = np.random.default_rng(11)

    def mlp(sizes, relu_last=True):
        mods = []
        for a, b in zip(sizes, sizes[1:]):
            lin = nn.Linear(a, b)
            with torch.no_grad():
                lin.weight.copy_(torch.from_numpy(rng.normal(0, 1 / np.sqrt(a), (b, a)).astype(np.float32)))
                lin.bias.copy_(torch.from_numpy(rng.normal(0, 0.1, b).astype(np.float32)))
            mods += [lin, nn.ReLU()]
        return nn.Sequential(*(mods if relu_last else mods[:-1]))

    def linear(a, b):
        return mlp([a, b], relu_last=False)[0]

    with torch.random.fork_rng(devices=[]):  # nn.Linear's own init draws from torch's RNG: keep it private
        policy = SimpleNamespace(mlp_extractor=SimpleNamespace(policy_net=mlp([game.obs_size, 16, 16]),
                                                               value_net=mlp([game.obs_size, 16, 16])),
                                 action_net=linear(16, game.num_actions))
    path = save_policy(tmp_path / "policy.npz", actor_layers(policy), policy_meta(game, [16, 16], "sb3", 0))
    agent = make_agent(f"ppo:checkpoint={path}", game)
    state = game.new_state()
    chosen, checked = set(), 0
    for seed in range(20):
        game.reset(state, seed)
        while not state[H_DONE]:
            seat = int(state[H_TURN])
            obs, mask = game.observe(state, seat), game.legal_mask(state)
            with torch.no_grad():
                logits = policy.action_net(policy.mlp_extractor.policy_net(torch.from_numpy(obs)))
            best = int(logits.masked_fill(~torch.from_numpy(mask != 0), -torch.inf).argmax())
            assert agent.act(obs, mask) == best
            chosen.add(best)
            checked += 1
            game.step(state, best)
    assert checked > 100 and len(chosen) > 10


def test_demonstration_value_targets_share_ties_at_the_top(monkeypatch):
    """Hand-worked, three players, on a scripted vector env: row 0's game ends with seats 0 and 1
    tied at the top (each decision's target 1/2 - 1/3, seat 2's -1/3: a tie is not a loss), row 1's
    is won by seat 1 (2/3, the others -1/3); the decisions of the games still running are dropped."""
    from tests.helpers import ScriptedVenv

    game = domino_envs.make_game("draw_v0", num_players=3)
    rewards = np.zeros((4, 2, 3))
    rewards[2] = [[2.0, 2.0, 0.0], [0.0, 5.0, 1.0]]
    done = [[False, False], [False, False], [True, True], [False, False]]
    seats = [[0, 0], [1, 1], [2, 2], [0, 1]]
    venv = ScriptedVenv(game.obs_size, seats, np.ones((4, 2, game.num_actions)), rewards, done, game=game)
    monkeypatch.setattr(imitate, "VectorEnv", lambda *a, **k: venv)
    obs, masks, actions, targets = imitate.demonstrations(with_players(tiny_run("draw_v0"), 3), 8, "random",
                                                          num_envs=2, seed=0)
    assert obs[:, :2].tolist() == [[0, 0], [1, 0], [0, 1], [1, 1], [0, 2], [1, 2]]  # (row, step); step 3 dropped
    np.testing.assert_allclose(targets, np.array([1 / 2, 0, 1 / 2, 1, 0, 0]) - 1 / 3, atol=1e-6)
