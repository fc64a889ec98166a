"""Our PPO: per-seat chains and GAE by hand, masking, checkpoints, resume, configs, a tiny run end to end."""
from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import domino_envs
from domino_agents.registry import make_agent
from domino_agents.trained import CheckpointError, PolicyAgent, load_policy, save_policy
from domino_envs.core import ConfigError
from domino_training.configs import parse_override, set_key
from domino_training.learners.checkpoint import load_checkpoint_file
from domino_training.learners.pool import GreedyBatch, PolicyBatch, RandomBatch, sample_actions
from domino_training.learners.ppo import (
    CHECKPOINT_FORMAT,
    Buffer,
    SeatChains,
    TrainConfig,
    Trainer,
    gae,
    masked_log_probs,
)
from domino_training.learners.train import load, load_settings, train
from domino_training.learners.train import main as train_main

TINY = ["ppo.num_envs=8", "ppo.rollout_steps=8", "ppo.minibatch_size=32", "ppo.epochs=2", "network.hidden=[16]",
        "budget.env_steps=256", "budget.checkpoint_every=1", "imitation.decisions=0", "eval.every_updates=0",
        "eval.final_deals=0"]


def tiny_run(game="draw_v0", *extra):
    """A Trainer's settings for a tiny run."""
    return load_settings(game=game, overrides=TINY + list(extra))


def tiny_game_run(game="draw_v0", *extra):
    """A tiny run as `domino train` trains it."""
    return load(game=game, overrides=TINY + list(extra))


# ------------------------------------------------------------------------------ chains and GAE
def test_gae_follows_each_seat_chain_with_two_seats_interleaved():
    """One game, seats 0 and 1 alternate: t0 (seat 0), t1 (seat 1), t2 (seat 0), t3 (seat 1); the
    game ends after t3 with +1 for seat 0 and -1 for seat 1 (seat 1 acted last, seat 0 still gets
    its result). A second game's seat 0 decides at t4 and is still open at the rollout's end."""
    buf = Buffer.allocate(8, 3, 2, None)
    chains = SeatChains(num_envs=2, num_players=2)
    value = np.array([0.1, 0.2, 0.3, 0.4, 0.5], np.float32)
    for t, (row, seat) in enumerate([(0, 0), (0, 1), (0, 0), (0, 1), (1, 0)]):
        chains.decide(buf, np.array([row]), np.array([seat]), np.array([t]))
        if t == 1:  # a mid-game reward: seat 0 +0.5 (it reaches seat 0's open transition t0)
            chains.add_rewards(buf, np.array([[0.5, 0.0], [0.0, 0.0]], np.float32))
        if t == 3:
            chains.add_rewards(buf, np.array([[1.0, -1.0]], np.float32), np.array([0]))
            chains.end_games(buf, np.array([0]))
    buf.value[:5] = value
    rows, seats, idx = chains.close_rollout()
    assert rows.tolist() == [1] and seats.tolist() == [0] and idx.tolist() == [4]
    buf.boot[4] = 0.7
    assert buf.next[:5].tolist() == [2, 3, -1, -1, -1]
    assert buf.done[:5].tolist() == [False, False, True, True, False]
    assert buf.reward[:5].tolist() == [0.5, 0.0, 1.0, -1.0, 0.0]
    g, lam = 0.9, 0.8
    adv = np.zeros(5, np.float32)
    gae(buf.reward[:5], buf.value[:5], buf.done[:5], buf.next[:5], buf.boot[:5], np.float32(g), np.float32(lam), adv)
    # by hand: seat 0's chain t0 -> t2 (terminal), seat 1's t1 -> t3 (terminal), t4 bootstrapped
    a2 = 1.0 - 0.3
    a0 = (0.5 + g * 0.3 - 0.1) + g * lam * a2
    a3 = -1.0 - 0.4
    a1 = (0.0 + g * 0.4 - 0.2) + g * lam * a3
    a4 = 0.0 + g * 0.7 - 0.5
    np.testing.assert_allclose(adv, [a0, a1, a2, a3, a4], rtol=1e-6)


