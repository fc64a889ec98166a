"""Time to strength, side by side: `python -m domino_training.scripts.strength_timing`.

    python -m domino_training.scripts.strength_timing              # resumable; writes docs/benchmark_timing.md (+ .json)
    python -m domino_training.scripts.strength_timing --only sum7  # some games (the rest resume later)
    python -m domino_training.scripts.strength_timing --workers 2  # the scoring in 2 processes, the same scores

How many env steps and training minutes each learner needs to first beat greedy and to first reach
the heuristic's level, measured so that the minutes compare: each (game, seed) trains every learner
of configs/benchmark/timing.yaml at the same moment, one process each with one torch thread, so on
the 2-core machine they run under the same load (nothing else should run). Learners train through
the learner interface (training/learners/interface.py) with the benchmark suite's settings, saving a policy at
marks finer than the protocol's; only then is every saved policy scored, against greedy and the
heuristic on the suite's frozen deals, so scoring never shares the cores with a timed run. The tests
are the benchmark's own (`benchmark.time_to_strength`). The report gives, per game, the median over
seeds of each learner's env steps and minutes, the ratio of minutes (the other learner's over the
first learner's: above 1 means the first is faster) and each learner's training throughput.

A run's minutes are its own training clock (collection and updates; scoring is not in it) at the
first saved policy past the threshold, so they overstate the crossing by up to one mark's gap.

``--workers N`` scores the saved policies N at a time, each evaluation a job in a process of its own
(training/parallel.py); scores.jsonl is appended by this process alone in the serial order, so it and
the report are the serial run's. The trainings are not a job list: a (game, seed)'s learners already
train at once, one process each (as many cores as learners), and more at once would change the load
the minutes are measured under.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from domino_envs.errors import ConfigError
from domino_training.benchmark.aggregate import summarize_strength
from domino_training.benchmark.aggregate import time_to_strength as first_crossings
from domino_training.benchmark.report import hardware_line, portable_json
from domino_training.benchmark.runner import ScoreFile, evaluate_point
from domino_training.benchmark.suite import load_suite, suite_folder
from domino_training.commands import add_workers
from domino_training.parallel import check_workers, in_order, run_jobs
from domino_training.scripts import DOCS

WANT = {"learners", "seeds", "deals", "opponents", "params", "games"}


def read_timing(path: Path | None = None, suite_path: Path | None = None) -> dict:
    """The timing file, checked against the suite (ConfigError naming the bad key and what is allowed)."""
    path = Path(path) if path is not None else suite_folder() / "timing.yaml"
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict) or set(data) != WANT:
        got = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise ConfigError(f"{path}: a timing file is a mapping of {sorted(WANT)}; got {got}")
    suite = load_suite("quick", suite_path)
    from domino_training.learners import learner_names

    learners = data["learners"]
    if not (isinstance(learners, list) and len(learners) >= 2 and len(set(learners)) == len(learners)
            and all(lr in learner_names() for lr in learners)):
        raise ConfigError(f"{path}: learners {learners!r}: two or more distinct names of {learner_names()}")
    for key in ("seeds", "deals"):
        v = data[key]
        if not (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
            raise ConfigError(f"{path}: {key} {v!r}: a positive int")
    if data["deals"] > max(suite.protocol["ladder_deals"].values()):
        raise ConfigError(f"{path}: deals {data['deals']}: at most the frozen deals "
                          f"({max(suite.protocol['ladder_deals'].values())})")
    if data["opponents"] != ["greedy", "heuristic"]:
        raise ConfigError(f"{path}: opponents {data['opponents']!r}: [greedy, heuristic] (the two thresholds)")
    if not isinstance(data["params"], dict) or not set(data["params"]) <= set(learners):
        raise ConfigError(f"{path}: params {data['params']!r}: a mapping from some of {learners} to settings")
    if not isinstance(data["games"], dict) or not data["games"]:
        raise ConfigError(f"{path}: games {data['games']!r}: a mapping game -> {{budget, marks}}")
    for name, g in data["games"].items():
        if name not in suite.games:
            raise ConfigError(f"{path}: games.{name}: one of the suite's games {list(suite.games)}")
        if not isinstance(g, dict) or set(g) != {"budget", "marks"}:
            raise ConfigError(f"{path}: games.{name} {g!r}: a mapping with budget and marks")
        marks = g["marks"]
        if not (isinstance(marks, list) and marks and all(isinstance(m, int) and m > 0 for m in marks)
                and marks == sorted(set(marks)) and marks[-1] == g["budget"]):
            raise ConfigError(f"{path}: games.{name}.marks {marks!r}: increasing env steps, the last == budget")
    return data


def learner_run(timing: dict, game: str, learner: str, seed: int, out: Path, suite_path: Path | None = None):
    """The LearnerRun of one timed run: the suite's settings for the learner, then the timing file's."""
    from domino_training.learners import LearnerRun

    suite = load_suite("quick", suite_path)
    spec, g = suite.games[game], timing["games"][game]
    params = {**suite.params.get(learner, {}), **dict(timing["params"].get(learner) or {})}
    return LearnerRun(game=spec.env, config=dict(spec.config), seed=seed, budget=int(g["budget"]),
                      marks=list(g["marks"]), run_dir=Path(out) / "runs" / game / learner / f"seed{seed}",
                      params=params)


def saved_points(run, learner: str) -> list:
    """The policies a run folder has saved so far (none for a run not started)."""
    from domino_training.learners import PointLog

    return sorted(PointLog(run, learner).points, key=lambda p: p.mark)


def _finished(run, learner: str) -> bool:
    return len(saved_points(run, learner)) == len(run.marks)


def train_side_by_side(timing: dict, out: Path, games: list[str], timing_path: Path | None = None,
                       suite_path: Path | None = None, echo=print) -> None:
    """Every (game, seed) in turn, its unfinished learners trained at once in child processes (one
    torch thread each); a killed run resumes from its last mark, so a killed timing continues."""
    for game in games:
        for seed in range(timing["seeds"]):
            todo = [lr for lr in timing["learners"]
                    if not _finished(learner_run(timing, game, lr, seed, out, suite_path), lr)]
            if not todo:
                continue
            t0 = time.perf_counter()
            env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
            children = []
            for lr in todo:
                cmd = [sys.executable, "-m", "domino_training.scripts.strength_timing", "train-one", game, lr, str(seed),
                       "--out", str(out)]
                cmd += ["--timing", str(timing_path)] if timing_path else []
                cmd += ["--suite", str(suite_path)] if suite_path else []
                children.append((lr, subprocess.Popen(cmd, env=env)))
            failed = [lr for lr, child in children if child.wait() != 0]
            if failed:
                raise ConfigError(f"strength timing: {game} seed {seed}: {failed} failed (see their output above)")
            echo(f"{game} seed {seed}: {', '.join(todo)} trained side by side in {time.perf_counter() - t0:.0f} s")


def score_points(timing: dict, out: Path, games: list[str], suite_path: Path | None = None,
                 workers: int = 1) -> ScoreFile:
    """Score every saved policy not yet in out/scores.jsonl against the two opponents.

    Each policy's evaluation is a job (training/parallel.py): with `workers` > 1 they play in that many
    processes, started once for the whole list (an evaluation's own workers would start a pool per
    policy); this process alone appends to scores.jsonl, in the serial order."""
    check_workers(workers)
    suite = load_suite("quick", suite_path)
    scores = ScoreFile(Path(out) / "scores.jsonl")
    todo = []
    for game in games:
        for learner in timing["learners"]:
            for seed in range(timing["seeds"]):
                run = learner_run(timing, game, learner, seed, out, suite_path)
                for p in saved_points(run, learner):
                    opponents = [o for o in timing["opponents"] if not scores.has(game, learner, seed, p.mark, o)]
                    if opponents:
                        todo.append((game, learner, seed, p, opponents))
    jobs = [(suite, suite.games[game], p.spec, opponents, timing["deals"]) for game, _, _, p, opponents in todo]
    for i, results in in_order(run_jobs(evaluate_point, jobs, workers, describe=lambda i: (
            "the scoring of {} {} seed {} at {:,} env steps".format(*todo[i][:3], todo[i][3].mark)))):
        game, learner, seed, p, _ = todo[i]
        for o, res in results.items():
            scores.add({"game": game, "learner": learner, "seed": seed, "env_steps": p.mark,
                        "trained_env_steps": p.env_steps, "seconds": p.seconds, "opponent": o, "spec": p.spec, **res})
    return scores


def summarize(timing: dict, scores: ScoreFile, games: list[str], suite_path: Path | None = None) -> dict:
    """Per game: each run's first crossings, each learner's medians, the ratios of minutes and env
    steps against the first learner (learners[0]), and each learner's throughput."""
    suite = load_suite("quick", suite_path)
    suite = dataclasses.replace(suite, runs={lr: (timing["seeds"], games) for lr in timing["learners"]})
    rows = first_crossings(suite, scores)
    medians = summarize_strength(rows, suite)
    first = timing["learners"][0]
    out = {}
    for game in games:
        entry = {"runs": [r for r in rows if r["game"] == game], "medians": {lr: medians[lr][game]
                                                                             for lr in timing["learners"]},
                 "ratios": {}, "throughput": {}}
        for lr in timing["learners"]:
            finals = [max(scores.of(game=game, learner=lr, seed=s), key=lambda r: r["env_steps"], default=None)
                      for s in range(timing["seeds"])]
            rates = [r["trained_env_steps"] / r["seconds"] for r in finals if r is not None and r["seconds"] > 0]
            entry["throughput"][lr] = float(np.median(rates)) if rates else None
            if lr == first:
                continue
            cell = {}
            for key in ("beat_greedy", "heuristic_level"):
                a, b = medians[first][game][key], medians[lr][game][key]
                both = a["minutes"] is not None and b["minutes"] is not None
                cell[key] = {"minutes": b["minutes"] / a["minutes"] if both else None,
                             "env_steps": b["env_steps"] / a["env_steps"] if both else None}
            a, b = entry["throughput"][first], entry["throughput"][lr]
            cell["throughput"] = a / b if a and b else None
            entry["ratios"][lr] = cell
        out[game] = entry
    return out


