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


def test_a_recipe_rerun_on_other_seeds_trains_apart_ships_nothing_and_lands_beside_the_shipped_row(tmp_path, monkeypatch,
                                                                                                   capsys):
    """`--recipe-seeds 1 2` trains the recipe with seed=1 and seed=2 in runs/seed<K>/ (the seed reaching the
    run), copies nothing into the shipped folder, evaluates each against PIMC-64 on the shipped file's deals and
    keeps a row per (env, seed) as each lands, which trained.md sets beside the shipped row; evaluating a rerun
    never trained is one line naming it."""
    docs = tmp_path / "docs"
    docs.mkdir()
    monkeypatch.setattr(ship, "DOCS", docs)
    monkeypatch.setattr(trained, "SHIPPED_DIR", tmp_path / "checkpoints")
    shipped_row = {"game": "block_v0", "num_players": 2, "fair_share": 0.5, "env_steps": 1024, "seed": 2026,
                   "rows": [_row(ship.PIMC, 0.6, 0.55, 0.65, 4)]}
    (docs / "trained.json").write_text(json.dumps([shipped_row]))
    runs = tmp_path / "runs"
    argv = ["block_v0", "--pimc-deals", "4", "--run-root", str(runs), *(f"--set={t}" for t in TINY)]
    train_game = ship.train_game

    def stopped_at_seed_2(game, run_root, *rest):
        if run_root.name == "seed2":
            raise KeyboardInterrupt  # the session ends in the second rerun
        return train_game(game, run_root, *rest)

    monkeypatch.setattr(ship, "train_game", stopped_at_seed_2)
    with pytest.raises(KeyboardInterrupt):
        ship.main([*argv, "--recipe-seeds", "1", "2"])
    assert [r["recipe_seed"] for r in json.loads((docs / ship.RECIPE_SEEDS).read_text())] == [1]  # kept as it landed
    monkeypatch.setattr(ship, "train_game", train_game)
    assert ship.main([*argv, "--recipe-seeds", "1", "2"]) == 0  # seed 1 resumes as done
    assert not (tmp_path / "checkpoints").exists() and not (runs / "block_v0").exists()
    seeds = [yaml.safe_load((runs / f"seed{k}" / "block_v0" / "config.yaml").read_text())["seed"] for k in (1, 2)]
    assert seeds == [1, 2]
    one, two = (trained.load_policy(runs / f"seed{k}" / "block_v0" / "policy.npz")[0] for k in (1, 2))
    assert not all(np.array_equal(a, b) for x, y in zip(one, two) for a, b in zip(x, y))
    rows = json.loads((docs / ship.RECIPE_SEEDS).read_text())
    assert [(r["game"], r["recipe_seed"], r["deals"], r["seed"]) for r in rows] == [("block_v0", 1, 4, 2026),
                                                                                   ("block_v0", 2, 4, 2026)]
    assert json.loads((docs / "trained.json").read_text()) == [shipped_row]  # the shipped row untouched
    page = (docs / "trained.md").read_text()
    line = next(x for x in page.splitlines() if x.startswith("| block_v0 | 0.50 |"))
    assert line.startswith("| block_v0 | 0.50 | 0.600 [0.550, 0.650] | ")
    assert line.count("[") == 3 and f"{rows[1]['win']:.3f}" in line
    capsys.readouterr()
    assert ship.main([*argv, "--recipe-seeds", "3", "--evaluate-only"]) == 2
    assert error_lines(capsys.readouterr().err) == [
        f"python -m domino_training.scripts.ship: error: block_v0: no rerun on seed 3 at "
        f"{runs / 'seed3' / 'block_v0' / 'policy.npz'}: train it first (without --evaluate-only)"]
    with pytest.raises(SystemExit) as e:
        ship.main([*argv[:1], "--pimc-deals", "0", "--recipe-seeds", "1"])
    assert e.value.code == 2 and "give --pimc-deals N" in capsys.readouterr().err


def test_the_reruns_table_gives_the_spread_the_count_above_the_fair_share_and_names_an_outlier():
    def shipped(game, win, lo, hi, fair=0.5):
        return {"game": game, "fair_share": fair, "rows": [_row(ship.PIMC, win, lo, hi, 2000)]}

    def rerun(game, k, win, lo, hi):
        return {"game": game, "recipe_seed": k, "deals": 2000, "seed": 2026, **_row(ship.PIMC, win, lo, hi, 2000)}

    trained_rows = [shipped("draw_v0", 0.52, 0.505, 0.535), shipped("magic7_v0", 0.285, 0.277, 0.293, 0.25),
                    shipped("sum7_v0", 0.525, 0.515, 0.535)]
    reruns = [rerun("draw_v0", 1, 0.51, 0.495, 0.525), rerun("draw_v0", 2, 0.53, 0.515, 0.545),
              rerun("magic7_v0", 1, 0.255, 0.247, 0.263), rerun("magic7_v0", 2, 0.26, 0.252, 0.268)]
    lines = ship.recipe_section(trained_rows, reruns).splitlines()
    assert "| env | fair share | seed 0 (shipped) | seed 1 | seed 2 | spread | above the fair share | shipped file |" in lines
    draw = next(x for x in lines if x.startswith("| draw_v0"))
    magic = next(x for x in lines if x.startswith("| magic7_v0"))
    assert draw.endswith("| 0.020 | 2 of 3 | within the reruns |")
    assert magic.endswith("| 0.030 | 2 of 3 | above every rerun (an outlier) |")
    assert not any(x.startswith("| sum7_v0") for x in lines)  # no rerun: no row
    assert lines[-1] == "Deals per rerun: 2,000; evaluation seed 2026."
    assert ship.recipe_section(trained_rows, [])


def test_a_shipped_file_below_every_rerun_is_said_and_an_overlap_is_not():
    trained_rows = [{"game": "draw_v0", "fair_share": 0.5, "rows": [_row(ship.PIMC, 0.45, 0.44, 0.46, 2000)]}]
    reruns = [{"game": "draw_v0", "recipe_seed": 1, "deals": 2000, "seed": 1, **_row(ship.PIMC, 0.5, 0.48, 0.52, 2000)}]
    assert "| below every rerun |" in ship.recipe_section(trained_rows, reruns)
    overlapping = [{**reruns[0], "win_lo": 0.445}]  # its mean above, its interval reaching the shipped one's: not below
    assert "| within the reruns |" in ship.recipe_section(trained_rows, overlapping)
    overlapping = [{**reruns[0], "win_lo": 0.455}]  # its mean above, its interval overlapping: not below
    assert "| within the reruns |" in ship.recipe_section(trained_rows, overlapping)