def test_collected_chains_link_each_seat_to_its_own_next_decision():
    """In a real rollout every transition's successor is the same game's same seat, later."""
    trainer = Trainer(tiny_run("draw_v0", "opponents.self_play=1.0", "opponents.snapshot=0", "opponents.random=0",
                               "opponents.greedy=0", "opponents.heuristic=0"), "/tmp/unused-chain-run")
    col = trainer.collector
    seen = []  # (row, seat) of each transition in decision order, rebuilt from the buffer's obs
    orig = col.chains.decide

    def spy(buf, rows, seats, idx):
        seen.extend(zip(rows.tolist(), seats.tolist(), idx.tolist()))
        orig(buf, rows, seats, idx)

    col.chains.decide = spy
    buf = col.collect(trainer.model)
    where = {i: (r, s) for r, s, i in seen}
    assert buf.size == len(seen) == 8 * 8  # self-play: every decision is the learner's
    linked = 0
    for t in range(buf.size):
        if buf.next[t] >= 0:
            assert buf.next[t] > t and where[int(buf.next[t])] == where[t]
            assert not buf.done[t]
            linked += 1
    assert linked > 0 and buf.done[:buf.size].any()
    # the terminal win rewards of a 2-player game are +-0.5 (win share minus the fair share) or 0 (tie)
    assert set(np.round(buf.reward[:buf.size][buf.done[:buf.size]], 6)) <= {-0.5, 0.0, 0.5}


# ------------------------------------------------------------------------------ masking
def test_masked_sampling_never_picks_an_illegal_action():
    rng = np.random.default_rng(0)
    logits = rng.normal(0, 5, (4000, 20)).astype(np.float32)
    logits[:, 3] = 50.0  # a huge logit on an action that is often illegal
    mask = rng.random((4000, 20)) < 0.2
    mask[np.arange(4000), rng.integers(20, size=4000)] = True
    for _ in range(5):
        a, logp = sample_actions(logits, mask, rng)
        assert mask[np.arange(4000), a].all()
        assert np.isfinite(logp).all() and (logp <= 0).all()
    lp = masked_log_probs(torch.from_numpy(logits), torch.from_numpy(mask))
    assert torch.isinf(lp[~torch.from_numpy(mask)]).all()
    np.testing.assert_allclose(lp.exp().sum(1).numpy(), 1.0, rtol=1e-5)
    for opp in (RandomBatch(None), PolicyBatch([(rng.normal(size=(20, 5)).astype(np.float32), np.zeros(20, np.float32))])):
        acts = opp.act_batch(rng.random((4000, 5), dtype=np.float32), mask.astype(np.int8), rng)
        assert mask[np.arange(4000), acts].all()


def test_sampling_matches_the_masked_softmax():
    rng = np.random.default_rng(1)
    logits = np.tile(np.array([[0.0, 1.0, 2.0, 5.0]], np.float32), (60000, 1))
    mask = np.tile(np.array([[True, True, True, False]]), (60000, 1))
    a, _ = sample_actions(logits, mask, rng)
    p = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
    freq = np.bincount(a, minlength=4) / a.size
    np.testing.assert_allclose(freq[:3], p, atol=0.01)
    assert freq[3] == 0


def test_greedy_batch_plays_like_the_greedy_agent():
    game = domino_envs.make_game("draw_v0")
    state = game.new_state()
    agent, batch, rng = make_agent("greedy", game, seed=0), GreedyBatch(game), np.random.default_rng(0)
    for seed in range(30):
        game.reset(state, seed)
        obs, mask = game.observe(state, int(state[0])), game.legal_mask(state)
        chosen = int(batch.act_batch(obs[None], mask[None], rng)[0])
        w = agent._score
        assert mask[chosen] and w[chosen] == max(w[a] for a in np.flatnonzero(mask))


