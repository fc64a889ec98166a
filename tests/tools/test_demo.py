"""`make demo` (training/tools/demo.py, run here as a function, not through make): it trains with the demo
section of configs/draw.yaml into runs/demo (started afresh), prints the evaluation table, and every file
it names at the end exists. A tiny budget through its overrides; the demo section itself read, not run."""
from __future__ import annotations

import importlib.resources
import re
from pathlib import Path

import yaml

from domino_agents.registry import make_agent
from domino_envs import make_game
from domino_training.tools import demo

TINY = ["budget.env_steps=2512", "imitation.decisions=2000", "imitation.epochs=1", "eval.final_deals=4",
        "ppo.num_envs=8", "ppo.rollout_steps=8", "ppo.minibatch_size=32", "network.hidden=[16]", "ppo.torch_threads=1"]


def test_the_demo_trains_afresh_prints_the_table_and_names_only_files_it_wrote(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "demo").mkdir(parents=True)
    (tmp_path / "runs" / "demo" / "left_from_before.txt").write_text("x")
    assert demo.main(TINY) == 0
    out = capsys.readouterr().out
    assert "training draw_v0 with ppo_bc for 2,512 env steps" in out
    assert not (tmp_path / "runs" / "demo" / "left_from_before.txt").exists()
    for opponent in ("random", "greedy", "heuristic"):
        assert re.search(rf"^ppo_bc +{opponent} +[01]\.\d{{3}} ", out, re.M), opponent
    last = out.strip().splitlines()[-1]
    named = re.findall(r"runs/demo/[\w.]+\.\w+", last)
    assert "runs/demo/policy.npz" in named
    assert all((tmp_path / p).is_file() for p in named), [p for p in named if not (tmp_path / p).is_file()]
    game = make_game("draw_v0")
    agent = make_agent("mlp:checkpoint=runs/demo/policy.npz", game)
    state = game.new_state()
    game.reset(state, 1)
    mask = game.legal_mask(state)
    assert mask[agent.act(game.observe(state, game.current_seat(state)), mask)]


def test_without_overrides_the_demo_runs_the_demo_section_of_the_draw_config(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    got = []

    class Report:
        def table(self):
            return "the table"

    monkeypatch.setattr(demo, "train", lambda run, folder, progress: got.append((run, Path(folder))) or Report())
    assert demo.main([]) == 0
    ((run, folder),) = got
    assert folder == Path("runs/demo") and run.game == "draw_v0"
    section = yaml.safe_load((Path(str(importlib.resources.files("domino_training.game_configs"))) / "draw.yaml")
                             .read_text())["demo"]
    assert run.run.budget.env_steps == section["budget.env_steps"] and run.run.budget.minutes == section["budget.minutes"]
    assert run.learner_params()["imitation.decisions"] == section["imitation.decisions"]
    assert run.run.eval.final_deals == section["eval.final_deals"] and "the table" in capsys.readouterr().out
