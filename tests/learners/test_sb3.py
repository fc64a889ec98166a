"""The SB3 path (training/learners/sb3.py) and its agent (agents/sb3_agent.py): a seconds-long MaskablePPO run
on draw_v0 through `domino train --learner sb3` writes its run folder, its model plays legal actions as
an agent, save/load keeps the actions, a model for another game is refused, and a killed run resumes
from its last mark with the timestep count continued."""
from __future__ import annotations

import csv
import json
import shutil

import numpy as np
import pytest
import torch
import yaml

from domino_agents.registry import make_agent
from domino_agents.sb3_agent import SB3Agent
from domino_agents.trained import CheckpointError, PolicyAgent, mlp_logits
from domino_envs.core import H_DONE, H_TURN
from domino_envs.registry import make_game
from domino_training.evaluate import evaluate
from domino_training.learners.run_folder import PointLog
from domino_training.learners.sb3 import LearnerCopy, PoolOpponent, actor_layers
from domino_training.learners.train import load, train

# marks (policies saved, evaluated on 2 deals) every 256 env steps, and at the budget
TINY = ["budget.env_steps=600", "sb3.n_steps=64", "sb3.batch_size=64", "sb3.n_envs=2", "sb3.n_epochs=2",
        "network.hidden=[16]", "sb3.refresh_every=128", "seed=3", "eval.every_env_steps=256", "eval.deals=2",
        "eval.opponents=[random]", "eval.final_deals=0"]


def tiny_run(*extra):
    return load(game="draw_v0", learner="sb3", overrides=[*TINY, *extra])


