"""`domino benchmark`: the whole pipeline (check the protocol, train and evaluate, aggregate, rate,
report) and its command line.
"""
from __future__ import annotations

import argparse
import datetime
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
    compared_profile,
    default_out,
    default_report,
    hardware_line,
    page_facts,
    page_from_data,
    portable_json,
    regenerate_command,
)
from domino_training.benchmark.runner import ScoreFile, run_all, scored
from domino_training.benchmark.suite import PROFILES, check_protocol, freeze, load_suite, read_lock, read_suite_file
from domino_training.commands import HelpFormatter, add_address, add_import, add_workers
from domino_training.learners.interface import learner_names
from domino_training.user_code import import_user_code


def run_benchmark(profile: str, out: Path, report: Path, suite_path: Path | None = None, lock_path: Path | None = None,
                  only: list[str] | None = None, reps: int = 2000, bootstrap: int = 200, echo=print,
                  train: bool = True, learners: list[str] | None = None, seeds: int | None = None,
                  workers: int = 1, imports: list[str] | None = None, address: str | None = None,
                  stage: str | None = None, compare: Path | None = None) -> dict:
    """The whole pipeline: check the protocol, train and evaluate (resuming), aggregate, rate, report.
    ``workers`` > 1 trains and evaluates the runs in that many processes (runner.run_all), with the
    same scores.jsonl and report; ``imports`` are the --import modules, registered in each worker.
    ``train=False`` (``--report-only``) trains and evaluates nothing: the report holds the runs whose
    seeds are all finished, each learner on the games where it has them all, and says what is missing.

    ``stage`` (``--stage GAME``): one game of the profile, for a profile too long for one sitting. Its runs
    train and evaluate with their scores kept beside the page (REPORT's folder/scores.jsonl, to commit), the
    page holds every game finished so far (the cross-play of earlier stages kept from the published JSON), and
    the stage's wall clock and CPU seconds are added to the JSON's ``stages``. ``compare``: another profile's
    published JSON of the same suite (the quick one), whose final scores the page sets beside these."""
    t0, cpu0 = time.perf_counter(), cpu_seconds()
    data = read_suite_file(suite_path)
    check_protocol(data, read_lock(lock_path))
    report = Path(report)
    folder = report.parent / report.stem
    suite = load_suite(profile, suite_path, only, learners, seeds)
    scores_path, previous = None, {}
    if stage is not None:
        if only:
            raise ConfigError(f"--stage {stage} trains one game; leave out --only {' '.join(only)}")
        if stage not in suite.games:
            raise ConfigError(f"--stage {stage!r} is not a game of the suite; one of {list(suite.games)}")
        scores_path = folder / "scores.jsonl"
        published_before = folder / f"{profile}.json"
        previous = json.loads(published_before.read_text()) if published_before.is_file() else {}
        folder.mkdir(parents=True, exist_ok=True)
    trained = load_suite(profile, suite_path, [stage], learners, seeds) if stage else suite
    if stage:  # --learners picks what this sitting trains; the page holds every learner finished so far
        suite = load_suite(profile, suite_path, None, None, seeds)
    scores_path = scores_path or Path(out) / "scores.jsonl"  # run_all's default: a stage keeps it beside its page
    trained_now = []  # the runs this sitting trains (none for --report-only)
    if train:
        before = set(ScoreFile(scores_path).rows)
        scores = run_all(trained, out, echo, workers, imports, address, scores_path)
        after = set(scores.rows)
        trained_now = [run for run in trained.run_list()
                       if scored(trained, after, *run) and not scored(trained, before, *run)]
    else:
        scores = ScoreFile(scores_path)
    done = finished_seeds(suite, scores)
    page_learners = None if stage else learners  # a stage's page holds every learner of the profile
    command = regenerate_command(profile, only, page_learners, seeds, out, report, suite_path, lock_path, imports, reps,
                                 stage="GAME" if stage else None, compare=compare)
    if not train or stage:
        suite = finished_only(suite, done)
    agg = aggregate(suite, scores, reps)
    strength_rows = time_to_strength(suite, scores)
    cross = crossplay(suite, scores, bootstrap, echo, workers, address, imports, previous.get("crossplay"))
    folder.mkdir(parents=True, exist_ok=True)
    plots = _plots(suite, agg, folder, profile, scores)
    minutes = (time.perf_counter() - t0) / 60
    everything = {"profile": profile, "version": suite.version, "protocol": suite.protocol,
                  "scores": list(scores.rows.values()), "aggregate": agg, "time_to_strength": strength_rows,
                  "crossplay": cross,
                  "page": page_facts(only, page_learners, seeds, suite_path, not train or bool(stage), command,
                                     minutes, plots, report)}
    if compare is not None:
        everything["compare"] = compared_profile(Path(compare), suite_path)
    if stage is not None:  # a sitting that trains adds its line; --report-only writes the page again without one
        sitting = [{"game": stage, "date": datetime.date.today().isoformat(),
                    "wall_seconds": round(time.perf_counter() - t0, 1), "cpu_seconds": round(cpu_seconds() - cpu0, 1),
                    "workers": workers, "ray": address is not None, "hardware": hardware_line(),
                    "runs": len(trained_now), "learners": list(trained.runs)}]  # the runs this sitting trained
        everything["stages"] = previous.get("stages", []) + (sitting if train else [])
    published = portable_json(everything, out, indent=1)  # specs relative to --out
    (folder / f"{profile}.json").write_text(published)
    report.write_text(page_from_data(json.loads(published)))  # the page is its JSON rendered
    echo(f"wrote {report} and {folder}/")
    return everything


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and of its children that have ended (the workers, once
    their pool is shut down; Ray's tasks run elsewhere and are not counted)."""
    import resource

    return sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                 resource.getrusage(resource.RUSAGE_CHILDREN)))


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
    ap.add_argument("--stage", metavar="GAME",
                    help="train one game of the profile, keep its scores beside --report (to commit) and write the "
                         "page over every game finished so far: a long profile run one sitting at a time")
    ap.add_argument("--compare", metavar="JSON",
                    help="another profile's published JSON of this suite (the quick profile's, beside its page), "
                         "whose final scores the page sets beside these")
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
                      workers=args.workers, imports=args.imports, address=args.address, stage=args.stage,
                      compare=args.compare and Path(args.compare))
    except ValueError as e:
        print(f"domino benchmark: {e}", file=sys.stderr)
        return 2
    return 0
