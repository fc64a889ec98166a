"""Time to strength side by side (training/scripts/strength_timing.py): the learners of a (game, seed) train
in child processes at once, every saved policy is scored (in worker processes too, with the serial
scores), the report gives the medians and ratios, and a second run trains and scores nothing."""
from __future__ import annotations

import json
import re
import shutil

import pytest
import yaml

from domino_envs.errors import ConfigError
from domino_training.benchmark import ScoreFile
from domino_training.benchmark.suite import load_suite
from domino_training.evaluate import evaluate
from domino_training.scripts import strength_timing

TINY = {"ppo": {"ppo.num_envs": 16, "ppo.rollout_steps": 16, "ppo.minibatch_size": 128, "ppo.epochs": 1,
                "network.hidden": [16]},
        "sb3": {"sb3.n_steps": 64, "sb3.batch_size": 64, "sb3.n_envs": 2, "sb3.n_epochs": 1, "network.hidden": [16]}}


def _timing(tmp_path, **over):
    data = {"learners": ["ppo", "sb3"], "seeds": 1, "deals": 3, "opponents": ["greedy", "heuristic"],
            "params": TINY, "games": {"block": {"budget": 1024, "marks": [512, 1024]}}, **over}
    path = tmp_path / "timing.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_side_by_side_trains_scores_reports_and_resumes(tmp_path, capsys):
    path = _timing(tmp_path)
    out, report = tmp_path / "out", tmp_path / "timing.md"
    data = strength_timing.run_timing(out, report, path, echo=lambda *a, **k: None)
    scores = ScoreFile(out / "scores.jsonl")
    assert sorted({(r["learner"], r["env_steps"], r["opponent"]) for r in scores.rows.values()}) == [
        (lr, m, o) for lr in ("ppo", "sb3") for m in (512, 1024) for o in ("greedy", "heuristic")]
    # each score is its mark's policy replayed on the suite's first 3 frozen deals (not another mark's or seed's)
    suite, timing = load_suite("quick"), strength_timing.read_timing(path)
    game = suite.games["block"]
    for r in scores.rows.values():
        run = strength_timing.learner_run(timing, "block", r["learner"], r["seed"], out)
        (point,) = [p for p in strength_timing.saved_points(run, r["learner"]) if p.mark == r["env_steps"]]
        again = evaluate(game.env, [point.spec, r["opponent"]], 3, suite.deal_seed, dict(game.config),
                         pairs=[(point.spec, r["opponent"])], progress=False).matchups[(point.spec, r["opponent"])]
        assert r["deals"] == 3 and (r["win"], r["win_lo"], r["win_hi"]) == (again.win_stat.mean, again.win_stat.lo,
                                                                           again.win_stat.hi)
        assert r["trained_env_steps"] >= r["env_steps"] and r["seconds"] > 0
    block = data["summary"]["block"]
    assert set(block["medians"]) == {"ppo", "sb3"} and set(block["ratios"]) == {"sb3"}
    assert block["throughput"]["ppo"] > 0 and block["throughput"]["sb3"] > 0
    assert block["ratios"]["sb3"]["throughput"] == pytest.approx(block["throughput"]["ppo"] / block["throughput"]["sb3"])
    text = report.read_text()
    assert "## block" in text and "`sb3` / `ppo`" in text and "| `sb3` | 0 |" in text
    assert json.loads(report.with_suffix(".json").read_text())["summary"]["block"]["throughput"] == block["throughput"]
    saved = (out / "scores.jsonl").read_text()
    mtimes = {p: p.stat().st_mtime_ns for p in (out / "runs").rglob("points.json")}
    said = []
    strength_timing.run_timing(out, report, path, echo=said.append)
    assert len(said) == 1 and said[0].startswith("wrote ")  # no "trained side by side" line
    assert (out / "scores.jsonl").read_text() == saved
    assert {p: p.stat().st_mtime_ns for p in (out / "runs").rglob("points.json")} == mtimes

    # the scoring in two workers: a bad --workers is exit status 2 before anything is written; a policy
    # that fails in its worker is named; resumed, scores.jsonl and the report are the serial run's
    def argv(name: str, workers: str) -> list[str]:
        return ["--out", str(tmp_path / name), "--report", str(tmp_path / f"{name}.md"), "--timing", str(path),
                "--workers", workers]

    for bad, said in (("0", "workers=0 must be"), ("two", "invalid int value")):  # refused by the parser
        with pytest.raises(SystemExit) as e:
            strength_timing.main(argv("bad", bad))
        assert e.value.code == 2 and said in capsys.readouterr().err and not (tmp_path / "bad").exists()
    shutil.copytree(out / "runs", tmp_path / "two" / "runs")
    points = tmp_path / "two" / "runs" / "block" / "sb3" / "seed0" / "points.json"
    saved_points = points.read_text()
    points.write_text(saved_points.replace(str(out), str(tmp_path / "nowhere")))
    assert strength_timing.main(argv("two", "2")) == 2  # the JobError, one line
    assert re.search(r"the scoring of block sb3 seed 0 at (512|1,024) env steps failed in its worker: CheckpointError",
                     capsys.readouterr().err)
    points.write_text(saved_points)
    assert strength_timing.main(argv("two", "2")) == 0

    def rows(folder) -> list[dict]:
        return [{k: v for k, v in json.loads(line).items() if k != "eval_seconds"}
                for line in (folder / "scores.jsonl").read_text().splitlines()]

    assert rows(tmp_path / "two") == rows(out) and len(rows(out)) == 8
    assert (tmp_path / "two.md").read_text() == report.read_text()


