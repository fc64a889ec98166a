"""A long profile run one game a stage (`domino benchmark --stage GAME`, issue 58): each stage's scores land beside
its page (to commit), a later stage on a machine without the earlier runs neither trains them again nor needs their
policies (their cross-play is kept from the published JSON), a stage cut short resumes from the committed scores,
and the page is its JSON rendered."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from domino_training.benchmark import aggregate, cli, runner
from domino_training.benchmark import report as page
from domino_training.benchmark import suite as bench_suite

DOCS = Path(__file__).resolve().parents[2] / "docs"
QUIET = dict(reps=40, bootstrap=5, echo=lambda *a: None)


@pytest.fixture()
def two_games(tmp_path):
    """The shipped suite with the ci profile on two games, one ppo seed and tiny deal counts, frozen into
    its own lock: (suite, lock)."""
    suite, lock = tmp_path / "suite.yaml", tmp_path / "lock.json"
    data = yaml.safe_load((bench_suite.suite_folder() / "suite.yaml").read_text())
    for key in ("ladder_deals", "search_deals", "crossplay_deals"):
        data["protocol"][key]["ci"] = 3
    data["runs"]["ci"]["games"] = ["block", "sum7"]
    data["runs"]["ci"]["learners"] = {"ppo": 1}
    suite.write_text(yaml.safe_dump(data, sort_keys=False))
    bench_suite.freeze(suite, lock)
    return suite, lock


def _stage(game, out, report, two_games, **kw):
    suite, lock = two_games
    return cli.run_benchmark("ci", out, report, suite, lock, stage=game, **{**QUIET, **kw})


def test_stages_land_beside_the_page_and_a_later_stage_needs_nothing_of_the_earlier_runs(tmp_path, two_games):
    report = tmp_path / "docs" / "benchmark_ci.md"
    first = _stage("block", tmp_path / "machine1", report, two_games)
    kept = report.parent / "benchmark_ci" / "scores.jsonl"
    assert {json.loads(line)["game"] for line in kept.read_text().splitlines()} == {"block"}
    text = report.read_text()
    assert "1 of 2 games so far" in text and "Still to run: sum7" in text and "| ppo | 1 | block (1) |" in text
    assert [s["game"] for s in first["stages"]] == ["block"] and first["stages"][0]["cpu_seconds"] > 0
    published = report.parent / "benchmark_ci" / "ci.json"
    first = json.loads(published.read_text())
    # the next stage on another machine: no run folder, no policy of block's runs
    shutil.rmtree(tmp_path / "machine1")
    block_lines = kept.read_text()
    _stage("sum7", tmp_path / "machine2", report, two_games)
    second = json.loads(published.read_text())
    assert kept.read_text().startswith(block_lines)  # block's scores untouched: nothing evaluated again
    assert not (tmp_path / "machine2" / "runs" / "block").exists()  # nor trained again
    assert second["crossplay"]["block"] == first["crossplay"]["block"]  # kept: its policies are gone
    assert set(second["crossplay"]) == {"block", "sum7"}
    assert [s["game"] for s in second["stages"]] == ["block", "sum7"]
    text = report.read_text()
    assert "**Complete:**" in text and "Still to run" not in text and "| ppo | 1 | block (1), sum7 (1) |" in text
    for heading in ("## Sample efficiency", "## What it cost", "## Stages", "## Cross-play and ratings"):
        assert heading in text
    # the page is its JSON rendered
    assert page.page_from_data(second) == text


def test_a_stage_cut_short_resumes_from_the_committed_scores(tmp_path, two_games):
    """A run whose evaluations are all in the committed scores is skipped; one short of them trains again."""
    report = tmp_path / "docs" / "benchmark_ci.md"
    _stage("block", tmp_path / "m1", report, two_games)
    kept = report.parent / "benchmark_ci" / "scores.jsonl"
    rows = [json.loads(line) for line in kept.read_text().splitlines()]
    kept.write_text("".join(json.dumps(r) + "\n" for r in rows if not r["final"]))  # the final evaluations lost
    shutil.rmtree(tmp_path / "m1")
    again = _stage("block", tmp_path / "m2", report, two_games)
    assert (tmp_path / "m2" / "runs" / "block" / "ppo" / "seed0").is_dir()  # trained again (no checkpoint here)
    assert len(again["scores"]) == len(rows)
    assert [s["game"] for s in again["stages"]] == ["block", "block"]  # the second sitting adds its own line
    # a sitting counts the runs it trained, not the stage's: one here, none in a sitting with nothing left
    done = _stage("block", tmp_path / "m2", report, two_games)
    assert [(s["game"], s["runs"]) for s in done["stages"]] == [("block", 1), ("block", 1), ("block", 0)]


def test_a_finished_run_is_known_by_every_evaluation_it_owes():
    s = bench_suite.load_suite("ci")
    have = {("block", "ppo", 0, m, o) for m in s.marks for o in s.ladder}
    assert not runner.scored(s, have, "block", "ppo", 0)  # the search at the last mark is missing
    assert runner.scored(s, have | {("block", "ppo", 0, s.marks[-1], s.search)}, "block", "ppo", 0)
    assert not runner.scored(s, have - {("block", "ppo", 0, s.marks[3], "greedy")}
                             | {("block", "ppo", 0, s.marks[-1], s.search)}, "block", "ppo", 0)


def test_cross_play_is_kept_only_for_the_same_final_policies(tmp_path):
    """An entry whose fingerprint matches is kept without its policy files; a final policy scored differently
    is played again (and here its file is missing, so that fails naming it)."""
    s = bench_suite.load_suite("ci")
    s.runs = {"ppo": (1, ["block"])}
    scores = runner.ScoreFile(None)
    scores.rows = {}
    final = {"game": "block", "learner": "ppo", "seed": 0, "env_steps": s.marks[-1], "trained_env_steps": 1600,
             "opponent": "greedy", "final": True, "win": 0.6, "spec": f"ppo:checkpoint={tmp_path}/missing.npz"}
    scores.rows[runner.ScoreFile.key(final)] = final
    played = aggregate.crossplay_fingerprint(s, {"ppo/0": [final]})
    previous = {"block": {"ratings": {"sentinel": 1}, "labels": {}, "played": played}}
    assert aggregate.crossplay(s, scores, 5, lambda *a: None, previous=previous) == previous
    moved = {**final, "win": 0.61}
    scores.rows[runner.ScoreFile.key(moved)] = moved
    with pytest.raises(Exception, match="missing.npz"):
        aggregate.crossplay(s, scores, 5, lambda *a: None, previous=previous)


def test_a_stage_is_one_game_of_the_suite(tmp_path, two_games):
    with pytest.raises(ValueError, match="--stage 'chess' is not a game of the suite"):
        _stage("chess", tmp_path / "o", tmp_path / "r.md", two_games)
    with pytest.raises(ValueError, match="leave out --only"):
        _stage("block", tmp_path / "o", tmp_path / "r.md", two_games, only=["block"])


def test_the_full_pages_comparison_is_the_quick_pages_data(monkeypatch):
    """docs/benchmark_full.md sets the quick profile beside the full one from numbers kept in its own JSON:
    they must be what docs/benchmark/quick.json says today."""
    data = json.loads((DOCS / "benchmark_full" / "full.json").read_text())
    assert "compare" in data, "the full profile's page compares with the quick one (--compare docs/benchmark/quick.json)"
    monkeypatch.chdir(DOCS.parent)
    assert data["compare"] == json.loads(json.dumps(page.compared_profile(Path(data["compare"]["source"]))))
    assert data["compare"]["source"] == "docs/benchmark/quick.json"


def test_each_sitting_records_its_cpu_seconds_once_per_run(tmp_path):
    s = bench_suite.load_suite("ci")
    s.runs = {"dmc": (1, ["block"])}
    rows, points, _ = runner.train_and_score(s, tmp_path, "block", "dmc", 0, set())
    cpu = [r for r in rows if "session_cpu_seconds" in r]
    assert cpu == [rows[-1]] and cpu[0]["session_cpu_seconds"] > 0