def _num(x, fmt: str) -> str:
    return "—" if x is None else format(x, fmt)


def _times(x) -> str:
    return "—" if x is None else f"{x:.1f}x"


def markdown(timing: dict, summary: dict, hardware: str, command: str) -> str:
    first = timing["learners"][0]
    lines = ["# Time to strength, side by side", "",
             f"Generated from a checkout by `{command}` (training/scripts/strength_timing.py, "
             f"configs/benchmark/timing.yaml). {hardware}.", "",
             f"Each (game, seed) trained {', '.join(f'`{lr}`' for lr in timing['learners'])} at the same moment, "
             "one process each with one torch thread, so they shared the machine's load (run it on an otherwise "
             "idle machine). "
             f"Every saved policy was then scored on the first {timing['deals']} frozen deals of the benchmark "
             "suite (seats rotated). **Beats greedy**: the 95% interval of the win share is above the fair share. "
             "**Heuristic's level**: the mean win share against the heuristic is at or above the fair share. "
             "Minutes are the run's own training clock at the first saved policy past the line (so up to one "
             "mark's gap late), medians over the seeds that got there; `n/N` counts them.", "",
             f"A ratio is the other learner's minutes (or env steps) over `{first}`'s: above 1, `{first}` is faster. "
             "Throughput is env steps (every seat's decisions) per training second at the budget.", ""]
    for game, e in summary.items():
        g = timing["games"][game]
        lines += [f"## {game}", "", f"Budget {g['budget']:,} env steps; marks at "
                  + ", ".join(f"{m:,}" for m in g["marks"]) + ".", "",
                  "| learner | beats greedy: env steps | minutes | n/N | heuristic's level: env steps | minutes | n/N "
                  "| env steps / s |", "|---|---|---|---|---|---|---|---|"]
        for lr, m in e["medians"].items():
            bg, hl = m["beat_greedy"], m["heuristic_level"]
            lines.append(f"| `{lr}` | {_num(bg['env_steps'], ',.0f')} | {_num(bg['minutes'], '.2f')} | "
                         f"{bg['reached']}/{bg['runs']} | {_num(hl['env_steps'], ',.0f')} | {_num(hl['minutes'], '.2f')} | "
                         f"{hl['reached']}/{hl['runs']} | {_num(e['throughput'][lr], ',.0f')} |")
        lines.append("")
        for lr, c in e["ratios"].items():
            lines.append(f"- `{lr}` / `{first}`: to beat greedy **{_times(c['beat_greedy']['minutes'])}** the "
                         f"minutes ({_times(c['beat_greedy']['env_steps'])} the env steps); to the heuristic's "
                         f"level {_times(c['heuristic_level']['minutes'])} the minutes "
                         f"({_times(c['heuristic_level']['env_steps'])} the env steps); throughput "
                         f"{_times(c['throughput'])}.")
        lines += ["", "| learner | seed | beats greedy at (env steps, minutes) | heuristic's level at |", "|---|---|---|---|"]
        for r in e["runs"]:
            cells = ["not reached" if r[k] is None else f"{r[k]['env_steps']:,}, {r[k]['minutes']:.2f}"
                     for k in ("beat_greedy", "heuristic_level")]
            lines.append(f"| `{r['learner']}` | {r['seed']} | {cells[0]} | {cells[1]} |")
        lines.append("")
    return "\n".join(lines)