def test_ratio_is_the_other_learners_minutes_over_the_first(tmp_path):
    timing = strength_timing.read_timing(_timing(tmp_path, seeds=2))
    scores = ScoreFile(tmp_path / "scores.jsonl")
    # ppo beats greedy at its second mark (60 s), sb3 at its first (300 s) and second (600 s): medians 60 / 450
    for lr, seed, mark, seconds, lo in [("ppo", 0, 512, 30, 0.4), ("ppo", 0, 1024, 60, 0.6),
                                        ("ppo", 1, 512, 30, 0.4), ("ppo", 1, 1024, 60, 0.6),
                                        ("sb3", 0, 512, 300, 0.6), ("sb3", 0, 1024, 600, 0.6),
                                        ("sb3", 1, 512, 300, 0.4), ("sb3", 1, 1024, 600, 0.6)]:
        for opp in ("greedy", "heuristic"):
            scores.add({"game": "block", "learner": lr, "seed": seed, "env_steps": mark, "trained_env_steps": mark,
                        "seconds": seconds, "opponent": opp, "win": lo + 0.05, "win_lo": lo, "win_hi": lo + 0.1,
                        "fair": 0.5})
    s = strength_timing.summarize(timing, scores, ["block"])["block"]
    assert s["medians"]["ppo"]["beat_greedy"]["minutes"] == pytest.approx(1.0)
    assert s["medians"]["sb3"]["beat_greedy"]["minutes"] == pytest.approx(7.5)
    assert s["ratios"]["sb3"]["beat_greedy"]["minutes"] == pytest.approx(7.5)
    assert s["ratios"]["sb3"]["beat_greedy"]["env_steps"] == pytest.approx(768 / 1024)
    assert s["throughput"] == {"ppo": pytest.approx(1024 / 60), "sb3": pytest.approx(1024 / 600)}


@pytest.mark.parametrize("over, needle", [
    ({"learners": ["ppo"]}, "two or more distinct"),
    ({"learners": ["ppo", "nope"]}, "two or more distinct"),
    ({"seeds": 0}, "seeds 0"),
    ({"deals": 5000}, "at most the frozen deals"),
    ({"opponents": ["random"]}, "[greedy, heuristic]"),
    ({"params": {"dmc": {}}}, "params"),
    ({"games": {"nope": {"budget": 10, "marks": [10]}}}, "games.nope"),
    ({"games": {"block": {"budget": 10, "marks": [5, 3]}}}, "increasing env steps"),
    ({"games": {"block": {"budget": 10, "marks": [5]}}}, "the last == budget"),
])
def test_bad_timing_files_are_refused_by_name(tmp_path, over, needle):
    with pytest.raises(ConfigError, match=None) as err:
        strength_timing.read_timing(_timing(tmp_path, **over))
    assert needle in str(err.value)


def test_shipped_timing_file_is_valid():
    timing = strength_timing.read_timing()
    assert timing["learners"][0] == "ppo" and "sb3" in timing["learners"]
