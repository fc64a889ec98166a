"""The benchmark (training/benchmark/): the frozen protocol refuses changes without a version bump,
the suite file is checked, and the whole pipeline runs end to end on the seconds-long `ci` profile."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from domino_envs.errors import ConfigError, ProtocolError
from domino_training import stats
from domino_training.benchmark import aggregate, cli, runner
from domino_training.benchmark import report as page
from domino_training.benchmark import suite as bench_suite

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def suite_copy(tmp_path):
    """A copy of the shipped suite with small deal counts (fingerprints in milliseconds), frozen into
    its own lock in tmp_path: (suite path, lock path)."""
    suite, lock = tmp_path / "suite.yaml", tmp_path / "lock.json"
    shutil.copyfile(bench_suite.suite_folder() / "suite.yaml", suite)
    _edit(suite, lambda d: [d["protocol"][k].__setitem__(p, 8) for k in ("ladder_deals", "search_deals",
                                                                             "crossplay_deals") for p in ("quick", "full")])
    bench_suite.freeze(suite, lock)
    return suite, lock


def _edit(path, change):
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_the_shipped_suite_matches_its_locked_fingerprints():
    bench_suite.check_protocol(bench_suite.read_suite_file(), bench_suite.read_lock())


@pytest.mark.parametrize("change", [
    lambda d: d["protocol"].__setitem__("deal_seed", d["protocol"]["deal_seed"] + 1),
    lambda d: d["protocol"]["ladder_deals"].__setitem__("quick", 7),
    lambda d: d["protocol"]["games"]["draw"].__setitem__("config", {"num_players": 3}),
    lambda d: d["protocol"]["budget"].__setitem__("full", 1),
])
def test_a_protocol_change_is_refused_until_the_version_is_bumped_and_frozen(suite_copy, change):
    suite, lock = suite_copy
    _edit(suite, change)
    with pytest.raises(ProtocolError, match="bump `version`"):
        bench_suite.check_protocol(bench_suite.read_suite_file(suite), bench_suite.read_lock(lock))
    with pytest.raises(ProtocolError, match="already locked"):
        bench_suite.freeze(suite, lock)  # the same version cannot be re-locked with other numbers
    _edit(suite, lambda d: d.__setitem__("version", d["version"] + 1))
    with pytest.raises(ProtocolError, match="no fingerprint"):
        bench_suite.check_protocol(bench_suite.read_suite_file(suite), bench_suite.read_lock(lock))
    bench_suite.freeze(suite, lock)
    bench_suite.check_protocol(bench_suite.read_suite_file(suite), bench_suite.read_lock(lock))
    assert len(json.loads(lock.read_text())) == 2  # the old version's fingerprints are kept


def test_runs_and_learner_settings_are_not_part_of_the_protocol(suite_copy):
    suite, lock = suite_copy
    _edit(suite, lambda d: d["runs"]["quick"]["learners"].__setitem__("ppo", 9))
    _edit(suite, lambda d: d["learners"].__setitem__("ppo", {"ppo.ent_coef": 0.1}))
    bench_suite.check_protocol(bench_suite.read_suite_file(suite), bench_suite.read_lock(lock))


def test_an_engine_that_deals_differently_is_refused(suite_copy, monkeypatch):
    suite, lock = suite_copy
    real = bench_suite.deals_digest
    monkeypatch.setattr(bench_suite, "deals_digest", lambda g, seed, n: real(g, seed + (g.name == "sum7"), n))
    with pytest.raises(ProtocolError, match="'sum7' deals differently"):
        bench_suite.check_protocol(bench_suite.read_suite_file(suite), bench_suite.read_lock(lock))


def _ties_win_whole(returns):
    """A scoring rule that counts ties differently: each tied winner gets a whole win."""
    from domino_envs import outcome

    r = np.asarray(returns, dtype=np.float64)
    return (r >= r.max(axis=-1, keepdims=True) - outcome.TIE_TOLERANCE).astype(np.float64)


def _dense_ranks(returns):
    """Finishing ranks counted densely (1, 1, 2) instead of as competition ranks (1, 1, 3)."""
    r = np.asarray(returns, dtype=np.float64)
    levels = np.unique(r)[::-1]
    return np.array([int(np.flatnonzero(levels == x)[0]) for x in r])


def _shares_by_loop(returns):
    """The same rule written another way (a refactor): the fingerprint must not move."""
    from domino_envs import outcome

    r = np.atleast_2d(np.asarray(returns, dtype=np.float64))
    out = np.zeros_like(r)
    for i, row in enumerate(r):
        top = [k for k in range(len(row)) if row[k] >= max(row) - outcome.TIE_TOLERANCE]
        out[i, top] = 1.0 / len(top)
    return out.reshape(np.shape(returns))


@pytest.mark.parametrize("name,rule", [("win_shares", _ties_win_whole), ("finishing_ranks", _dense_ranks)])
def test_a_changed_scoring_rule_is_refused_against_the_committed_lock(name, rule, monkeypatch, tmp_path, capsys):
    """Issue 55: the lock pins how a finished game is scored; counting ties another way is refused in one
    line (the command exits 2 before training), where the same rule written another way passes."""
    from domino_envs import outcome

    bench_suite.check_protocol(bench_suite.read_suite_file(), bench_suite.read_lock())
    monkeypatch.setattr(outcome, "win_shares", _shares_by_loop)
    bench_suite.check_protocol(bench_suite.read_suite_file(), bench_suite.read_lock())
    monkeypatch.setattr(outcome, name, rule)
    with pytest.raises(ProtocolError, match=r"the scoring rule .* differs from version 1's: bump `version`"):
        bench_suite.check_protocol(bench_suite.read_suite_file(), bench_suite.read_lock())
    out = tmp_path / "out"
    assert cli.main(["--profile", "ci", "--out", str(out), "--report", str(tmp_path / "r.md")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "scoring rule" in err and not out.exists()


def test_a_lock_from_before_the_scoring_fingerprint_is_refused_until_frozen_again(suite_copy):
    suite, lock = suite_copy
    entry = json.loads(lock.read_text())
    del entry["1"]["scoring"]
    lock.write_text(json.dumps(entry))
    with pytest.raises(ProtocolError, match="no fingerprint of the scoring rule"):
        bench_suite.check_protocol(bench_suite.read_suite_file(suite), bench_suite.read_lock(lock))
    bench_suite.freeze(suite, lock)  # adds it, the other fingerprints kept
    assert {k: v for k, v in json.loads(lock.read_text())["1"].items() if k != "scoring"} == entry["1"]
    bench_suite.check_protocol(bench_suite.read_suite_file(suite), bench_suite.read_lock(lock))


def test_a_benchmark_run_resumes_on_another_device(tmp_path, monkeypatch):
    """Issue 55: the benchmark's path (runner.train_and_score) with the learners' device changed between
    sessions continues the run (the device is not part of a run's identity), for ppo and dmc."""
    import importlib

    s = bench_suite.load_suite("ci")
    have = {("block", lr, 0, m, o) for lr in ("ppo", "dmc") for m in s.marks for o in [*s.ladder, s.search]}
    for learner, module, cls in [("ppo", "domino_training.learners.ppo", "Trainer"),
                                 ("dmc", "domino_training.learners.dmc", "DMCTrainer")]:
        target = getattr(importlib.import_module(module), cls)
        iterate = target.iterate

        def killed(self, iterate=iterate):
            if self.env_steps >= s.marks[-1] // 2:
                raise KeyboardInterrupt
            return iterate(self)

        s.params[learner] = {**s.params[learner], f"{learner}.device": "cpu"}
        monkeypatch.setattr(target, "iterate", killed)
        with pytest.raises(KeyboardInterrupt):
            runner.train_and_score(s, tmp_path, "block", learner, 0, have)
        monkeypatch.setattr(target, "iterate", iterate)
        folder = tmp_path / "runs" / "block" / learner / "seed0"
        saved = json.loads((folder / "points.json").read_text())["points"]
        assert 0 < len(saved) < len(s.marks)
        s.params[learner] = {**s.params[learner], f"{learner}.device": "cpu:0"}
        rows, points, _ = runner.train_and_score(s, tmp_path, "block", learner, 0, have)
        assert rows == [] and points == len(s.marks)
        assert json.loads((folder / "points.json").read_text())["points"][:len(saved)] == saved


def test_deal_digests_depend_on_every_deal():
    g = bench_suite.GameSpec("block", "block_v0", {})
    a, b = bench_suite.deals_digest(g, 7, 5), bench_suite.deals_digest(g, 7, 6)
    assert a != b and a == bench_suite.deals_digest(g, 7, 5) and a != bench_suite.deals_digest(g, 8, 5)


@pytest.mark.parametrize("change, match", [
    (lambda d: d["protocol"]["games"].__setitem__("x", {"env": "nope_v0"}), "nope_v0"),
    (lambda d: d["protocol"].__setitem__("marks", [0.5, 0.2, 1.0]), "protocol.marks"),
    (lambda d: d["protocol"]["budget"].pop("ci"), "protocol.budget"),
    (lambda d: d["runs"]["ci"].__setitem__("games", ["chess"]), "chess"),
    (lambda d: d["runs"]["ci"]["learners"].__setitem__("ppo", 0), "seeds"),
    (lambda d: d.__setitem__("extra", 1), "version, protocol, runs and learners"),
])
def test_a_malformed_suite_names_what_is_wrong(suite_copy, change, match):
    suite, _ = suite_copy
    _edit(suite, change)
    with pytest.raises(ConfigError, match=match):
        bench_suite.load_suite("ci", suite)


def test_the_profiles_resolve_to_runs_and_marks():
    s = bench_suite.load_suite("quick")
    assert s.marks[-1] == s.budget and s.marks == sorted(s.marks)
    assert ("block", "sb3", 2) in s.run_list() and not any(lr == "sb3" and g == "draw" for g, lr, _ in s.run_list())
    assert sum(1 for g, lr, _ in s.run_list() if lr == "ppo") == 5 * len(s.games)
    only = bench_suite.load_suite("quick", only=["sum7"])
    assert {g for g, _, _ in only.run_list()} == {"sum7"}


def test_optional_learners_run_only_when_named():
    """rllib is in the quick profile's runs, but needs an extra: the default run leaves it out,
    --learners picks it (alone, with its settings), and a learner the profile does not run is refused."""
    default = bench_suite.load_suite("quick")
    assert "rllib" not in default.runs and {"ppo", "sb3"} <= set(default.runs)
    named = bench_suite.load_suite("quick", learners=["rllib"])
    assert named.runs == {"rllib": (3, ["block", "sum7"])}
    assert named.params["rllib"] == {"rllib.num_cpus": 1}
    assert set(bench_suite.load_suite("quick", learners=["ppo", "rllib"]).runs) == {"ppo", "rllib"}
    with pytest.raises(ConfigError, match=r"--learners='nope'.*'rllib'"):
        bench_suite.load_suite("quick", learners=["nope"])
    with pytest.raises(ConfigError, match=r"--learners='rllib'"):
        bench_suite.load_suite("ci", learners=["rllib"])


def test_seeds_caps_every_learner_and_the_page_can_say_so():
    s = bench_suite.load_suite("full", only=["draw"], learners=["ppo", "sb3"], seeds=1)
    assert s.runs == {"ppo": (1, ["draw"]), "sb3": (1, [])} and s.capped == {"ppo": 5, "sb3": 3}
    assert bench_suite.load_suite("quick", seeds=4).runs["ppo_bc"][0] == 3 and bench_suite.load_suite("quick", seeds=4).capped == {"ppo": 5}
    for bad in (0, True, 1.5):
        with pytest.raises(ConfigError, match="--seeds"):
            bench_suite.load_suite("quick", seeds=bad)


def test_time_to_strength_reads_the_first_mark_past_each_bar(tmp_path):
    s = bench_suite.load_suite("ci")
    s.runs = {"ppo": (1, ["block"])}
    scores = runner.ScoreFile(tmp_path / "scores.jsonl")
    rows = [(s.marks[0], "greedy", 0.55, 0.45), (s.marks[1], "greedy", 0.62, 0.52), (s.marks[1], "heuristic", 0.49, 0.4),
            (s.marks[-1], "heuristic", 0.5, 0.41)]
    for steps, opp, win, lo in rows:
        scores.add({"game": "block", "learner": "ppo", "seed": 0, "env_steps": steps, "opponent": opp, "win": win,
                    "win_lo": lo, "win_hi": win + 0.1, "fair": 0.5, "seconds": steps / 100.0, "final": False})
    (row,) = aggregate.time_to_strength(s, scores)
    assert row["beat_greedy"]["env_steps"] == s.marks[1]
    assert row["heuristic_level"] == {"env_steps": s.marks[-1], "minutes": s.marks[-1] / 100.0 / 60}
    again = runner.ScoreFile(tmp_path / "scores.jsonl")  # a resumed benchmark reads what was written
    assert again.rows == scores.rows


def test_per_game_finals_keep_each_seeds_final_score(tmp_path):
    s = bench_suite.load_suite("ci")
    scores = runner.ScoreFile(tmp_path / "s.jsonl")
    for seed, win, final in ((0, 0.6, True), (1, 0.4, True), (1, 0.9, False), (5, 0.1, True)):  # seed 5: not in the profile
        scores.add({"game": "block", "learner": "ppo", "seed": seed, "env_steps": 10 + final, "opponent": "greedy",
                    "win": win, "fair": 0.5, "final": final})
    assert aggregate.per_game_finals(s, scores) == {"ppo": {"block": {"greedy": [1.2, 0.8]}}}


def test_the_score_matrix_needs_every_run(tmp_path):
    scores = runner.ScoreFile(tmp_path / "s.jsonl")
    scores.add({"game": "a", "learner": "x", "seed": 0, "env_steps": 10, "opponent": "o", "win": 0.3, "fair": 0.25})
    assert aggregate.score_matrix(scores, "x", ["a"], 2, "o", 10) is None
    scores.add({"game": "a", "learner": "x", "seed": 1, "env_steps": 10, "opponent": "o", "win": 0.5, "fair": 0.25})
    assert np.allclose(aggregate.score_matrix(scores, "x", ["a"], 2, "o", 10), [[1.2], [2.0]])


def test_the_ci_profile_runs_the_whole_pipeline_and_a_second_call_redoes_nothing(tmp_path, suite_copy):
    """Criterion: a seconds-long version of the whole pipeline (train at every mark, evaluate on the
    frozen deals, aggregate with rliable, rate, report) runs in CI, and resumes."""
    out, report = tmp_path / "out", tmp_path / "docs" / "benchmark_ci.md"
    result = cli.run_benchmark("ci", out, report, reps=100, bootstrap=10, echo=lambda *a: None)
    s = bench_suite.load_suite("ci")
    runs = s.run_list()
    assert len(result["scores"]) == len(runs) * (len(s.marks) * len(s.ladder) + 1)
    assert {r["env_steps"] for r in result["scores"]} == set(s.marks)
    final = result["aggregate"]["opponents"]["own"]
    for opp in s.ladder + [s.search]:
        for learner in s.runs:
            cell = final[opp][learner]
            assert cell["iqm_lo"] <= cell["iqm"] <= cell["iqm_hi"] and cell["runs"] == s.runs[learner][0]
    assert "ppo,dmc" in result["aggregate"]["improvement"]["heuristic"]
    ratings = result["crossplay"]["block"]["ratings"]
    assert {x["agent"] for x in ratings["ratings"]} >= set(s.ladder) and ratings["anchor"] == "random"
    assert len(result["time_to_strength"]) == len(runs)
    text = report.read_text()
    for heading in ("## Final policies", "## Final policies per game", "## Probability of improvement", "## Time to strength",
                    "## Cross-play and ratings", "## Curves"):
        assert heading in text
    assert "**Complete:** every run of the profile" in text and "| ppo | 2 | block (2) |" in text
    assert (report.parent / "benchmark_ci" / "ci_iqm.png").stat().st_size > 1000
    scores = (out / "scores.jsonl").read_text()
    points = sorted((out / "runs").rglob("points.json"))
    stamps = [p.stat().st_mtime_ns for p in points]
    cli.run_benchmark("ci", out, report, reps=100, bootstrap=10, echo=lambda *a: None)
    assert (out / "scores.jsonl").read_text() == scores  # nothing evaluated again
    assert [p.stat().st_mtime_ns for p in points] == stamps  # nothing trained again
    # --report-only with a run missing: nothing trains, the learner short of seeds drops out and is named
    kept = [line for line in scores.splitlines() if '"learner": "dmc"' not in line]
    (out / "scores.jsonl").write_text("\n".join(kept) + "\n")
    partial = cli.run_benchmark("ci", out, report, reps=100, bootstrap=10, echo=lambda *a: None, train=False)
    assert [p.stat().st_mtime_ns for p in points] == stamps and (out / "scores.jsonl").read_text().count("\n") == len(kept)
    assert set(partial["aggregate"]["opponents"]["own"]["greedy"]) == {"ppo"}
    text = report.read_text()
    assert "**Partial:**" in text and "dmc on block 0/1" in text and "| dmc | 1 |  |" in text
    # the page says why a learner runs fewer games, and where an optional learner left out has its page
    suite, lock = suite_copy
    _edit(suite, lambda d: d["runs"]["ci"]["learners"].update({"ppo": {"seeds": 2, "why": "a reason."}, "rllib": 1}))
    cli.run_benchmark("ci", out, report, suite, lock, reps=100, bootstrap=10, echo=lambda *a: None, train=False)
    text = report.read_text()
    assert "- `ppo` runs on block only: a reason." in text and "`--seeds`" not in text
    assert ("- `rllib` needs an optional extra and has a page of its own, [benchmark_ci_rllib.md](benchmark_ci_rllib.md) "
            "(`domino benchmark --profile ci --learners rllib --out runs/benchmark/ci-rllib --report "
            "docs/benchmark_ci_rllib.md`") in text and "| rllib |" not in text


def test_a_distillation_run_joins_the_benchmark_through_its_params_alone(tmp_path, suite_copy):
    """The suite's ppo_distill entry (learner: ppo, distill.* params) runs as a learner of its own:
    rounds of the search teacher alternate with PPO in its run folder, and its scores and report rows
    carry its name."""
    suite, lock = suite_copy
    tiny = {**yaml.safe_load(suite.read_text())["runs"]["ci"]["params"]["ppo"], "distill.positions": 16,
            "distill.every_updates": 2, "distill.teacher": "pimc:n=2,rollout=policy,policy=current"}
    _edit(suite, lambda d: d["runs"]["ci"].__setitem__("learners", {"ppo_distill": 1}))
    _edit(suite, lambda d: d["runs"]["ci"]["params"].__setitem__("ppo_distill", tiny))
    s = bench_suite.load_suite("ci", suite)
    assert s.learner_of("ppo_distill") == "ppo" and s.params["ppo_distill"]["distill.every_updates"] == 2
    out, report = tmp_path / "out", tmp_path / "r.md"
    result = cli.run_benchmark("ci", out, report, suite, lock, reps=100, bootstrap=10, echo=lambda *a: None)
    assert {r["learner"] for r in result["scores"]} == {"ppo_distill"}
    rounds = (out / "runs" / "block" / "ppo_distill" / "seed0" / "distill.csv").read_text().splitlines()[1:]
    assert len(rounds) >= 3 and all(r.split(",")[0] == str(i + 1) for i, r in enumerate(rounds))
    assert "| ppo_distill | 1 |" in report.read_text()
    _edit(suite, lambda d: d["learners"]["ppo_distill"].__setitem__("learner", "nope"))
    with pytest.raises(ConfigError, match=r"ppo_distill \(learner: nope\)"):
        bench_suite.load_suite("ci", suite)


def test_a_learner_of_ones_own_joins_the_suite_by_import(tmp_path, suite_copy, monkeypatch):
    from domino_training.learners import interface as learners

    monkeypatch.setattr(learners, "LEARNERS", dict(learners.LEARNERS))  # the import registers my_learner here only
    suite, lock = suite_copy
    _edit(suite, lambda d: d["runs"]["ci"].__setitem__("learners", {"my_learner": 1}))
    _edit(suite, lambda d: d["runs"]["ci"].__setitem__("params", {}))
    example = ROOT / "docs" / "examples" / "my_learner.py"
    out, report = tmp_path / "out", tmp_path / "r.md"
    assert cli.main(["--profile", "ci", "--suite", str(suite), "--lock", str(lock), "--out", str(out),
                    "--report", str(report), "--reps", "100", "--import", str(example)]) == 0
    assert "my_learner" in report.read_text()
    assert cli.main(["--profile", "ci", "--import", str(tmp_path / "nope.py")]) == 2
    # the page's Regenerate line, run as printed, writes the same page (less its timings)
    page = report.read_text()
    line = re.search(r"^Regenerate: `([^`]+)`", page, flags=re.M)[1]
    assert f"--suite {suite}" in line and f"--import {example}" in line and "--reps 100" in line, line
    report.unlink()
    assert shlex.split(line)[:2] == ["domino", "benchmark"] and cli.main(shlex.split(line)[2:]) == 0
    untimed = lambda text: [x for x in text.splitlines() if "minutes" not in x and "seconds" not in x]  # noqa: E731
    assert untimed(report.read_text()) == untimed(page)


def test_an_imported_learner_the_run_would_not_train_is_refused(tmp_path, capsys, monkeypatch):
    """Issue 42: `--import my_learner.py` used to run the suite's learners alone and exit 0."""
    from domino_training.learners import interface as learners

    monkeypatch.setattr(learners, "LEARNERS", dict(learners.LEARNERS))
    example = ROOT / "docs" / "examples" / "my_learner.py"
    assert cli.main(["--profile", "ci", "--out", str(tmp_path / "o"), "--import", str(example)]) == 2
    err = capsys.readouterr().err
    assert "--import registered ['my_learner']" in err and "--suite FILE" in err and "--learners my_learner" in err
    assert not (tmp_path / "o").exists()
    assert cli.main(["--profile", "ci", "--learners", "my_learner"]) == 2
    assert "--suite FILE" in capsys.readouterr().err


def test_the_vectorized_bootstrap_agrees_with_rliable():
    """Our stratified bootstrap (speed) against rliable's on the same score matrices: point estimates
    exactly, the 95% interval bounds within a tenth of the interval's width (different random draws)."""
    from rliable import library as rly
    from rliable import metrics

    rng = np.random.default_rng(0)
    x = rng.normal(1.0, 0.3, size=(5, 4)) + np.array([0.0, 0.2, -0.1, 0.4])
    y = rng.normal(0.9, 0.3, size=(3, 4))
    ours = stats.interval_estimates(x, 4000, np.random.default_rng(1))
    point, ci = rly.get_interval_estimates(
        {"x": x}, lambda s: np.array([metrics.aggregate_iqm(s), metrics.aggregate_mean(s)]), reps=4000,
        random_state=np.random.RandomState(2))
    assert np.isclose(ours["iqm"], point["x"][0]) and np.isclose(ours["mean"], point["x"][1])
    for k, (name, width) in enumerate((("iqm", ci["x"][1, 0] - ci["x"][0, 0]), ("mean", ci["x"][1, 1] - ci["x"][0, 1]))):
        assert abs(ours[f"{name}_lo"] - ci["x"][0, k]) < 0.1 * width
        assert abs(ours[f"{name}_hi"] - ci["x"][1, k]) < 0.1 * width
    assert np.isclose(stats.improvement(x, y), metrics.probability_of_improvement(x, y))
    assert np.isclose(stats.improvement(y, y), 0.5) and np.isclose(stats.improvement(x + 10, y), 1.0)
    assert np.allclose(stats.trimmed_means(x.reshape(2, 10)), [metrics.aggregate_iqm(r) for r in x.reshape(2, 10)])


def test_the_report_says_which_runs_are_missing(tmp_path):
    s = bench_suite.load_suite("ci")
    s.runs = {"ppo": (2, ["block"]), "dmc": (1, ["block"])}
    scores = runner.ScoreFile(tmp_path / "scores.jsonl")
    for seed, final in ((0, True), (1, False)):
        scores.add({"game": "block", "learner": "ppo", "seed": seed, "env_steps": 5, "opponent": "greedy",
                    "final": final})
    scores.add({"game": "block", "learner": "ppo", "seed": 7, "env_steps": 5, "opponent": "greedy", "final": True})
    done = aggregate.finished_seeds(s, scores)
    assert done == {("ppo", "block"): 1, ("dmc", "block"): 0}  # seed 7 is not one of the profile's two
    line = page.coverage_line(s, done)
    assert line.startswith("**Partial:**") and "ppo on block 1/2, dmc on block 0/1" in line


def test_two_workers_write_the_serial_scores_and_report(tmp_path, suite_copy):
    """`--workers 2` trains and evaluates the runs in two processes; scores.jsonl holds the serial
    run's lines in the serial order (less the seconds and the folder in the specs), and the report's
    tables are the same."""
    suite, lock = suite_copy
    _edit(suite, lambda d: d["runs"]["ci"]["learners"].update({"ppo": 1, "dmc": 1}))

    def run(workers: int) -> tuple[list[dict], str]:
        out, report = tmp_path / f"w{workers}", tmp_path / f"w{workers}.md"
        assert cli.main(["--profile", "ci", "--suite", str(suite), "--lock", str(lock), "--out", str(out),
                         "--report", str(report), "--reps", "50", "--workers", str(workers)]) == 0
        rows = []
        for line in (out / "scores.jsonl").read_text().splitlines():
            r = json.loads(line)
            rows.append({k: (v.replace(str(out), "OUT") if isinstance(v, str) else v) for k, v in r.items()
                         if "seconds" not in k})
        text = report.read_text()
        cost = text.index("## What it cost")  # what the runs cost is timing, not a result
        text = text[:cost] + text[text.index("\n## ", cost + 1):]
        page = [line for line in text.splitlines() if "minutes" not in line and "Regenerate" not in line]
        return rows, "\n".join(page).replace(f"w{workers}", "W")

    serial, parallel = run(1), run(2)
    assert len(serial[0]) == 2 * (7 * 3 + 1)
    assert parallel == serial


def test_a_killed_benchmark_reruns_to_the_serial_scores_without_a_broken_line(tmp_path, suite_copy):
    """`domino benchmark --workers 2` killed (with its workers) once the first run's lines are in
    scores.jsonl, a half-written line added as a kill in mid-write would leave it, then run again:
    the file ends with every line of the serial run once, each whole, in the serial order."""
    suite, lock = suite_copy
    _edit(suite, lambda d: d["runs"]["ci"]["learners"].update({"ppo": 2, "dmc": 1}))  # 3 runs: 2 workers stay busy

    def args(out: Path, workers: int) -> list[str]:
        return ["--profile", "ci", "--suite", str(suite), "--lock", str(lock), "--out", str(out),
                "--report", str(out / "r.md"), "--reps", "20", "--workers", str(workers)]

    def rows(out: Path) -> list[dict]:
        return [{k: (v.replace(str(out), "OUT") if isinstance(v, str) else v) for k, v in json.loads(line).items()
                 if "seconds" not in k} for line in (out / "scores.jsonl").read_text().splitlines()]

    serial = tmp_path / "serial"
    assert cli.main(args(serial, 1)) == 0
    out = tmp_path / "killed"
    scores = out / "scores.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "domino_training.cli", "benchmark", *args(out, 2)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not (scores.is_file() and scores.read_text()) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the benchmark finished (or failed) before it could be killed"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver and its spawned workers
        proc.wait()
    written = scores.read_text()
    assert 0 < written.count("\n") < len(rows(serial)), "killed after the first run's lines, before the last"
    scores.write_text(written + written.splitlines()[0][:25])  # a line cut short by a kill in mid-write
    assert cli.main(args(out, 2)) == 0
    assert scores.read_text().endswith("\n") and rows(out) == rows(serial)

def test_the_benchmark_command_refuses_a_changed_protocol_with_exit_status_2(suite_copy, tmp_path, capsys):
    """`domino benchmark` itself (cli.main, as the console script calls it) with a protocol changed and
    the version not bumped: exit status 2, the reason on stderr, nothing trained or written."""
    suite, lock = suite_copy
    _edit(suite, lambda d: d["protocol"].__setitem__("deal_seed", d["protocol"]["deal_seed"] + 1))
    out, report = tmp_path / "out", tmp_path / "r.md"
    args = ["--profile", "ci", "--suite", str(suite), "--lock", str(lock), "--out", str(out), "--report", str(report)]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("domino benchmark: ") and "bump `version`" in err
    assert not out.exists() and not report.exists()
    from domino_training.cli import main as domino

    assert domino(["benchmark", *args]) == 2  # through the `domino` entry point too
    assert "bump `version`" in capsys.readouterr().err and not out.exists()


def test_aggregate_agrees_with_rliable_on_profiles_improvement_and_iqm(tmp_path):
    """Scores of two learners (5 seeds x 3 games) made up so the learners differ:
    the performance profiles' points equal rliable's (and the share of runs above each tau); the
    probability of improvement equals rliable's, its interval within a tenth of the width of rliable's
    bootstrap interval; the IQM cells equal rliable's aggregate_iqm."""
    from rliable import library as rly
    from rliable import metrics

    s = bench_suite.load_suite("ci")
    games = list(s.games)[:3]
    s.runs = {"ppo": (5, games), "dmc": (5, games)}
    last = s.marks[-1]
    rng = np.random.default_rng(11)
    scores = runner.ScoreFile(tmp_path / "scores.jsonl")
    made = {}
    for lr, shift in (("ppo", 0.15), ("dmc", 0.0)):
        for opp in s.ladder + [s.search]:
            m = np.clip(rng.normal(0.5 + shift, 0.12, (5, len(games))), 0.01, 0.99)
            made[(lr, opp)] = m / 0.5
            for seed in range(5):
                for j, g in enumerate(games):
                    scores.add({"game": g, "learner": lr, "seed": seed, "env_steps": last, "opponent": opp,
                                "win": float(m[seed, j]), "fair": 0.5, "final": True})
    result = aggregate.aggregate(s, scores, reps=1000, seed=0)
    for opp in s.ladder:
        x, y = made[("ppo", opp)], made[("dmc", opp)]
        prof = result["profiles"][opp]
        taus = np.array(prof["taus"])
        theirs, _ = rly.create_performance_profile({"ppo": x, "dmc": y}, taus, reps=50)
        for lr, m in (("ppo", x), ("dmc", y)):
            np.testing.assert_allclose(prof[lr]["p"], theirs[lr])
            np.testing.assert_allclose(prof[lr]["p"], [(m > t).mean() for t in taus])
            assert all(lo <= p <= hi for lo, p, hi in zip(prof[lr]["lo"], prof[lr]["p"], prof[lr]["hi"]))
        cell = result["improvement"][opp]["ppo,dmc"]
        assert cell["p"] == pytest.approx(metrics.probability_of_improvement(x, y))
        point, ci = rly.get_interval_estimates({"ppo,dmc": (x, y)}, lambda a, b: np.array(
            [metrics.probability_of_improvement(a, b)]), reps=1000, random_state=np.random.RandomState(3))
        width = ci["ppo,dmc"][1, 0] - ci["ppo,dmc"][0, 0]
        assert width > 0.05 and cell["p"] > 0.6
        assert abs(cell["lo"] - ci["ppo,dmc"][0, 0]) < 0.1 * width and abs(cell["hi"] - ci["ppo,dmc"][1, 0]) < 0.1 * width
        for lr, m in (("ppo", x), ("dmc", y)):
            assert result["opponents"]["own"][opp][lr]["iqm"] == pytest.approx(metrics.aggregate_iqm(m))
            assert result["opponents"]["common"][opp][lr]["mean"] == pytest.approx(m.mean())
