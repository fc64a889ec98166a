"""Who plays a seat drawn for a frozen snapshot (training/learners/pool.py's draw, ppo.py's Collector): the
snapshot does, not the live actor. The snapshot tests in test_learners.py show the snapshot's weights stay
frozen; this one shows who plays its seats, step by step: the rows of a snapshot's seats go to that
snapshot's own `act_batch` and nowhere else, the actions it returns are the ones stepped, and the learner's
buffer holds only the decisions of the learner's own seats."""
from __future__ import annotations

import numpy as np

from domino_training.learners.ppo import LEARNER, SNAPSHOT, SNAPSHOT0, Trainer
from domino_training.learners.train import load_settings

TINY = ["ppo.num_envs=16", "ppo.rollout_steps=16", "ppo.minibatch_size=64", "ppo.epochs=1", "network.hidden=[16]",
        "budget.env_steps=100000", "imitation.decisions=0", "eval.every_updates=0", "eval.final_deals=0",
        "ppo.torch_threads=1", "ppo.lr=0.01"]
ONLY_SNAPSHOTS = ["opponents.snapshot_every=1", "opponents.max_snapshots=2", "opponents.snapshot=1",
                  "opponents.self_play=0", "opponents.random=0", "opponents.greedy=0", "opponents.heuristic=0"]


def test_the_seats_drawn_for_a_snapshot_are_played_by_that_snapshot_not_the_live_actor(tmp_path):
    trainer = Trainer(load_settings(game="draw_v0", overrides=["num_players=3", *TINY, *ONLY_SNAPSHOTS]), tmp_path)
    col = trainer.collector
    for _ in range(3):  # snapshots in both slots, and games started since they were drawn for them
        trainer.iterate()
    assert col.snapshot_count == 3 and all(s is not None for s in col.snapshots)

    calls = []  # (slot, observations, actions) of each snapshot call within the current step
    for slot, snap in enumerate(col.snapshots):
        def spy(obs, masks, rng, slot=slot, real=snap.act_batch):
            actions = real(obs, masks, rng)
            calls.append((slot, obs.copy(), actions.copy()))
            return actions
        snap.act_batch = spy
    actor_rows = []
    trainer.model.actor.register_forward_hook(lambda module, inputs, output: actor_rows.append(inputs[0].shape[0]))
    venv, real_step = col.venv, col.venv.step
    steps = {"snapshot_rows": 0, "learner_rows": 0}
    slots_played = set()

    def step(actions):
        seats = venv.seats.copy()
        kinds, ctrl = col.kind.copy(), col.ctrl.copy()
        who = ctrl[col._rows, seats]
        # a game drawn for the snapshots has one learner seat; the others are a snapshot's
        snap_games = np.flatnonzero(kinds == SNAPSHOT)
        assert ((ctrl[snap_games] == LEARNER).sum(axis=1) == 1).all(), "a snapshot's seat is the live actor's"
        assert (ctrl[snap_games] != LEARNER).sum() == 2 * snap_games.size
        expected = [(int(code) - SNAPSHOT0, np.flatnonzero(who == code)) for code in np.unique(who[who >= SNAPSHOT0])]
        assert [slot for slot, _, _ in calls] == [slot for slot, _ in expected]
        for (_, obs, acted), (_, rows) in zip(calls, expected):
            np.testing.assert_array_equal(obs, venv.obs[rows])  # the snapshot saw exactly its seats' rows
            np.testing.assert_array_equal(actions[rows], acted)  # and what it chose is what was played
        steps["snapshot_rows"] += sum(rows.size for _, rows in expected)
        slots_played.update(slot for slot, _ in expected)
        learner = int((who == LEARNER).sum())
        steps["learner_rows"] += learner
        assert actor_rows == ([learner] if learner else [])  # the live actor decided the learner's rows only
        calls.clear()
        actor_rows.clear()
        return real_step(actions)

    venv.step = step
    buf = col.collect(trainer.model)
    assert steps["snapshot_rows"] > 100 and slots_played == {0, 1}
    assert buf.size == steps["learner_rows"]  # no snapshot decision entered the learner's buffer
