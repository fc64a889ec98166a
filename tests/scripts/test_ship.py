"""The shipped-agents table (training/scripts/ship.py): a column per baseline and per search an env was
measured against, "-" where it was not, and each interval judged against its env's fair share; the
trainings of several envs in worker processes ship what the serial run ships."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
import yaml

import domino_agents.trained as trained
from domino_training.scripts import ship
from domino_training.scripts.ship import markdown
from tests.training.test_parallel import error_lines


def _row(opponent, win, lo, hi, deals):
    return {"opponent": opponent, "deals": deals, "win": win, "win_lo": lo, "win_hi": hi}


def test_the_table_has_a_column_per_search_and_marks_intervals_not_above_the_fair_share():
    base = [_row(o, 0.6, 0.55, 0.65, 2000) for o in ("random", "greedy", "heuristic")]
    results = [
        {"game": "draw_v0", "num_players": 2, "fair_share": 0.5, "env_steps": 4_100_000, "seed": 7,
         "rows": base + [_row("pimc:n=64,rollout=random", 0.52, 0.505, 0.535, 2000)]},
        {"game": "magic7_v0", "num_players": 4, "fair_share": 0.25, "env_steps": 3_400_000, "seed": 7,
         "rows": base + [_row("pimc:n=16", 0.238, 0.217, 0.259, 300)]},
    ]
    lines = markdown(results).splitlines()
    header = next(line for line in lines if line.startswith("| env"))
    assert header.endswith("| vs heuristic | vs pimc:n=64,rollout=random | vs pimc:n=16 |")
    draw = next(line for line in lines if line.startswith("| draw_v0"))
    magic = next(line for line in lines if line.startswith("| magic7_v0"))
    assert draw.endswith("| 0.520 [0.505, 0.535] | - |")
    assert magic.endswith("| - | 0.238 [0.217, 0.259] (not above fair share) |")
    assert "evaluation seed 7" in lines[2]
    assert lines[-1] == "Deals per matchup: baselines 2000, `pimc:n=64,rollout=random` 2000, `pimc:n=16` 300."


TINY = ["budget.env_steps=1024", "budget.minutes=0", "imitation.decisions=0", "ppo.num_envs=16", "ppo.rollout_steps=16",
        "ppo.minibatch_size=128", "ppo.epochs=1", "network.hidden=[16]", "eval.every_updates=0"]


def test_two_workers_train_and_ship_what_one_does(tmp_path, monkeypatch, capsys):
    """`--workers 2` trains two envs in two processes: the shipped policies, docs/trained.json and .md
    and the printed lines (less the seconds) are the serial run's. A bad --workers or --set is exit
    status 2 before anything is written; a training that fails in its worker is one line naming it, exit
    status 2."""
    games = ["block_v0", "draw_v0"]

    def run(name: str, workers: str, *extra: str) -> int:
        monkeypatch.setattr(trained, "SHIPPED_DIR", tmp_path / name / "checkpoints")
        monkeypatch.setattr(ship, "DOCS", tmp_path / name / "docs")
        (tmp_path / name / "docs").mkdir(parents=True, exist_ok=True)
        argv = [*games, "--deals", "0", "--pimc-deals", "0", "--run-root", str(tmp_path / name / "runs"),
                "--workers", workers, *extra]
        return ship.main([*argv, *(f"--set={t}" for t in TINY)])

    for workers, extra, said in (("0", [], "workers=0"), ("-1", [], "workers=-1"), ("two", [], "invalid int"),
                                 ("2", ["--set", "ppo.nope=1"], "unknown param 'ppo.nope'")):
        with pytest.raises(SystemExit) as e:
            run("bad", workers, *extra)
        assert e.value.code == 2 and said in capsys.readouterr().err
    assert not (tmp_path / "bad" / "runs").exists() and not list((tmp_path / "bad" / "docs").iterdir())

    def shipped(name: str) -> list:
        out = re.sub(r"\d[\d,.]* (s|steps/s)\b", r"N \1", capsys.readouterr().out).replace(str(tmp_path / name), "W")
        here = str(tmp_path / name)  # a later stage's init_actor names the first stage's folder
        pages = [(tmp_path / name / "docs" / f).read_text().replace(here, "W") for f in ("trained.json", "trained.md")]
        policies = [trained.load_policy(tmp_path / name / "checkpoints" / f"{g}.npz") for g in games]
        return [out, pages, [[w.tolist() for layer in layers for w in layer] for layers, _ in policies],
                [json.dumps(meta).replace(here, "W") for _, meta in policies]]

    assert run("serial", "1") == 0
    serial = shipped("serial")
    assert "block_v0: shipped W/checkpoints/block_v0.npz (N s this session)" in serial[0]
    assert json.loads(serial[1][0])[0]["game"] == "block_v0"
    # draw_v0's recipe has stages: each later one goes on from the one before's actor; the last ships
    runs = tmp_path / "serial" / "runs"
    stages = ship.stage_dirs("draw_v0", runs)
    assert len(stages) > 1 and stages[1] == runs / "draw_v0.stage2" and not (runs / "block_v0.stage2").exists()
    for before, stage in zip(stages, stages[1:]):
        params = yaml.safe_load((stage / "config.yaml").read_text())["params"]
        assert params["network.init_actor"] == str(before / "policy.npz") and params["imitation.decisions"] == 0
    layers = [trained.load_policy(stage / "policy.npz")[0] for stage in stages]
    shipped_layers = trained.load_policy(tmp_path / "serial" / "checkpoints" / "draw_v0.npz")[0]
    assert all(np.array_equal(a, b) for x, y in zip(layers[-1], shipped_layers) for a, b in zip(x, y))
    assert not all(np.array_equal(a, b) for x, y in zip(layers[-1], layers[-2]) for a, b in zip(x, y))
    assert run("parallel", "2") == 0
    parallel = shipped("parallel")
    assert parallel == serial and np.asarray(parallel[2][0][0]).size
    (tmp_path / "fails" / "runs").mkdir(parents=True)
    (tmp_path / "fails" / "runs" / "draw_v0").write_text("a file where the run folder goes")
    assert run("fails", "2") == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and lines[0].startswith("python -m domino_training.scripts.ship: error: the training of "
                                                   "draw_v0 failed in its worker: "), lines


def test_each_recipe_ends_where_the_shipped_policy_did():
    """The last stage of each config's recipe stops at the decisions the shipped policy's last stage
    reached (docs/trained.json: PPO's; a run's budget counts its imitation decisions too) on that run's
    learning-rate schedule (annealed over its budget)."""

    rows = json.loads((ship.DOCS / "trained.json").read_text())
    assert len(rows) == 6
    for row in rows:
        last = dict(kv.split("=", 1) for kv in ship.load_stages(row["game"])[-1])
        imitation = row["train"]["imitation"]["decisions"]  # 0 in a stage after the first
        assert int(last["budget.env_steps"]) == row["env_steps"] + imitation, row["game"]
        assert int(last["ppo.lr_horizon"]) == row["train"]["budget"]["env_steps"], row["game"]


def test_a_recipe_is_checked_stage_by_stage(tmp_path):
    from domino_training.configs import ConfigError, default_path, stage_overrides

    steps = [200000 + 3358720, 9273344, 8994816, 14647296]  # imitation, then the PPO decisions each stage reached
    assert ship.load_stages("magic7_v0") == [[f"budget.env_steps={n}", "budget.minutes=0", "ppo.lr_horizon=40000000",
                                         "ppo.torch_threads=2"] for n in steps]
    text = default_path("draw_v0").read_text().split("stages:")[0]
    (tmp_path / "none.yaml").write_text(text)
    assert ship.load_stages("draw_v0", tmp_path / "none.yaml") == [[]]
    (tmp_path / "bad.yaml").write_text(text + "stages:\n  - {budget.minutes: 12}\n  - {ppo.nope: 1}\n")
    with pytest.raises(ConfigError, match=r"stages\[1\]: .*ppo.nope"):
        ship.load_stages("draw_v0", tmp_path / "bad.yaml")
    (tmp_path / "flat.yaml").write_text(text + "stages: {budget.minutes: 12}\n")
    with pytest.raises(ConfigError, match="'stages' must be a list of mappings"):
        ship.load_stages("draw_v0", tmp_path / "flat.yaml")
    assert stage_overrides(["budget.minutes=40"], None) == ["budget.minutes=40"]
    assert stage_overrides(["budget.minutes=40"], "a/policy.npz") == [
        "network.init_actor=a/policy.npz", "imitation.decisions=0", "budget.minutes=40"]