def train_sb3(run, run_dir, resume=False):
    """`domino train --learner sb3` as a function; the model's path."""
    train(run, run_dir, resume=resume, progress=False, echo=lambda *a: None)
    return run_dir / "sb3_model.zip"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One tiny run shared by the tests; also records the global RNG states around it."""
    run_dir = tmp_path_factory.mktemp("sb3") / "run"
    np.random.seed(123)
    torch.manual_seed(123)
    before = (np.random.get_state()[1].copy(), torch.random.get_rng_state().clone())
    path = train_sb3(tiny_run(), run_dir)
    after = (np.random.get_state()[1].copy(), torch.random.get_rng_state().clone())
    return path, run_dir, before, after


def csv_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def observations(game, hands: int, seed: int = 0):
    """(observation, mask) pairs of the deciding seat along random games."""
    rng = np.random.default_rng(seed)
    state, pairs = game.new_state(), []
    for h in range(hands):
        game.reset(state, seed * 1000 + h)
        while not state[H_DONE]:
            obs, mask = game.observe(state, int(state[H_TURN])), game.legal_mask(state)
            pairs.append((obs, mask))
            game.step(state, int(rng.choice(np.flatnonzero(mask))))
    return pairs


def test_run_writes_model_logs_and_config(trained):
    path, run_dir, before, after = trained
    assert path == run_dir / "sb3_model.zip" and path.is_file()
    points = json.loads((run_dir / "points.json").read_text())
    assert [p["mark"] for p in points["points"]] == [256, 512, 600]
    rows = csv_rows(run_dir / "log.csv")
    steps = [int(r["time_total_timesteps"]) for r in rows]
    assert steps == [128 * (i + 1) for i in range(len(steps))]  # one row per rollout of 64 steps x 2 envs
    env_steps = [int(r["env_steps"]) for r in rows]  # every seat's decisions: more than the learner's timesteps
    assert env_steps == sorted(env_steps) and all(e > t for e, t in zip(env_steps, steps))
    assert env_steps[-2] < 600 <= env_steps[-1] == points["points"][-1]["env_steps"]  # the last rollout reached it
    assert any(r.get("train_value_loss") for r in rows)
    events = list((run_dir / "tb").glob("events.out.tfevents.*"))
    assert events and events[0].stat().st_size > 0
    assert [r["env_steps"] for r in csv_rows(run_dir / "eval.csv")] == [str(p["env_steps"]) for p in points["points"]]
    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert (config["learner"], config["budget"], config["params"]["network.hidden"]) == ("sb3", 600, [16])
    meta = json.loads((run_dir / "sb3_model.json").read_text())
    assert (meta["game"], meta["obs_size"]) == ("draw_v0", make_game("draw_v0").obs_size)
    assert meta["env_steps"] == steps[-1]  # SB3's timesteps at the last save
    # the run seeds SB3's global RNG draws inside a guard: the caller's RNG states are untouched
    assert np.array_equal(before[0], after[0]) and torch.equal(before[1], after[1])


def test_model_plays_legal_actions_as_agent(trained):
    path, *_ = trained
    game = make_game("draw_v0")
    for sample in (False, True):
        agent = make_agent(f"sb3:model={path},sample={str(sample).lower()}", game, seed=1)
        assert isinstance(agent, SB3Agent)
        agent.reset(5)
        for obs, mask in observations(game, 6, seed=2):
            assert mask[agent.act(obs, mask)] == 1
    report = evaluate("draw_v0", [f"sb3:model={path}", "random"], deals=4, seed=0, progress=False)
    assert report.matchups[(f"sb3:model={path}", "random")].win_stat.n == 4


def test_save_load_round_trip_same_actions(trained, tmp_path):
    from sb3_contrib import MaskablePPO

    path, run_dir, *_ = trained
    copy = tmp_path / "again.zip"
    MaskablePPO.load(path, device="cpu").save(copy)
    shutil.copy(run_dir / "sb3_model.json", tmp_path / "again.json")
    game = make_game("draw_v0")
    a, b = SB3Agent(game, model=str(path)), SB3Agent(game, model=str(copy))
    # the exported numpy actor (policy.npz, the ppo agents' format) is the same policy
    c = PolicyAgent(game, checkpoint=str(run_dir / "policy.npz"))
    pairs = observations(game, 8, seed=4)
    acts = [a.act(o, m) for o, m in pairs]
    assert acts == [b.act(o, m) for o, m in pairs] == [c.act(o, m) for o, m in pairs]
    assert len(set(acts)) > 1


def test_actor_copy_matches_torch_logits(trained):
    from sb3_contrib import MaskablePPO

    policy = MaskablePPO.load(trained[0], device="cpu").policy
    obs = np.stack([o for o, _ in observations(make_game("draw_v0"), 3)])
    with torch.no_grad():
        latent = policy.mlp_extractor.forward_actor(policy.extract_features(torch.from_numpy(obs)))
        expected = policy.action_net(latent).numpy()
    np.testing.assert_allclose(mlp_logits(actor_layers(policy), obs), expected, rtol=1e-5, atol=1e-5)


def test_model_for_another_game_is_refused(trained, tmp_path):
    path, run_dir, *_ = trained
    with pytest.raises(CheckpointError, match=r"trained on 'draw_v0', not 'sum7_v0'.*observation size 122 vs 169"):
        make_agent(f"sb3:model={path}", make_game("sum7_v0"))
    # block_v0 has draw_v0's sizes: only the recorded game tells them apart
    with pytest.raises(CheckpointError, match=r"trained on 'draw_v0', not 'block_v0'"):
        make_agent(f"sb3:model={path}", make_game("block_v0"))
    # without the description beside it, the spaces still are checked
    bare = tmp_path / "bare.zip"
    shutil.copy(path, bare)
    with pytest.raises(CheckpointError, match=r"observation shape \(122,\) vs \(169,\); 56 actions vs 57"):
        SB3Agent(make_game("sum7_v0"), model=str(bare))
    broken = tmp_path / "broken.zip"
    broken.write_bytes(path.read_bytes()[:500])
    with pytest.raises(CheckpointError, match="not a readable MaskablePPO model"):
        SB3Agent(make_game("draw_v0"), model=str(broken))
    with pytest.raises(CheckpointError, match="does not exist"):
        SB3Agent(make_game("draw_v0"), model=str(tmp_path / "missing.zip"))


def test_a_killed_run_resumes_from_its_last_mark(trained, tmp_path, monkeypatch):
    _, run_dir, *_ = trained
    again = tmp_path / "run"
    save = PointLog.save

    def killed_at_512(self, mark, *args):
        if mark == 512:
            raise KeyboardInterrupt("killed")
        return save(self, mark, *args)

    monkeypatch.setattr(PointLog, "save", killed_at_512)
    with pytest.raises(KeyboardInterrupt):
        train_sb3(tiny_run(), again)
    monkeypatch.setattr(PointLog, "save", save)
    at_256 = json.loads((again / "sb3_points.json").read_text())
    with pytest.raises(CheckpointError, match=r"holds a run with network\.hidden=\[16\]: "):
        train_sb3(tiny_run("network.hidden=[8]"), again, resume=True)
    train_sb3(tiny_run(), again, resume=True)
    steps = [int(r["time_total_timesteps"]) for r in csv_rows(again / "log.csv")]
    assert steps == [128 * (i + 1) for i in range(len(steps))]  # rows past the mark dropped, the count continued
    assert steps[-1] > at_256["timesteps"]
    points = json.loads((again / "points.json").read_text())["points"]
    assert [p["mark"] for p in points] == [256, 512, 600]
    assert [r["env_steps"] for r in csv_rows(again / "eval.csv")] == [str(p["env_steps"]) for p in points]


def test_pool_opponent_draws_and_plays_legal():
    game = make_game("draw_v0")
    learner = LearnerCopy()
    rng = np.random.default_rng(0)
    learner.layers = [(rng.normal(size=(8, game.obs_size)).astype(np.float32), np.zeros(8, np.float32)),
                      (rng.normal(size=(game.num_actions, 8)).astype(np.float32) * 10, np.zeros(game.num_actions, np.float32))]
    weights = {"self_play": 0.5, "snapshot": 0.2, "random": 0.1, "greedy": 0.1, "heuristic": 0.1}

    def kinds(seed):
        opp = PoolOpponent(game, weights, learner, np.random.default_rng(seed))
        out = []
        for i in range(400):
            opp.reset(i)
            out.append(opp.kind)
        return out

    drawn = kinds(7)
    assert drawn == kinds(7) and drawn != kinds(8)  # its own seeded Generator
    share = {k: drawn.count(k) / len(drawn) for k in set(drawn)}
    assert set(share) == {"learner", "random", "greedy", "heuristic"}
    assert abs(share["learner"] - 0.7) < 0.08  # self_play and snapshot both mean the learner copy
    only_copy = PoolOpponent(game, {"self_play": 1.0, "random": 0.0}, learner, np.random.default_rng(1))
    for obs, mask in observations(game, 20, seed=9):
        only_copy.reset(0)
        assert only_copy.kind == "learner" and mask[only_copy.act(obs, mask)] == 1
    with pytest.raises(ValueError, match="unknown opponent kind 'pimc'"):
        PoolOpponent(game, {"pimc": 1.0}, learner, np.random.default_rng(0))


def test_same_seed_same_model(tmp_path):
    from sb3_contrib import MaskablePPO

    def weights(name, seed):
        path = train_sb3(tiny_run("budget.env_steps=256", f"seed={seed}"), tmp_path / name)
        return [p.detach().clone() for p in MaskablePPO.load(path, device="cpu").policy.parameters()]

    a, b, c = weights("a", 3), weights("b", 3), weights("c", 4)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert not all(torch.equal(x, z) for x, z in zip(a, c))


def test_time_cap_stops_and_saves(tmp_path):
    """budget.minutes: the run ends at the first rollout start past the cap, saving the last mark there
    (the marks before it skipped) and a model."""
    train_sb3(tiny_run("budget.minutes=1e-9"), tmp_path)
    points = json.loads((tmp_path / "points.json").read_text())
    assert [p["mark"] for p in points["points"]] == [600] and points["skipped"] == [256, 512]
    assert points["points"][0]["env_steps"] < 256
    assert (tmp_path / "sb3_model.zip").is_file() and (tmp_path / "policy.npz").is_file()
