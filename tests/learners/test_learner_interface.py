"""The learner interface (training/learners/interface.py): every learner trains through `train_learner` to a
tiny budget and saves a policy per mark that plays; a run killed between marks resumes to the same
points (the same weights for ppo and dmc); bad params, runs and names fail clearly; DMC learns
something measurable in seconds; the example user learner (docs/examples/my_learner.py) end to end."""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from domino_agents.registry import make_agent
from domino_agents.trained import load_policy
from domino_envs.errors import CheckpointError, ConfigError
from domino_envs.registry import make_game
from domino_training.evaluate import evaluate
from domino_training.learners import LEARNERS, LearnerError, LearnerRun, learner_names, train_learner

ROOT = Path(__file__).resolve().parents[2]
GAME = "draw_v0"
# tiny settings per learner: a few thousand env steps in a second or two
TINY = {
    "ppo": {"ppo.num_envs": 16, "ppo.rollout_steps": 16, "ppo.minibatch_size": 128, "ppo.epochs": 2,
            "network.hidden": [16], "ppo.torch_threads": 1},
    "ppo_bc": {"ppo.num_envs": 16, "ppo.rollout_steps": 16, "ppo.minibatch_size": 128, "ppo.epochs": 2,
               "network.hidden": [16], "ppo.torch_threads": 1, "imitation.decisions": 2560, "imitation.epochs": 1},
    "dmc": {"dmc.num_envs": 16, "dmc.rollout_steps": 16, "dmc.batch_size": 64, "dmc.replay_size": 1024,
            "network.hidden": [16], "dmc.torch_threads": 1},
    "sb3": {"sb3.n_steps": 64, "sb3.batch_size": 64, "sb3.n_envs": 2, "sb3.n_epochs": 1, "network.hidden": [16],
            "sb3.torch_threads": 1},
}
BUILTIN = ["ppo", "ppo_bc", "dmc", "sb3"]
SPEC = {"ppo": "mlp:checkpoint=", "ppo_bc": "mlp:checkpoint=", "dmc": "dmc:checkpoint=", "sb3": "mlp:checkpoint="}


def tiny(learner: str, run_dir: Path, budget: int = 1024, marks=(512, 1024), **params) -> LearnerRun:
    return LearnerRun(GAME, {}, 3, budget, list(marks), run_dir, {**TINY[learner], **params})


def weights(spec: str):
    return load_policy(spec.split("checkpoint=", 1)[1])[0]


