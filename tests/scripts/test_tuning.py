"""The tuning sweep (training/scripts/tuning.py): an equal number of settings per learner, each trained and
scored once, resumable, and a report that names the best setting and what lies inside its interval."""
from __future__ import annotations

import json

import pytest
import yaml

from domino_envs.errors import ConfigError
from domino_training.scripts import tuning

TINY_PPO = {"ppo.num_envs": 16, "ppo.rollout_steps": 16, "ppo.minibatch_size": 128, "network.hidden": [32]}
TINY_DMC = {"dmc.num_envs": 16, "dmc.rollout_steps": 16, "dmc.batch_size": 128, "network.hidden": [32]}


def _sweep(tmp_path, learners):
    data = {"games": ["block"], "budget": 1536, "marks": [0.5, 1.0], "deals": 2, "eval_seed": 5, "seed": 0,
            "learners": learners}
    path = tmp_path / "tuning.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_tuning_sweep_runs_scores_and_resumes(tmp_path):
    path = _sweep(tmp_path, {"ppo": {"P0": TINY_PPO, "P1": {**TINY_PPO, "ppo.ent_coef": 0.1}},
                             "dmc": {"D0": TINY_DMC, "D1": {**TINY_DMC, "dmc.epsilon": 0.2}}})
    sweep = tuning.read_sweep(path)
    rows = tuning.run_sweep(sweep, tmp_path / "out", echo=lambda *a, **k: None)
    assert [(r["learner"], r["label"]) for r in rows] == [("ppo", "P0"), ("ppo", "P1"), ("dmc", "D0"), ("dmc", "D1")]
    for r in rows:
        assert set(r["scores"]) == {f"{o}@{m}" for o in tuning.OPPONENTS for m in (768, 1536)}
        for mean, lo, hi in r["scores"].values():
            assert lo <= mean <= hi and 0 <= mean <= 2  # win share / fair share of 2 players
    assert rows[1]["params"]["ppo.ent_coef"] == 0.1
    saved = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    again = tuning.run_sweep(sweep, tmp_path / "out", echo=lambda *a, **k: pytest.fail("retrained"))
    assert [json.loads(x) for x in saved] == again
    text = tuning.markdown(sweep, again)
    assert "## block" in text and "`P1`" in text and "best against the heuristic at 1,536 steps" in text


def test_tuning_markdown_names_the_best_and_what_lies_inside_its_interval():
    sweep = {"games": ["draw"], "budget": 100, "marks": [1.0], "deals": 10, "eval_seed": 0, "seed": 0,
             "learners": {"ppo": {"A": {}, "B": {"ppo.lr": 1}, "C": {"ppo.lr": 2}}}}

    def row(label, params, h):
        return {"game": "draw", "learner": "ppo", "label": label, "params": params, "train_seconds": 1.0,
                "scores": {"greedy@100": [1.0, 0.9, 1.1], "heuristic@100": h}}

    rows = [row("A", {}, [0.95, 0.9, 1.0]), row("B", {"ppo.lr": 1}, [1.05, 1.0, 1.1]),
            row("C", {"ppo.lr": 2}, [0.8, 0.7, 0.9])]
    text = tuning.markdown(sweep, rows)
    assert "best against the heuristic at 100 steps `B` (1.050 [1.000, 1.100]); inside its interval: none" in text
    assert "falls below the best setting's interval in 1 of 1 games" in text
    rows[0]["scores"]["heuristic@100"] = [1.02, 0.95, 1.1]
    text = tuning.markdown(sweep, rows)
    assert "inside its interval: `A`" in text and "so no setting is a finding and the benchmark runs the default" in text


def test_tuning_refuses_an_unequal_budget_and_unknown_games(tmp_path):
    with pytest.raises(ConfigError, match="the same number of settings"):
        tuning.read_sweep(_sweep(tmp_path, {"ppo": {"P0": {}, "P1": {}}, "dmc": {"D0": {}}}))
    sweep = tuning.read_sweep(_sweep(tmp_path, {"ppo": {"P0": TINY_PPO}}))
    sweep["games"] = ["chess"]
    with pytest.raises(ConfigError, match="'chess' is not a game of the suite"):
        tuning.run_sweep(sweep, tmp_path / "out")


def test_two_workers_write_the_serial_sweeps_file_and_a_failed_setting_is_named(tmp_path, capsys):
    """`--workers 2` trains and scores the settings in two processes: results.jsonl and the report are
    the serial sweep's (less the seconds). A bad --workers is exit status 2 before anything is written;
    a setting that fails in its worker is one line naming it, exit status 2, and the sweep resumed to the
    serial file."""
    import re

    from tests.training.test_parallel import error_lines

    path = _sweep(tmp_path, {"ppo": {"P0": TINY_PPO}, "dmc": {"D0": TINY_DMC}})

    def argv(name: str, workers: str) -> list[str]:
        return ["--sweep", str(path), "--out", str(tmp_path / name), "--report", str(tmp_path / f"{name}.md"),
                "--workers", workers]

    for bad in ("0", "-1", "two"):
        with pytest.raises(SystemExit) as e:
            tuning.main(argv("bad", bad))
        assert e.value.code == 2 and "--workers" in capsys.readouterr().err
    with pytest.raises(ValueError, match="workers=0 must be an integer >= 1"):
        tuning.run_sweep(tuning.read_sweep(path), tmp_path / "bad", workers=0)
    assert not (tmp_path / "bad").exists()

    def written(name: str) -> list[str]:
        rows = [{k: v for k, v in json.loads(line).items() if k != "train_seconds"}
                for line in (tmp_path / name / "results.jsonl").read_text().splitlines()]
        report = re.sub(r"\} \| \d+ \|", "} | S |", (tmp_path / f"{name}.md").read_text())
        return [json.dumps(rows), report]

    assert tuning.main(argv("serial", "1")) == 0
    (tmp_path / "parallel" / "block").mkdir(parents=True)
    (tmp_path / "parallel" / "block" / "D0").write_text("a file where D0's run folder goes")
    assert tuning.main(argv("parallel", "2")) == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and lines[0].startswith("python -m domino_training.scripts.tuning: error: the tuning run "
                                                   "block dmc D0 failed in its worker: "), lines
    (tmp_path / "parallel" / "block" / "D0").unlink()
    assert tuning.main(argv("parallel", "2")) == 0
    serial = written("serial")
    assert '"label": "D0"' in serial[0] and "`D0`" in serial[1]
    assert written("parallel") == serial


def test_a_setting_named_under_two_learners_is_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"settings \['S'\] are named under more than one learner"):
        tuning.read_sweep(_sweep(tmp_path, {"ppo": {"S": {}}, "dmc": {"S": {}}}))
