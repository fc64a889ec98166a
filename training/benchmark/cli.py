"""`domino benchmark`: the whole pipeline (check the protocol, train and evaluate, aggregate, rate,
report) and its command line.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from domino_envs.errors import ConfigError
from domino_training.benchmark.aggregate import (
    aggregate,
    crossplay,
    finished_only,
    finished_seeds,
    time_to_strength,
)
from domino_training.benchmark.report import (
    _plots,
    default_out,
    default_report,
    page_facts,
    page_from_data,
    portable_json,
    regenerate_command,
)
from domino_training.benchmark.runner import ScoreFile, run_all
from domino_training.benchmark.suite import PROFILES, check_protocol, freeze, load_suite, read_lock, read_suite_file
from domino_training.commands import HelpFormatter, add_address, add_import, add_workers
from domino_training.learners.interface import learner_names
from domino_training.user_code import import_user_code


def run_benchmark(profile: str, out: Path, report: Path, suite_path: Path | None = None, lock_path: Path | None = None,
                  only: list[str] | None = None, reps: int = 2000, bootstrap: int = 200, echo=print,
                  train: bool = True, learners: list[str] | None = None, seeds: int | None = None,
                  workers: int = 1, imports: list[str] | None = None, address: str | None = None) -> dict:
    """The whole pipeline: check the protocol, train and evaluate (resuming), aggregate, rate, report.
    ``workers`` > 1 trains and evaluates the runs in that many processes (runner.run_all), with the
    same scores.jsonl and report; ``imports`` are the --import modules, registered in each worker.
    ``train=False`` (``--report-only``) trains and evaluates nothing: the report holds the runs whose
    seeds are all finished, each learner on the games where it has them all, and says what is missing."""
    t0 = time.perf_counter()
    data = read_suite_file(suite_path)
    check_protocol(data, read_lock(lock_path))
    suite = load_suite(profile, suite_path, only, learners, seeds)
    scores = run_all(suite, out, echo, workers, imports, address) if train else ScoreFile(Path(out) / "scores.jsonl")
    done = finished_seeds(suite, scores)
    command = regenerate_command(profile, only, learners, seeds, out, report, suite_path, lock_path, imports, reps)
    if not train:
        suite = finished_only(suite, done)
    agg = aggregate(suite, scores, reps)
    strength_rows = time_to_strength(suite, scores)
    cross = crossplay(suite, scores, bootstrap, echo)
    report = Path(report)
    folder = report.parent / report.stem
    folder.mkdir(parents=True, exist_ok=True)
    plots = _plots(suite, agg, folder, profile, scores)
    minutes = (time.perf_counter() - t0) / 60
    everything = {"profile": profile, "version": suite.version, "protocol": suite.protocol,
                  "scores": list(scores.rows.values()), "aggregate": agg, "time_to_strength": strength_rows,
                  "crossplay": cross,
                  "page": page_facts(only, learners, seeds, suite_path, not train, command, minutes, plots, report)}
    published = portable_json(everything, out, indent=1)  # specs relative to --out
    (folder / f"{profile}.json").write_text(published)
    report.write_text(page_from_data(json.loads(published)))  # the page is its JSON rendered
    echo(f"wrote {report} and {folder}/")
    return everything


DESCRIPTION = ("Benchmark learners on the frozen suite: check the protocol, train and evaluate every run (resuming), "
               "aggregate, rate and write the report.")
EXAMPLES = """examples:
  domino benchmark --profile ci --out /tmp/b --report /tmp/b/report.md   # seconds: the whole pipeline
  domino benchmark --profile quick --workers 2                          # every learner on every game
"""  # shown by --help; tests/fronts/test_command_help.py parses them


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(epilog=EXAMPLES, formatter_class=HelpFormatter,
        prog="domino benchmark", description=DESCRIPTION)
    ap.add_argument("action", nargs="?", default="run", choices=["run", "freeze"],
                    help="run the benchmark (default) or record the protocol's fingerprints in the --lock file")
    ap.add_argument("--profile", default="quick", choices=PROFILES,
                    help="budget and evaluation sizes from the suite: ci (seconds), quick, full")
    ap.add_argument("--out", help="output folder of the runs and scores.jsonl (default runs/benchmark/<profile> in the "
                                  "current folder)")
    ap.add_argument("--report", help="the Markdown report, its plots and JSON in a folder beside it (default "
                                     "benchmark.md for quick, benchmark_<profile>.md otherwise, in the current folder)")
    ap.add_argument("--only", nargs="+", metavar="GAME", help="run only these games of the suite")
    ap.add_argument("--learners", nargs="+", metavar="LEARNER",
                    help="run only these learners of the profile (default: all but the optional ones, e.g. rllib)")
    ap.add_argument("--seeds", type=int, metavar="N", help="at most N seeds of each learner (the page says so)")
    ap.add_argument("--suite", help="another suite file (default: the suite shipped with the package)")
    ap.add_argument("--lock", help="another lock file (default: the lock shipped with the package)")
    ap.add_argument("--report-only", action="store_true",
                    help="train and evaluate nothing: report the runs already finished and name the missing ones")
    ap.add_argument("--reps", type=int, default=2000, help="bootstrap resamples of the aggregates")
    add_workers(ap, "train and evaluate the runs")
    add_address(ap, "train and evaluate the runs")
    add_import(ap, "a learner or an agent of your own: its register_learner or register_agent call")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        before = set(learner_names())
        for item in args.imports:
            import_user_code(item)
        imported = sorted(set(learner_names()) - before)
        if imported and args.action == "run":
            runs = load_suite(args.profile, args.suite and Path(args.suite), args.only, args.learners, args.seeds).runs
            unused = [name for name in imported if name not in runs]
            if unused:
                raise ConfigError(f"--import registered {unused}, which this run would not train: list it under "
                                  f"runs.{args.profile}.learners in a suite file of your own (--suite FILE) and name "
                                  f"it with --learners {' '.join(unused)}")
        if args.action == "freeze":
            if not args.lock:
                raise ConfigError("domino benchmark freeze writes the lock file that --lock names (in a checkout: "
                                  "--suite configs/benchmark/suite.yaml --lock configs/benchmark/lock.json)")
            lock = freeze(args.suite and Path(args.suite), Path(args.lock))
            print(f"locked versions: {sorted(lock)}")
            return 0
        out = Path(args.out or default_out(args.profile))
        report = Path(args.report or default_report(args.profile))
        run_benchmark(args.profile, out, report, args.suite and Path(args.suite), args.lock and Path(args.lock),
                      args.only, args.reps, train=not args.report_only, learners=args.learners, seeds=args.seeds,
                      workers=args.workers, imports=args.imports, address=args.address)
    except ValueError as e:
        print(f"domino benchmark: {e}", file=sys.stderr)
        return 2
    return 0