def test_the_learners_package_and_the_train_command_import_no_torch():
    """The built-ins are a name -> module table imported on first use: importing the package, its
    registry and the `domino train` command loads no torch; looking a learner up imports its module."""
    import subprocess

    code = ("import sys\nimport domino_training, domino_training.learners, domino_training.learners.train\n"
            "from domino_training.learners import LEARNERS, learner_names\n"
            "assert learner_names() == ['ppo', 'ppo_bc', 'dmc', 'sb3', 'rllib'], learner_names()\n"
            "assert 'torch' not in sys.modules, 'torch imported'\n"
            "LEARNERS['dmc']\nassert 'torch' in sys.modules and 'domino_training.learners.dmc' in sys.modules\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-2000:]


def test_every_builtin_non_optional_learner_is_tested_here():
    assert learner_names(optional=False) == BUILTIN
    assert LEARNERS["rllib"].optional


@pytest.mark.parametrize("learner", BUILTIN)
def test_learner_saves_a_playing_policy_at_each_mark(learner, tmp_path):
    budget, marks = (4096, [3072, 4096]) if learner == "ppo_bc" else (1024, [512, 1024])  # past the imitation
    points = train_learner(learner, tiny(learner, tmp_path / "run", budget, marks))
    assert [p.mark for p in points] == marks and all(p.spec.startswith(SPEC[learner]) for p in points)
    assert all(p.env_steps >= p.mark for p in points) and points[0].env_steps < marks[1]
    assert 0 < points[0].seconds <= points[1].seconds
    game = make_game(GAME)
    for p in points:
        make_agent(p.spec, game)  # loads
        report = evaluate(GAME, [p.spec, "random"], 3, seed=1)  # an illegal move would raise
        assert report.matchups[(p.spec, "random")].win.shape == (3,)
    assert not np.array_equal(weights(points[0].spec)[0][0], weights(points[1].spec)[0][0])  # it trained
    again = train_learner(learner, tiny(learner, tmp_path / "run", budget, marks))  # finished: the same points, nothing retrained
    assert again == points


def test_env_steps_count_every_seat(tmp_path):
    """ppo and dmc step all games of the vector env each step; sb3 adds its opponents' moves to its timesteps."""
    points = train_learner("dmc", tiny("dmc", tmp_path / "dmc"))
    assert [p.env_steps for p in points] == [512, 1024]  # 16 games x 16 steps per iteration
    train_learner("sb3", tiny("sb3", tmp_path / "sb3"))
    state = json.loads((tmp_path / "sb3" / "sb3_points.json").read_text())
    # two players: the opponent moves about as often as the learner
    assert 1.6 * state["timesteps"] < state["env_steps"] < 2.4 * state["timesteps"]


def test_ppo_bc_counts_its_teacher_decisions(tmp_path):
    points = train_learner("ppo_bc", tiny("ppo_bc", tmp_path / "bc", budget=3072, marks=[2560, 3072]))
    assert points[0].env_steps == 2560  # the imitation's 2560 decisions, before any PPO update
    assert points[1].env_steps == 2560 + 2 * 256


# ------------------------------------------------------------------------------ resume
@pytest.mark.parametrize("learner,module,cls", [("ppo", "domino_training.learners.ppo", "Trainer"),
                                                ("dmc", "domino_training.learners.dmc", "DMCTrainer")])
def test_a_run_killed_between_marks_resumes_to_the_same_files(learner, module, cls, tmp_path, monkeypatch):
    marks = [1024, 2048]
    whole = train_learner(learner, tiny(learner, tmp_path / "whole", 2048, marks))
    target = getattr(importlib.import_module(module), cls)
    iterate = target.iterate

    def killed(self):
        if self.env_steps >= 1024 + 512:  # past mark 1, two iterations short of mark 2
            raise KeyboardInterrupt("killed")
        return iterate(self)

    monkeypatch.setattr(target, "iterate", killed)
    with pytest.raises(KeyboardInterrupt):
        train_learner(learner, tiny(learner, tmp_path / "cut", 2048, marks))
    saved = json.loads((tmp_path / "cut" / "points.json").read_text())["points"]
    assert [p["mark"] for p in saved] == [1024]
    first = (tmp_path / "cut" / "policy_000000001024.npz").read_bytes()
    monkeypatch.setattr(target, "iterate", iterate)
    resumed = train_learner(learner, tiny(learner, tmp_path / "cut", 2048, marks))
    assert (tmp_path / "cut" / "policy_000000001024.npz").read_bytes() == first  # not retrained
    assert [(p.mark, p.env_steps) for p in resumed] == [(p.mark, p.env_steps) for p in whole]
    for a, b in zip(whole, resumed):
        for (wa, ba), (wb, bb) in zip(weights(a.spec), weights(b.spec)):
            np.testing.assert_array_equal(wa, wb)
            np.testing.assert_array_equal(ba, bb)


def test_sb3_resumes_from_its_last_mark(tmp_path, monkeypatch):
    from domino_training.learners import interface as learners

    calls = []
    save = learners.PointLog.save

    def kill_after_first(self, *args):
        point = save(self, *args)
        calls.append(point)
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(learners.PointLog, "save", kill_after_first)
    with pytest.raises(KeyboardInterrupt):
        train_learner("sb3", tiny("sb3", tmp_path / "run"))
    monkeypatch.setattr(learners.PointLog, "save", save)
    first = (tmp_path / "run" / "policy_000000000512.npz").read_bytes()
    # killed after the point, before the model was saved: it resumes from scratch, the point stays
    points = train_learner("sb3", tiny("sb3", tmp_path / "run"))
    assert [p.mark for p in points] == [512, 1024] and points[0] == calls[0]
    assert (tmp_path / "run" / "policy_000000000512.npz").read_bytes() == first


def test_compiling_does_not_count_against_the_time_budget(tmp_path, monkeypatch):
    """Issue 55: on a cold numba cache the first collection compiles for minutes; a time budget counts
    the seconds less numba's compiling, so a run whose first update spent an hour "compiling" (a
    numba:compile event around a stand-in clock's jump: deterministic, no sleep) still makes every
    update of its 1-minute budget, where the same hour spent outside a compile ends it at once."""
    from numba.core import event

    from domino_training.learners import run_folder
    from domino_training.learners.ppo import Trainer

    hours = [0.0]
    monkeypatch.setattr(run_folder, "now", lambda: time.perf_counter() + 3600.0 * hours[0])
    iterate = Trainer.iterate

    def cold(self):
        if self.update == 0:
            with event.trigger_event("numba:compile", data={"dispatcher": None, "args": (), "return_type": None}):
                with event.trigger_event("numba:compile"):  # a kernel compiles the kernels it calls inside its own event
                    hours[0] += 0.5
                hours[0] += 0.5
        return iterate(self)

    def slow(self):
        if self.update == 0:
            hours[0] += 1.0
        return iterate(self)

    marks = [256, 512, 768, 1024]  # one update each (16 games x 16 steps)
    monkeypatch.setattr(Trainer, "iterate", cold)
    points = train_learner("ppo", tiny("ppo", tmp_path / "cold", 1024, marks), minutes=1.0)
    assert [(p.mark, p.env_steps) for p in points] == [(m, m) for m in marks]
    assert "skipped" not in json.loads((tmp_path / "cold" / "points.json").read_text())
    monkeypatch.setattr(Trainer, "iterate", slow)
    points = train_learner("ppo", tiny("ppo", tmp_path / "slow", 1024, marks), minutes=1.0)
    assert [(p.mark, p.env_steps) for p in points] == [(1024, 256)]  # the budget spent after the first update
    assert json.loads((tmp_path / "slow" / "points.json").read_text())["skipped"] == [256, 512, 768]


def test_the_imitation_warm_start_does_not_count_against_the_time_budget(tmp_path, monkeypatch):
    """docs/training.md: budget.minutes caps PPO, the warm start comes on top: an hour of imitation (a
    stand-in clock's jump) leaves a 1-minute budget whole."""
    from domino_training.learners import run_folder
    from domino_training.learners.ppo import Trainer

    hours = [0.0]
    monkeypatch.setattr(run_folder, "now", lambda: time.perf_counter() + 3600.0 * hours[0])
    warm_start = Trainer.warm_start

    def an_hour(self):
        hours[0] += 1.0
        return warm_start(self)

    monkeypatch.setattr(Trainer, "warm_start", an_hour)
    marks = [2560 + 256, 2560 + 512]  # after the 2,560 imitation decisions, one update each
    points = train_learner("ppo_bc", tiny("ppo_bc", tmp_path / "bc", marks[-1], marks), minutes=1.0)
    assert [(p.mark, p.env_steps) for p in points] == [(m, m) for m in marks]


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize("learner,key", [("ppo", "ppo.no_such_key"), ("ppo", "eval.deals"), ("ppo", "budget.minutes"),
                                         ("ppo", "seed"), ("ppo", "budget.env_steps"), ("ppo_bc", "zzz.lr"),
                                         ("dmc", "dmc.no_such_key"), ("dmc", "ppo.lr"), ("sb3", "ppo.lr"),
                                         ("rllib", "rllib.no_such_key")])
def test_an_unknown_param_is_refused_naming_it(learner, key, tmp_path):
    run = LearnerRun(GAME, {}, 0, 1024, [1024], tmp_path / "run", {key: 1})
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        train_learner(learner, run)
    assert not (tmp_path / "run").exists()  # refused before anything is written


def test_a_bad_param_value_is_refused_naming_it(tmp_path):
    with pytest.raises(ConfigError, match=r"dmc\.epsilon"):
        train_learner("dmc", LearnerRun(GAME, {}, 0, 1024, [1024], tmp_path, {"dmc.epsilon": 2.0}))
    with pytest.raises(ConfigError, match=r"ppo\.lr"):
        train_learner("ppo", LearnerRun(GAME, {}, 0, 1024, [1024], tmp_path, {"ppo.lr": "fast"}))


def _bad_value(bounds: dict, default):
    """A value just outside a field's bounds (training/settings.py `bounded`)."""
    if "verify" in bounds:
        return "tpu"  # no torch device of that name
    if "rule" in bounds:
        return [] if isinstance(default, list) else "no_such_agent"
    if "choices" in bounds:
        return "no_such_choice"
    if "max" in bounds:
        return type(default)(bounds["max"] + 1)
    return type(default)(bounds["min"] - 1) if "min" in bounds else type(default)(bounds["gt"])


def _bounded_params(learner: str) -> dict:
    """Every bounded key of a learner's settings (its params) -> (bad value, its bound in words)."""
    from domino_training.settings import _allowed, keys

    entry = LEARNERS[learner]
    out = {}
    defaults = keys(entry.settings(), entry.sections)

    def walk(obj, prefix):
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if dataclasses.is_dataclass(value):
                walk(value, prefix + f.name + ".")
            elif f.metadata and prefix + f.name in defaults:
                out[prefix + f.name] = (_bad_value(f.metadata, value),
                                        None if "verify" in f.metadata else _allowed(f.metadata))

    walk(entry.settings(), "")
    return out


@pytest.mark.parametrize("learner", [*BUILTIN, "rllib"])
def test_a_bad_value_in_any_learners_settings_is_the_same_error_naming_key_and_bound(learner, tmp_path):
    """The one checker (training/settings.py `check`): a value outside any bounded field of any learner's
    settings, planted as a param, is refused before anything is written with the same ConfigError,
    ``KEY=VALUE is not allowed; BOUND``."""
    planted = _bounded_params(learner)
    assert len(planted) >= 8, f"{learner}: only {sorted(planted)} declare bounds"
    for key, (bad, bound) in planted.items():  # the learner's check, which train_learner calls first (fast to fail)
        with pytest.raises(ConfigError) as err:
            LEARNERS[learner].check(LearnerRun(GAME, {}, 0, 1024, [1024], tmp_path / "run", {key: bad}))
        said = str(err.value)
        assert said.startswith(f"{key}={bad!r} is not allowed; ") or said.startswith(f"{key}={float(bad)!r} is "
                                                                                     f"not allowed; "), said
        assert bound is None or said.endswith(bound), (said, bound)
    key, (bad, _) = next(iter(planted.items()))
    with pytest.raises(ConfigError, match=re.escape(f"{key}=")):
        train_learner(learner, LearnerRun(GAME, {}, 0, 1024, [1024], tmp_path / "run", {key: bad}))
    assert not (tmp_path / "run").exists()


def test_best_response_settings_go_through_the_same_checker():
    from domino_training.exploit.best_response import BRSettings

    for key in ("steps", "seeds", "marks", "deals", "curve_deals", "imitation"):
        with pytest.raises(ConfigError, match=rf"^best response {key}=0 is not allowed; must be >= 1$"):
            BRSettings(**{key: 0}).check()


def test_an_unknown_learner_lists_the_learners(tmp_path):
    with pytest.raises(LearnerError, match=r"unknown learner 'nope'.*'ppo', 'ppo_bc', 'dmc', 'sb3', 'rllib'"):
        train_learner("nope", LearnerRun(GAME, {}, 0, 1024, [1024], tmp_path, {}))


@pytest.mark.parametrize("change,match", [({"budget": 0, "marks": [0]}, "budget"),
                                          ({"marks": [512, 512, 1024]}, "marks"),
                                          ({"marks": [512]}, "marks"), ({"game": "chess_v0"}, "chess_v0"),
                                          ({"config": {"no_such_rule": 1}}, "no_such_rule"), ({"seed": -1}, "seed")])
def test_a_bad_run_is_refused(change, match, tmp_path):
    run = {"game": GAME, "config": {}, "seed": 0, "budget": 1024, "marks": [1024], "run_dir": tmp_path, "params": {}}
    with pytest.raises(ConfigError, match=match):
        train_learner("dmc", LearnerRun(**{**run, **change}))


def test_a_folder_of_another_run_is_refused(tmp_path):
    train_learner("dmc", tiny("dmc", tmp_path, 256, [256]))
    with pytest.raises(CheckpointError, match="another run.*seed"):
        train_learner("dmc", LearnerRun(GAME, {}, 4, 256, [256], tmp_path, TINY["dmc"]))
    with pytest.raises(CheckpointError, match="another run.*learner"):
        train_learner("ppo", LearnerRun(GAME, {}, 3, 256, [256], tmp_path, TINY["ppo"]))


def test_rllib_without_ray_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if ray were not installed
    monkeypatch.delitem(sys.modules, "domino_training.learners.rllib", raising=False)
    with pytest.raises(LearnerError, match=r"rllib.*extra.*pip install"):
        train_learner("rllib", LearnerRun(GAME, {}, 0, 1024, [1024], tmp_path, {}))


# ------------------------------------------------------------------------------ dmc learns
DMC_LEARNS = {"dmc.num_envs": 64, "dmc.rollout_steps": 16, "dmc.batch_size": 256, "dmc.replay_size": 8192,
              "dmc.lr": 1e-3, "dmc.sample_reuse": 2.0, "dmc.reward": "score", "network.hidden": [64],
              "dmc.torch_threads": 1}


def beats_random(spec: str) -> tuple[bool, float, float]:
    """(passes, mean, lower bound): win share against random on 300 duplicate Block deals with the
    95% interval's lower end above 0.53 (random's fair share is 0.5; greedy scores 0.61 here)."""
    w = evaluate("block_v0", [spec, "random"], 300, seed=7).matchups[(spec, "random")].win_stat
    return w.lo > 0.53, w.mean, w.lo


def test_dmc_beats_random_after_a_small_budget_and_an_untrained_net_does_not(tmp_path):
    from domino_training.learners.dmc import DMCTrainer, dmc_settings

    run = LearnerRun("block_v0", {}, 0, 128_000, [128_000], tmp_path / "run", DMC_LEARNS)
    untrained = DMCTrainer("block_v0", {}, dmc_settings(run), 0, tmp_path / "untrained")
    path = untrained.export_policy(tmp_path / "untrained" / "policy.npz")
    passes, mean, lo = beats_random(f"dmc:checkpoint={path}")
    assert not passes, f"the check passes an untrained net ({mean:.3f}, lower bound {lo:.3f}): it measures nothing"
    point = train_learner("dmc", run)[-1]
    passes, mean, lo = beats_random(point.spec)
    assert passes, f"dmc after {point.env_steps} env steps: {mean:.3f} vs random, lower bound {lo:.3f} <= 0.53"


# ------------------------------------------------------------------------------ the example
def test_the_example_learner_registers_trains_and_plays(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("my_learner_example", ROOT / "docs" / "examples" / "my_learner.py")
    module = importlib.util.module_from_spec(spec)
    from domino_training.learners import interface as learners

    monkeypatch.setattr(learners, "LEARNERS", dict(LEARNERS))  # the registry as it was, after the test
    monkeypatch.setitem(sys.modules, spec.name, module)  # as --import does: dataclasses look their module up
    spec.loader.exec_module(module)
    assert "my_learner" in learners.LEARNERS and "my_learner" not in LEARNERS
    with pytest.raises(ConfigError, match="unknown param 'search.nope'; allowed: search.num_envs, search.steps_per_round"):
        train_learner("my_learner", LearnerRun(GAME, {}, 0, 1024, [1024], tmp_path / "bad", {"search.nope": 1}))
    table = learners.params_table("my_learner")  # the docs table from the dataclass: every key with its meaning
    assert "| `search.sigma` | `0.1` | scale of the Gaussian noise added to the incumbent |" in table
    run = LearnerRun(GAME, {}, 0, 8192, [4096, 8192], tmp_path / "run", {"search.num_envs": 16})
    points = train_learner("my_learner", run)
    assert [p.mark for p in points] == [4096, 8192]
    for p in points:
        report = evaluate(GAME, [p.spec, "random"], 3, seed=1)
        assert report.matchups[(p.spec, "random")].win.shape == (3,)
    assert train_learner("my_learner", run) == points


# ------------------------------------------------------------------------------ dmc internals
def test_dmc_targets_are_each_seats_final_win_share_and_no_decision_is_lost(tmp_path):
    from domino_training.learners.dmc import DMCTrainer, dmc_settings

    t = DMCTrainer(GAME, {}, dmc_settings(tiny("dmc", tmp_path)), 0, tmp_path)
    made = sum(t.iterate()["learner_decisions"] for _ in range(4))
    assert made == 4 * 16 * 16  # self-play: every decision is the learner's
    assert t.rp_size + t.st_act.size == made  # finished ones in the replay, the rest still staged
    assert set(np.unique(t.rp_target[:t.rp_size]).tolist()) <= {-0.5, 0.0, 0.5}  # 2 players: win 1 - 1/2, loss 0 - 1/2
    assert (t.rp_target[:t.rp_size] != 0).mean() > 0.5  # ties are rare
    assert set(np.unique(t.st_ep).tolist()) <= set(t.episode.tolist())  # staged: games still running


def test_dmc_finish_gives_each_staged_decision_its_own_seats_final_value(tmp_path):
    """Games 7 and 9 end: each of their staged decisions moves to the replay with the final value
    of the seat that made it; game 11's decision stays staged."""
    from domino_training.learners.dmc import DMCTrainer, dmc_settings

    t = DMCTrainer(GAME, {}, dmc_settings(tiny("dmc", tmp_path)), 0, tmp_path)
    t.st_obs = np.arange(4, dtype=np.float32)[:, None].repeat(t.rp_obs.shape[1], axis=1)
    t.st_act, t.st_ep, t.st_seat = np.arange(4), np.array([7, 7, 9, 11]), np.array([0, 1, 1, 0])
    t.rp_ptr = t.rp_size = 0
    t._finish(np.array([9, 7]), np.array([[0.5, -0.5], [-0.25, 0.25]]))
    assert t.rp_size == 3 and t.rp_act[:3].tolist() == [0, 1, 2]
    assert t.rp_target[:3].tolist() == [-0.25, 0.25, -0.5]
    assert t.rp_obs[:3, 0].tolist() == [0.0, 1.0, 2.0]
    assert t.st_ep.tolist() == [11] and t.st_seat.tolist() == [0] and t.st_act.tolist() == [3]


def test_dmc_checkpoint_of_another_run_or_corrupted_is_refused(tmp_path):
    import torch

    from domino_training.learners.dmc import DMCTrainer, dmc_settings

    run = tiny("dmc", tmp_path / "run", 512, [512])
    train_learner("dmc", run)
    path = tmp_path / "run" / "checkpoint.pt"
    with pytest.raises(CheckpointError, match="seed"):
        DMCTrainer(GAME, {}, dmc_settings(run), 4, tmp_path / "run").load_checkpoint()
    data = torch.load(path, weights_only=True)
    data["collector"]["rp_act"][0] = 10_000
    torch.save(data, tmp_path / "bad.pt")
    with pytest.raises(CheckpointError, match="rp_act"):
        DMCTrainer(GAME, {}, dmc_settings(run), 3, tmp_path / "run").load_checkpoint(tmp_path / "bad.pt")