# ------------------------------------------------------------------------------ checkpoints
def test_policy_file_round_trip_gives_the_same_actions(tmp_path):
    trainer = Trainer(tiny_run(), tmp_path)
    trainer.iterate()
    path = trainer.export_policy()
    game = domino_envs.make_game("draw_v0")
    agent = make_agent(f"ppo:checkpoint={path}", game)
    obs, masks = trainer.collector.venv.obs, trainer.collector.venv.masks
    with torch.no_grad():
        logits = trainer.model.actor(torch.from_numpy(obs)).masked_fill(~torch.from_numpy(masks != 0), -torch.inf)
    expected = logits.argmax(1).numpy()
    assert [agent.act(o, m) for o, m in zip(obs, masks)] == expected.tolist()


def test_mismatched_or_corrupted_policy_files_fail_clearly(tmp_path):
    trainer = Trainer(tiny_run(), tmp_path)
    path = trainer.export_policy()
    with pytest.raises(CheckpointError, match="trained on 'draw_v0', not 'sum7_v0'"):
        make_agent(f"ppo:checkpoint={path}", domino_envs.make_game("sum7_v0"))
    with pytest.raises(CheckpointError, match="num_players=2 in the file vs 3 here"):
        PolicyAgent(domino_envs.make_game("draw_v0", num_players=3), checkpoint=str(path))
    with pytest.raises(CheckpointError, match="does not exist"):
        PolicyAgent(domino_envs.make_game("draw_v0"), checkpoint=str(tmp_path / "nope.npz"))
    junk = tmp_path / "junk.npz"
    junk.write_bytes(path.read_bytes()[:200])
    with pytest.raises(CheckpointError, match="not a readable policy file"):
        PolicyAgent(domino_envs.make_game("draw_v0"), checkpoint=str(junk))
    layers, meta = load_policy(path)
    meta["obs_size"] = 999  # the layers no longer fit what the meta says
    bad = save_policy(tmp_path / "bad.npz", layers, meta)
    with pytest.raises(CheckpointError, match="layer shapes"):
        load_policy(bad)
    layers[0][0][0, 0] = np.nan
    meta["obs_size"] = 122
    nan = save_policy(tmp_path / "nan.npz", layers, meta)
    with pytest.raises(CheckpointError, match="NaN"):
        load_policy(nan)
    (tmp_path / "bad.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="not a readable training checkpoint"):
        load_checkpoint_file(tmp_path / "bad.pt", CHECKPOINT_FORMAT)


def test_resume_continues_exactly_as_an_uninterrupted_run(tmp_path):
    straight = Trainer(tiny_run(), tmp_path / "a")
    for _ in range(4):
        straight.iterate()
    first = Trainer(tiny_run(), tmp_path / "b")
    for _ in range(2):
        first.iterate()
    first.save_checkpoint()
    resumed = Trainer(tiny_run(), tmp_path / "b")
    resumed.load_checkpoint()
    for _ in range(2):
        resumed.iterate()
    assert resumed.update == 4 and resumed.env_steps == straight.env_steps
    for (k, a), b in zip(straight.model.state_dict().items(), resumed.model.state_dict().values()):
        assert torch.equal(a, b), k
    np.testing.assert_array_equal(straight.collector.venv.states, resumed.collector.venv.states)


def test_a_checkpoint_of_another_run_is_refused(tmp_path):
    t = Trainer(tiny_run(), tmp_path)
    t.iterate()
    t.save_checkpoint()
    other = Trainer(tiny_run("draw_v0", "ppo.num_envs=4"), tmp_path / "other")
    with pytest.raises(CheckpointError, match="ppo.num_envs=8, this run 4"):
        other.load_checkpoint(t.checkpoint_path)
    three = Trainer(load_settings(game="draw_v0", overrides=TINY), tmp_path / "x")
    three.run.config = {"num_players": 3}
    with pytest.raises(CheckpointError, match="config"):
        three.load_checkpoint(t.checkpoint_path)


# ------------------------------------------------------------------------------ configs
def test_unknown_or_mistyped_training_keys_fail():
    with pytest.raises(ConfigError, match=r"ppo_bc learner: unknown param 'ppo.lrr'; allowed: .*ppo.lr,"):
        load_settings(game="draw_v0", overrides=["ppo.lrr=1"])
    with pytest.raises(ConfigError, match="unknown training key 'bogus'"):
        set_key(TrainConfig(), "bogus", 1)
    with pytest.raises(ConfigError, match="must be a int"):
        load_settings(game="draw_v0", overrides=["ppo.num_envs=many"])
    with pytest.raises(ConfigError, match="ppo.reward='points' is not allowed"):
        load_settings(game="draw_v0", overrides=["ppo.reward=points"])
    with pytest.raises(ConfigError, match="write KEY=VALUE"):
        parse_override("ppo.lr")
    assert parse_override("ppo.lr=3e-4") == ("ppo.lr", 3e-4)
    assert load_settings(game="draw_v0", overrides=["network.hidden=[8, 4]"]).train.network.hidden == [8, 4]


def test_unknown_key_in_a_config_file_fails(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("game: draw_v0\ntrain:\n  learner: ppo_bc\n  params:\n    ppo_bc:\n      ppo: {learning_rate: 0.1}\n")
    with pytest.raises(ConfigError, match="ppo_bc learner: unknown param 'ppo.learning_rate'; allowed: .*ppo.lr,"):
        load_settings(bad)
    bad.write_text("game: draw_v0\ntrain:\n  budget: {env_steps: 100, minute: 3}\n")
    with pytest.raises(ConfigError, match="unknown training key 'budget.minute'"):
        load_settings(bad)
    bad.write_text("game: draw_v0\ntrainer: {}\n")
    with pytest.raises(ConfigError, match=r"unknown top-level key\(s\) \['trainer'\]"):
        load_settings(bad)


def test_the_format_before_per_learner_params_is_refused_naming_the_new(tmp_path, capsys):
    """Issue 59: `algo` and learner sections beside the run's keys are refused, each in a line naming
    the new spelling (train.learner, train.params.<learner>), from a file, --set and the old flag."""
    old = tmp_path / "old.yaml"
    for text, says in [("train:\n  algo: ppo\n", "train.algo is now train.learner"),
                       ("train:\n  ppo: {lr: 0.001}\n", "a learner's params go under train.params.<learner>"),
                       ("train:\n  budget: {checkpoint_every: 5}\n", "train.params.ppo: {budget.checkpoint_every"),
                       ("train:\n  params: [ppo]\n", "train.params must map each learner's name")]:
        old.write_text("game: draw_v0\n" + text)
        with pytest.raises(ConfigError, match=re.escape(says)):
            load(old)
    with pytest.raises(ConfigError, match=re.escape("--set algo: train.algo is now train.learner (and --algo is --learner)")):
        load(game="draw_v0", overrides=["algo=sb3"])
    assert train_main(["draw_v0", "--algo", "dmc", "--run-dir", str(tmp_path / "r")]) == 2
    assert "--algo dmc: the flag is now --learner dmc" in capsys.readouterr().err
    old.write_text("game: draw_v0\ntrain:\n  learner: ppo\n  params: {ppo_bcc: {}}\n")
    assert train_main(["draw_v0", "--config", str(old), "--run-dir", str(tmp_path / "r")]) == 2
    assert "learner 'ppo_bcc' is not registered (learners: ppo, ppo_bc, dmc, sb3" in capsys.readouterr().err


def test_every_learner_takes_the_game_files_params_then_the_runs():
    """The shipped file's params.<learner> over the learner's defaults, the run's params over them:
    the benchmark's runs (params of the suite) and `domino train` (the file's, --set's) alike."""
    from pathlib import Path

    from domino_training.learners.interface import LEARNERS
    from domino_training.learners.run_folder import LearnerRun

    run = LearnerRun("draw_v0", {}, 0, 1000, [1000], Path("unused"), {"opponents.random": 0.3})
    ppo, ppo_bc = LEARNERS["ppo"].check(run).train, LEARNERS["ppo_bc"].check(run).train
    assert (ppo.ppo.ent_coef, ppo.opponents.self_play, ppo.opponents.random) == (0.003, 0.4, 0.3)  # file, file, run
    assert (ppo.imitation.decisions, ppo_bc.imitation.decisions, ppo_bc.imitation.epochs) == (0, 200_000, 15)
    assert LEARNERS["dmc"].check(run).opponents.random == 0.3  # no file params for dmc: its defaults, then the run's
    game_run = load(game="draw_v0", overrides=["ppo.lr=0.001", "seed=4", "num_players=3"], learner="ppo")
    assert game_run.learner_params()["ppo.lr"] == 0.001 and game_run.learner_params()["ppo.ent_coef"] == 0.003
    assert (game_run.run.seed, game_run.config["num_players"], game_run.learner) == (4, 3, "ppo")


def test_every_config_file_has_a_valid_training_section():
    """Its run, its demo, and every learner's params it gives (the benchmark's runs start from them)."""
    for name in domino_envs.game_names():
        run = load_settings(game=name)
        assert run.train.budget.env_steps > 0
        demo = load_settings(game=name, demo=True)
        assert demo.train.budget.env_steps <= run.train.budget.env_steps
        learners = load(game=name).params
        assert {"ppo", "ppo_bc", "sb3"} <= set(learners), name
        for learner in learners:
            load_settings(game=name, learner=learner)


# ------------------------------------------------------------------------------ end to end
def test_a_tiny_run_end_to_end_writes_every_output(tmp_path, capsys):
    evals = ["eval.every_updates=1", "eval.deals=4", "eval.final_deals=4", "eval.opponents=[random, greedy]",
             "eval.final_opponents=[random]"]
    report = train(tiny_game_run("draw_v0", *evals), tmp_path, progress=False)
    for name in ("checkpoint.pt", "policy.npz", "config.yaml", "log.csv", "eval.csv", "final_eval.md", "final_eval.json"):
        assert (tmp_path / name).is_file(), name
    assert any((tmp_path / "tb").iterdir())
    assert ("ppo_bc", "random") in report.matchups  # the file's learner (its warm start off here)
    # the folder holds a run now: starting again without --resume is refused; with it, it goes on
    sets = sum([["--set", s] for s in TINY + evals], [])
    assert train_main(["draw_v0", "--run-dir", str(tmp_path), "--no-progress"] + sets) == 2
    assert "--resume" in capsys.readouterr().err
    rows = (tmp_path / "log.csv").read_text()
    assert train_main(["draw_v0", "--run-dir", str(tmp_path), "--resume", "--no-progress"] + sets) == 0
    assert (tmp_path / "log.csv").read_text() == rows  # finished: nothing trained again
    assert len(rows.strip().splitlines()) == 1 + 4  # header + 4 updates of 64 decisions
    # another budget is another run: refused, naming what differs
    assert train_main(["draw_v0", "--run-dir", str(tmp_path), "--resume", "--no-progress", *sets,
                       "--set", "budget.env_steps=512"]) == 2
    assert "holds a run with budget.env_steps=256, eval marks=[64, 128, 192, 256]: " in capsys.readouterr().err


def test_perfect_information_critic_reads_every_seat_starting_with_its_own(tmp_path):
    trainer = Trainer(tiny_run("draw_v0", "ppo.perfect_info_critic=true"), tmp_path)
    col = trainer.collector
    row = trainer.iterate()
    assert np.isfinite(row["value_loss"]) and col.buf.critic_in.shape[1] == 2 * col.game.obs_size
    col._observe_all(col._gid, col.venv.states, col.game.params, col._all_obs)
    rows, seats = np.array([0, 1, 2]), np.array([1, 0, 1])
    cin = col.critic_inputs(rows, seats)
    for j, (r, k) in enumerate(zip(rows, seats)):
        state = col.venv.states[r]
        expected = np.concatenate([col.game.observe(state, int(k)), col.game.observe(state, int(1 - k))])
        np.testing.assert_array_equal(cin[j], expected)
    # the actor alone is exported: the policy file fits the game as any other
    assert PolicyAgent(col.game, checkpoint=str(trainer.export_policy())).layers[0][0].shape[1] == col.game.obs_size


def test_imitation_warm_start_copies_the_teacher(tmp_path):
    """Behaviour cloning of greedy (a fixed rule): the actor's agreement with it rises well above
    chance, and the critic's targets are each seat's final win share minus the fair share."""
    from domino_training.learners.imitate import clone, demonstrations

    run = tiny_run("draw_v0", "network.hidden=[32]")
    obs, masks, actions, targets = demonstrations(run, 2048, "greedy", num_envs=16, seed=3)
    assert len(actions) > 1000 and masks[np.arange(len(actions)), actions].all()
    assert set(np.round(targets, 6)) <= {-0.5, 0.0, 0.5}
    trainer = Trainer(run, tmp_path)
    before = clone(trainer.model, obs, masks, actions, targets, 1, np.random.default_rng(0), lr=1e-9)
    after = clone(trainer.model, obs, masks, actions, targets, 30, np.random.default_rng(0), lr=3e-3)
    assert after["bc_agreement"] > max(0.85, before["bc_agreement"] + 0.2)


@pytest.mark.parametrize("name", domino_envs.game_names())
def test_the_shipped_agent_loads_by_name_and_plays_legal_moves(name):
    """agents/checkpoints/<env>.npz exists for every env, fits the env's default config, and plays
    whole hands through the evaluation harness (which refuses an illegal move)."""
    from domino_training.evaluate import evaluate

    game = domino_envs.make_game(name)
    agent = make_agent("trained", game, seed=0)
    assert agent.meta["game"] == name and agent.meta["env_steps"] > 0
    report = evaluate(name, ["trained", "random"], 2, seed=0, pairs=[("trained", "random")], progress=False)
    assert report.matchups[("trained", "random")].win.size == 2
    with pytest.raises(CheckpointError, match="config differs"):
        make_agent("trained", domino_envs.make_game(name, match=True) if name != "magic7_v0"
                   else domino_envs.make_game(name, num_players=2))


def test_a_default_run_trains_on_one_torch_thread_and_says_so(tmp_path):
    """Issue 42: one thread unless asked (two fight over a busy machine's cores), printed at the start."""
    import torch

    before = torch.get_num_threads()
    seen, lines = [], []
    run = load(game="draw_v0", overrides=[k for k in TINY if not k.startswith("ppo.torch_threads")])
    try:
        torch.set_num_threads(2)
        real = torch.set_num_threads

        def spy(n):
            seen.append(n)
            real(n)

        torch.set_num_threads = spy
        train(run, tmp_path, progress=False, echo=lines.append)
    finally:
        torch.set_num_threads = real
        torch.set_num_threads(before)
    assert seen and set(seen) == {1}, seen
    assert any(line.startswith("torch: 1 CPU thread(s) for the update (ppo.torch_threads;") for line in lines), lines


def test_torch_threads_go_to_the_update_and_collection_stays_on_one(tmp_path, monkeypatch):
    """ppo.torch_threads=2: the PPO update (large minibatches) runs on 2 threads, collection's small
    forward passes on 1 (threads there cost more than they give), and the caller's count is back after."""
    import torch

    from domino_training.learners import ppo

    seen = {"update": [], "collect": []}
    real_update, real_collect = ppo.ppo_update, ppo.Collector.collect

    def update(*args, **kwargs):
        seen["update"].append(torch.get_num_threads())
        return real_update(*args, **kwargs)

    def collect(self, *args, **kwargs):
        seen["collect"].append(torch.get_num_threads())
        return real_collect(self, *args, **kwargs)

    monkeypatch.setattr(ppo, "ppo_update", update)
    monkeypatch.setattr(ppo.Collector, "collect", collect)
    trainer = ppo.Trainer(tiny_run("draw_v0", "ppo.torch_threads=2"), tmp_path)
    for _ in range(2):
        trainer.iterate()
    assert seen == {"update": [2, 2], "collect": [1, 1]}, seen
    assert torch.get_num_threads() == 1
