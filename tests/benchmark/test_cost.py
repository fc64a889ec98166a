"""What the full profile costs (training/benchmark/cost.py): core-seconds from each run's own clocks, runs not yet
measured projected from the quick profile by the learner's measured ratio, and the wall clock on N cores a
longest-first schedule of the runs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from domino_training.benchmark import cost
from domino_training.benchmark.runner import ScoreFile

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_schedule_is_longest_first_and_never_beats_its_bounds():
    assert cost.schedule([3, 3, 2, 2, 2], 2) == 7  # longest first: (3, 2, 2) and (3, 2); the best split is 6
    assert cost.schedule([5, 1, 1], 8) == 5  # no schedule beats the longest job
    assert cost.schedule([1.0] * 10, 3) == 4
    assert cost.schedule([], 4) == 0
    jobs = [7.0, 3.5, 2.0, 9.0, 1.0, 4.0, 4.0]
    for n in (1, 2, 3, 16):
        assert max(max(jobs), sum(jobs) / n) <= cost.schedule(jobs, n) <= sum(jobs)


def _row(game, learner, seed, env_steps, opponent, seconds, eval_seconds, final):
    return {"game": game, "learner": learner, "seed": seed, "env_steps": env_steps, "opponent": opponent,
            "seconds": seconds, "eval_seconds": eval_seconds, "final": final}


def test_a_runs_core_seconds_are_its_training_clock_and_every_evaluation():
    rows = [_row("draw", "ppo", 0, 5, "greedy", 10.0, 1.0, False), _row("draw", "ppo", 0, 10, "greedy", 30.0, 2.0, True),
            _row("draw", "ppo", 0, 10, "pimc:n=16", 30.0, 5.0, True), _row("draw", "ppo", 1, 5, "greedy", 9.0, 1.0, False)]
    suite = cost.load_suite("quick", only=["draw"], learners=["ppo"])
    got = cost.run_seconds(suite, ScoreFile.of_rows(rows))
    assert got == {("draw", "ppo", 0): {"train": 30.0, "evaluate": 8.0, "cpu": None}}  # seed 1 unfinished: not counted
    assert cost.core_seconds(got[("draw", "ppo", 0)]) == 38.0  # no CPU recorded: its clocks
    assert cost.run_costs(suite, ScoreFile.of_rows(rows)) == {
        "ppo": {"draw": {"runs": 1, "train": 30.0, "evaluate": 8.0, "cpu": None}}}
    # two sittings, each recording its CPU once on its last line: the run's CPU is their sum
    rows[1]["session_cpu_seconds"], rows[2]["session_cpu_seconds"] = 20.0, 7.5
    got = cost.run_seconds(suite, ScoreFile.of_rows(rows))[("draw", "ppo", 0)]
    assert got["cpu"] == 27.5 and cost.core_seconds(got) == 27.5


def test_unmeasured_runs_are_projected_by_the_learners_measured_ratio():
    quick = json.loads((DOCS / "benchmark" / "quick.json").read_text())
    qcost = cost.run_costs(cost._suite_of(quick), ScoreFile.of_rows(quick["scores"]))
    per_run = {(lr, g): (c["train"] + c["evaluate"]) / c["runs"] for lr, per in qcost.items() for g, c in per.items()}
    full = {"profile": "full", "scores": [], "crossplay": {"draw": {"seconds": 100.0, "workers": 2,
                                                                    "ratings": {"hands": 1000}}}}
    for seed in range(5):  # ppo on draw measured at 12 times its quick cost
        full["scores"].append(_row("draw", "ppo", seed, 10_000_000, "greedy", 11 * per_run[("ppo", "draw")],
                                   per_run[("ppo", "draw")], True))
    p = cost.projection(full, quick)
    assert p["ratio"] == {"ppo": pytest.approx(12.0)} and p["pooled"] == pytest.approx(12.0)
    by = {(r["game"], r["learner"], r["seed"]): r for r in p["runs"]}
    assert by[("draw", "ppo", 0)]["measured"] and not by[("block", "ppo", 0)]["measured"]
    assert by[("block", "ppo", 3)]["seconds"] == pytest.approx(12.0 * per_run[("ppo", "block")])
    assert by[("block", "dmc", 0)]["seconds"] == pytest.approx(12.0 * per_run[("dmc", "block")])  # pooled
    assert p["crossplay"]["draw"] == {"seconds": 200.0, "measured": True}  # 100 s on 2 workers
    hands = cost.crossplay_hands(cost.load_suite("full"), "block")
    assert p["crossplay"]["block"]["seconds"] == pytest.approx(0.2 * hands)  # 200 core-s / 1000 hands
    total = sum(r["seconds"] for r in p["runs"]) + sum(c["seconds"] for c in p["crossplay"].values())
    assert p["walls"][2]["at_once"] >= total / 2 and p["walls"][64]["at_once"] < p["walls"][2]["at_once"]
    assert p["walls"][2]["stages"] >= p["walls"][2]["at_once"]  # a stage waits for its longest run


def test_the_round_robins_hands_count_every_pair_or_every_table():
    full = cost.load_suite("full")
    k = 3 + 5 + 5 + 5  # the ladder and ppo, ppo_bc, dmc's seeds
    assert cost.crossplay_hands(full, "draw") == k * (k - 1) // 2 * full.crossplay_deals * 2
    assert cost.crossplay_hands(full, "magic7") == full.crossplay_deals * 4
