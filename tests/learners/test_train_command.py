"""`domino train GAME --learner L` (training/learners/train.py) for every learner CI runs, the example
learner of docs/examples/ included: each trains a tiny budget through the one driver into the same
run-folder layout, refuses to start again over a finished run, does nothing more when resumed, and
its policy plays in `domino evaluate`."""
from __future__ import annotations

import json
from pathlib import Path

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
    assert "unknown learner 'nope'" in capsys.readouterr().err