def page(data: dict) -> str:
    """docs/benchmark_timing.md from the JSON written beside it (training/scripts/pages.py)."""
    return markdown(data["timing"], data["summary"], data["hardware"], data["command"])


def run_timing(out: Path, report: Path, timing_path: Path | None = None, suite_path: Path | None = None,
               only: list[str] | None = None, echo=print, workers: int = 1) -> dict:
    """Train side by side (resuming), score (`workers` processes), summarize, write the report and its
    JSON beside it."""
    check_workers(workers)
    timing = read_timing(timing_path, suite_path)
    games = list(timing["games"])
    if only:
        for g in only:
            if g not in games:
                raise ConfigError(f"--only {g!r}: one of the timing file's games {games}")
        games = [g for g in games if g in only]
    train_side_by_side(timing, out, games, timing_path, suite_path, echo)
    scores = score_points(timing, out, games, suite_path, workers)
    summary = summarize(timing, scores, list(timing["games"]) if not only else games, suite_path)
    report = Path(report)
    report.parent.mkdir(parents=True, exist_ok=True)
    data = {"timing": timing, "summary": summary, "scores": list(scores.rows.values()), "hardware": hardware_line(),
            "command": "python -m domino_training.scripts.strength_timing"}
    report.write_text(page(data))
    json_path = report.with_suffix(".json")
    json_path.write_text(portable_json(data, out, indent=1))  # specs relative to --out
    echo(f"wrote {report} and {json_path}")
    return data


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m domino_training.scripts.strength_timing", description=__doc__.split("\n")[0])
    ap.add_argument("action", nargs="?", default="run", choices=["run", "train-one"],
                    help="run everything (default); train-one GAME LEARNER SEED is what each child process runs")
    ap.add_argument("what", nargs="*", help="train-one only: GAME LEARNER SEED")
    ap.add_argument("--out", default="runs/timing", help="output folder (default runs/timing)")
    ap.add_argument("--report", default=str(DOCS / "benchmark_timing.md"))
    ap.add_argument("--only", nargs="+", metavar="GAME", help="run only these games of the timing file")
    ap.add_argument("--timing", help="another timing file (default configs/benchmark/timing.yaml)")
    ap.add_argument("--suite", help="another suite file (default configs/benchmark/suite.yaml)")
    add_workers(ap, "score the saved policies",
                note="The timed trainings run side by side as always, one process per learner")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    timing_path, suite_path = args.timing and Path(args.timing), args.suite and Path(args.suite)
    try:
        if args.action == "train-one":
            if len(args.what) != 3 or not args.what[2].isdigit():
                raise ConfigError(f"train-one {args.what!r}: GAME LEARNER SEED")
            from domino_training.learners import train_learner

            game, learner, seed = args.what[0], args.what[1], int(args.what[2])
            timing = read_timing(timing_path, suite_path)
            if game not in timing["games"] or learner not in timing["learners"]:
                raise ConfigError(f"train-one {args.what!r}: a game of {list(timing['games'])} and a learner of "
                                  f"{timing['learners']}")
            train_learner(learner, learner_run(timing, game, learner, seed, Path(args.out), suite_path))
            return 0
        if args.what:
            raise ConfigError(f"unexpected arguments {args.what!r} (only train-one takes GAME LEARNER SEED)")
        run_timing(Path(args.out), Path(args.report), timing_path, suite_path, args.only, workers=args.workers)
    except ValueError as e:
        print(f"strength timing: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
