"""`domino train GAME --learner L` (training/learners/train.py) for every learner CI runs, the example
learner of docs/examples/ included: each trains a tiny budget through the one driver into the same
run-folder layout, refuses to start again over a finished run, does nothing more when resumed, and
its policy plays in `domino evaluate`."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from domino_training.evaluate import main as evaluate_main
from domino_training.learners import interface
from domino_training.learners.train import main as train_main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "docs" / "examples" / "my_learner.py")
RUN = ["budget.env_steps=512", "eval.every_env_steps=256", "eval.deals=2", "eval.opponents=[random]",
       "eval.final_deals=2", "eval.final_opponents=[random, greedy]"]
PPO = ["ppo.num_envs=8", "ppo.rollout_steps=8", "ppo.minibatch_size=32", "network.hidden=[16]", "imitation.decisions=0", "distill.rounds=0"]
SETS = {
    "ppo": PPO,
    "ppo_bc": PPO[:-2] + ["imitation.decisions=2560", "imitation.epochs=1", "budget.env_steps=3072",
                          "eval.every_env_steps=1024"],  # imitation needs whole games: 2,560 decisions of its budget
    "dmc": ["dmc.num_envs=8", "dmc.rollout_steps=8", "dmc.batch_size=32", "network.hidden=[16]"],
    "sb3": ["sb3.n_steps=32", "sb3.batch_size=32", "sb3.n_envs=2", "sb3.n_epochs=1", "network.hidden=[16]"],
    "my_learner": ["search.num_envs=8", "search.steps_per_round=8"],
}
LAYOUT = ("points.json", "config.yaml", "log.csv", "eval.csv", "policy.npz", "final_eval.md", "final_eval.json")


@pytest.mark.parametrize("learner", list(SETS))
def test_each_learner_trains_through_domino_train_into_the_same_layout(learner, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(interface, "LEARNERS", dict(interface.LEARNERS))  # an --import registers into a copy
    monkeypatch.chdir(tmp_path)
    line = ["draw_v0", "--learner", learner, "--run-dir", "run", "--no-progress",
            *(["--import", EXAMPLE] if learner == "my_learner" else []),
            *sum((["--set", s] for s in RUN + SETS[learner]), [])]
    assert train_main(line) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    run = tmp_path / "run"
    for name in LAYOUT:
        assert (run / name).is_file(), (learner, name, sorted(p.name for p in run.iterdir()))
    points = json.loads((run / "points.json").read_text())
    budget = 3072 if learner == "ppo_bc" else 512
    assert points["run"]["learner"] == learner and points["run"]["budget"] == budget
    marks = [p["mark"] for p in points["points"]]
    assert marks[-1] == budget and marks == sorted(set(marks)) and len(marks) >= 2
    assert [int(r.split(",")[0]) for r in (run / "eval.csv").read_text().splitlines()[1:]] == \
           [p["env_steps"] for p in points["points"]]  # each point evaluated once
    assert len((run / "log.csv").read_text().splitlines()) > 1
    assert f"{learner} " in out and "greedy" in out  # the final table names the learner's policy
    # a finished run: refused without --resume, nothing more with it
    assert train_main(line) == 2 and "--resume" in capsys.readouterr().err
    before = (run / "points.json").read_text()
    assert train_main([*line, "--resume"]) == 0
    assert (run / "points.json").read_text() == before
    assert train_main(["draw_v0", "--run-dir", "run", "--resume", "--no-progress"]) == 0  # its settings from the folder
    assert (run / "points.json").read_text() == before
    if learner == "my_learner":  # resumed without the --import that registers it: says so
        interface.LEARNERS.pop("my_learner")
        assert train_main(["draw_v0", "--run-dir", "run", "--resume", "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert "learner 'my_learner' is not registered" in err and "needs the --import that registers it" in err, err
    # its policy plays in domino evaluate
    report = evaluate_main(["--game", "draw_v0", "--agents", points["points"][-1]["spec"], "random", "--deals", "2",
                            "--no-progress"])
    assert report.matchups[(points["points"][-1]["spec"], "random")].win.size == 2


def test_a_learners_own_key_goes_to_it_and_an_unknown_one_is_refused_naming_it(tmp_path, capsys):
    base = ["draw_v0", "--learner", "dmc", "--run-dir", str(tmp_path / "run"), "--no-progress",
            *sum((["--set", s] for s in RUN + SETS["dmc"]), [])]
    assert train_main([*base, "--set", "dmc.no_such_key=1"]) == 2
    assert "dmc.no_such_key" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
    assert train_main(["draw_v0", "--learner", "nope", "--no-progress"]) == 2
    assert "learner 'nope' is not registered (learners: ppo, ppo_bc, dmc, sb3" in capsys.readouterr().err


# ------------------------------------------------------------------------------ resume (issue 55)
def _sets(pairs):
    return sum((["--set", s] for s in pairs), [])


def _weights(run: Path):
    from domino_agents.trained import load_policy

    return load_policy(run / "policy.npz")[0]


def _marks(run: Path):
    return [(p["mark"], p["env_steps"]) for p in json.loads((run / "points.json").read_text())["points"]]


KILLED = {"ppo": ("domino_training.learners.ppo", "Trainer"), "dmc": ("domino_training.learners.dmc", "DMCTrainer")}
STRAIGHT = {}  # learner -> the run folder of the same run never interrupted (made once)


def _straight(learner, tmp_path_factory):
    if learner not in STRAIGHT:
        run = tmp_path_factory.mktemp(f"straight-{learner}") / "run"
        line = ["draw_v0", "--learner", learner, "--run-dir", str(run), "--no-progress", *_sets(RUN + SETS[learner])]
        assert train_main(line) == 0
        STRAIGHT[learner] = run
    return STRAIGHT[learner]


@pytest.mark.parametrize("learner,again", [("ppo", []), ("ppo", ["--set", "ppo.device=cpu:0"]), ("dmc", []),
                                           ("dmc", ["--set", "dmc.device=cpu:0"])])
def test_a_run_started_with_set_flags_resumes_from_its_folder_alone(learner, again, tmp_path, tmp_path_factory,
                                                                     monkeypatch, capsys):
    """Issue 55: the docs' `domino train draw_v0 --run-dir runs/d1 --resume` after a run started with --set
    flags continues that run (the same policy as the run never stopped), on another device too (criterion
    4); the line printed at the interruption is that command."""
    import importlib

    straight = _straight(learner, tmp_path_factory)
    target = getattr(importlib.import_module(KILLED[learner][0]), KILLED[learner][1])
    iterate = target.iterate

    def killed(self):
        if self.env_steps >= 256 + 64:  # past the first mark (256), before the second (512)
            raise KeyboardInterrupt
        return iterate(self)

    monkeypatch.setattr(target, "iterate", killed)
    run = tmp_path / "run"
    line = ["draw_v0", "--learner", learner, "--run-dir", str(run), "--no-progress", *_sets(RUN + SETS[learner])]
    capsys.readouterr()
    assert train_main(line) == 130
    err = capsys.readouterr().err.strip()
    assert err == f"domino train: interrupted; continue with: domino train draw_v0 --run-dir {run} --resume", err
    assert [m for m, _ in _marks(run)] == [256]
    monkeypatch.setattr(target, "iterate", iterate)
    assert train_main([*err.split("continue with: domino train ")[1].split(), "--no-progress", *again]) == 0, \
        capsys.readouterr().err
    assert _marks(run) == _marks(straight)
    for (wa, ba), (wb, bb) in zip(_weights(run), _weights(straight)):
        np.testing.assert_array_equal(wa, wb)
        np.testing.assert_array_equal(ba, bb)
    if again:  # the folder now says where the run last trained
        assert f"{learner}.device" in (run / "points.json").read_text() and "cpu:0" in (run / "points.json").read_text()


def test_a_resume_that_changes_the_run_is_refused_in_one_line_naming_the_stored_values(tmp_path, capsys):
    run = tmp_path / "run"
    line = ["draw_v0", "--run-dir", str(run), "--no-progress", *_sets(RUN + PPO)]
    assert train_main(line) == 0
    before = (run / "points.json").read_text()
    capsys.readouterr()
    assert train_main(["draw_v0", "--run-dir", str(run), "--resume", "--no-progress", "--set", "ppo.lr=0.1",
                       "--set", "budget.env_steps=1024", "--set", "num_players=3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 300, err
    assert (f"domino train: error: {run} holds a run with num_players=2, budget.env_steps=512, eval marks=[256, 512], "
            f"ppo.lr=(unset: the default): resume without those --set flags") in err, err
    # what is not the run may change: a time budget, the evaluation's deals, the device
    assert train_main(["draw_v0", "--run-dir", str(run), "--resume", "--no-progress", "--set", "budget.minutes=3",
                       "--set", "eval.final_deals=4", "--set", "ppo.device=cpu:0"]) == 0
    assert json.loads((run / "points.json").read_text())["points"] == json.loads(before)["points"]
    assert "final_deals: 4" in (run / "train.yaml").read_text()


# ------------------------------------------------------------------------------ Ctrl-C (issue 55)
def _interrupt(args: list[str], started, cwd: Path) -> tuple[int, str]:
    """Run `domino ARGS` in a process, send it SIGINT once `started()` holds (polled, 300 s at most), and
    return its exit status and stderr (60 s at most to end)."""
    import signal
    import subprocess
    import sys
    import time

    # SIGINT as a terminal delivers it: a runner started in the background (`make test &`) ignores SIGINT, and a
    # child would inherit that and never see the interrupt
    proc = subprocess.Popen([sys.executable, "-m", "domino_training.cli", *args], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 300
        while not started() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert proc.poll() is None, f"it ended before it was interrupted: {proc.communicate()[1]}"
        assert started(), "it did not start within 300 s"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, err


def test_ctrl_c_in_train_ends_with_one_line_naming_the_command_that_resumes(tmp_path):
    run = tmp_path / "run"
    code, err = _interrupt(["train", "draw_v0", "--run-dir", str(run), "--no-progress",
                            *_sets(PPO + ["budget.env_steps=100000000", "eval.every_updates=0", "eval.final_deals=0"])],
                           lambda: (run / "log.csv").is_file(), tmp_path)  # after its first update
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err.strip().splitlines()[-1] == \
        f"domino train: interrupted; continue with: domino train draw_v0 --run-dir {run} --resume", err


def test_ctrl_c_in_evaluate_ends_with_one_line_saying_what_was_kept(tmp_path):
    replays = tmp_path / "hands.jsonl"
    code, err = _interrupt(["evaluate", "--game", "draw_v0", "--agents", "heuristic", "random", "--deals", "1000000",
                            "--no-progress", "--save-replays", str(replays)],
                           lambda: replays.is_file() and replays.stat().st_size > 0, tmp_path)
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err.strip().splitlines()[-1] == (
        f"domino evaluate: interrupted: no table written, nothing to resume (run the command again); {replays} keeps "
        f"the hands played so far, and a rerun adds the hands it lacks"), err


def test_ctrl_c_inside_numbas_conversion_of_a_generator_waits_until_it_is_done():
    """numba converts a numpy Generator argument by calling ctypes.cast and uses its result unchecked: a
    KeyboardInterrupt raised inside that call crashed `domino evaluate` (-11) on about one Ctrl-C in five.
    The command's handler raises anywhere else, and inside ctypes' code asks again a moment later."""
    import subprocess
    import sys

    script = (
        "import ctypes, signal, time, types\n"
        "from domino_training.interrupt import guard_interrupts\n"
        "guard_interrupts()\n"
        "handler = signal.getsignal(signal.SIGINT)\n"
        "handler(signal.SIGINT, types.SimpleNamespace(f_code=ctypes.cast.__code__))\n"
        "print('not raised inside ctypes', flush=True)\n"
        "try:\n"
        "    time.sleep(10)\n"
        "except KeyboardInterrupt:\n"
        "    print('raised once outside', flush=True)\n"
        "try:\n"
        "    handler(signal.SIGINT, sys._getframe())\n"
        "except KeyboardInterrupt:\n"
        "    print('raised here', flush=True)\n")
    run = subprocess.run([sys.executable, "-c", "import sys\n" + script], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["not raised inside ctypes", "raised once outside", "raised here"], run.stdout
