"""The benchmark learners' tuning sweep: `python -m domino_training.scripts.tuning`.

    python -m domino_training.scripts.tuning                   # resumable; writes docs/benchmark_tuning.md
    python -m domino_training.scripts.tuning --only draw       # some games (the rest resume later)
    python -m domino_training.scripts.tuning --workers 2       # 2 settings at a time, the same results.jsonl

configs/benchmark/tuning.yaml names the settings per learner (the same number for each: an equal
tuning budget), the games, the budget and the evaluation. Each (game, setting) trains once through
the learner interface (training/learners/interface.py) on top of the benchmark suite's learner params, and
each saved policy is scored (win share / fair share, 95% interval) against greedy and the heuristic
on fresh duplicate deals, not the benchmark's frozen ones. results.jsonl in the output folder holds
one line per (game, setting): a killed sweep continues where it stopped. The report lists every
setting and, per learner and game, the best one at the final mark: the sweep is single-seed, so a
difference inside the intervals is not a finding, and the report says which settings are within the
best one's interval. With ``--workers N`` the settings train and score in N processes (the suite's
learner params give each one torch thread); only the command's process appends to results.jsonl, in
the serial order.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import yaml

from domino_envs.errors import ConfigError
from domino_training.benchmark import load_suite, read_suite_file, suite_folder
from domino_training.commands import add_workers
from domino_training.parallel import check_workers, in_order, run_jobs
from domino_training.scripts import DOCS

OPPONENTS = ("greedy", "heuristic")


def read_sweep(path: Path | None = None) -> dict:
    """The sweep file, checked (ConfigError naming a bad key)."""
    path = Path(path) if path is not None else suite_folder() / "tuning.yaml"
    data = yaml.safe_load(path.read_text())
    want = {"games", "budget", "marks", "deals", "eval_seed", "seed", "learners"}
    if not isinstance(data, dict) or set(data) != want:
        got = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise ConfigError(f"{path}: a tuning sweep is a mapping of {sorted(want)}; got {got}")
    labels = [label for s in data["learners"].values() for label in (s or {})]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise ConfigError(f"{path}: settings {twice} are named under more than one learner; a setting's name is "
                          "its run folder (<out>/<game>/<name>), so each is one learner's")
    sizes = {name: len(s or {}) for name, s in data["learners"].items()}
    if len(set(sizes.values())) > 1:
        raise ConfigError(f"{path}: every learner gets the same number of settings (an equal tuning budget); "
                          f"got {sizes}")
    return data


def run_sweep(sweep: dict, out: Path, suite_path: Path | None = None, only: list[str] | None = None,
              echo=print, workers: int = 1) -> list[dict]:
    """Train and score every (game, setting) not yet in out/results.jsonl; returns all rows.

    Each (game, learner, setting) is a job (training/parallel.py): with `workers` > 1 they train and
    score in that many processes (spawned); this process alone appends to results.jsonl,
    in the serial order, so the file is the serial sweep's for every number of workers."""
    check_workers(workers)
    suite = load_suite("quick", suite_path)
    base = read_suite_file(suite_path)["learners"] or {}
    for game_name in sweep["games"]:
        if game_name not in suite.games:
            raise ConfigError(f"tuning game {game_name!r} is not a game of the suite; allowed: {list(suite.games)}")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []
    done = {(r["game"], r["label"]) for r in rows}
    budget = int(sweep["budget"])
    marks = sorted({max(1, round(budget * m)) for m in sweep["marks"]})
    jobs = []
    for game_name in sweep["games"]:
        if only and game_name not in only:
            continue
        game = suite.games[game_name]
        for learner, settings in sweep["learners"].items():
            for label, params in (settings or {}).items():
                if (game_name, label) not in done:
                    jobs.append((game_name, game.env, dict(game.config), learner, label, dict(params or {}),
                                 dict(base.get(learner) or {}), int(sweep["seed"]), budget, marks, out / game_name / label,
                                 int(sweep["deals"]), int(sweep["eval_seed"])))
    for _, (row, seconds) in in_order(run_jobs(tune_one, jobs, workers,
                                               describe=lambda i: "the tuning run {0} {3} {4}".format(*jobs[i]))):
        rows.append(row)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
        echo(f"tuning {row['game']} {row['label']}: {seconds:.0f} s", flush=True)
    return rows


def tune_one(game_name: str, env: str, config: dict, learner: str, label: str, params: dict, base: dict, seed: int,
             budget: int, marks: list[int], run_dir: Path, deals: int, eval_seed: int) -> tuple[dict, float]:
    """One (game, learner, setting) of the sweep, a job: train it (resuming) on top of the suite's
    learner params `base` and score each saved policy; returns its results.jsonl row (the driver
    writes it) and the seconds it took."""
    from domino_training.evaluate import evaluate
    from domino_training.learners import LearnerRun, train_learner

    t0 = time.perf_counter()
    run = LearnerRun(game=env, config=dict(config), seed=seed, budget=budget, marks=marks, run_dir=run_dir,
                     params={**base, **params})
    points = sorted(train_learner(learner, run), key=lambda p: p.mark)
    row = {"game": game_name, "learner": learner, "label": label, "params": params, "train_seconds": points[-1].seconds,
           "scores": {}}
    for p in points:
        rep = evaluate(env, [p.spec, *OPPONENTS], deals, eval_seed, dict(config), pairs=[(p.spec, o) for o in OPPONENTS],
                       progress=False)
        for o in OPPONENTS:
            w = rep.matchups[(p.spec, o)].win_stat
            row["scores"][f"{o}@{p.mark}"] = [w.mean / rep.fair_share, w.lo / rep.fair_share, w.hi / rep.fair_share]
    return row, time.perf_counter() - t0


def markdown(sweep: dict, rows: list[dict]) -> str:
    """The report: every setting's scores, and per (learner, game) the best at the final mark."""
    budget = int(sweep["budget"])
    marks = sorted({max(1, round(budget * m)) for m in sweep["marks"]})
    final = marks[-1]
    cell = lambda v: f"{v[0]:.3f} [{v[1]:.3f}, {v[2]:.3f}]"  # noqa: E731
    lines = ["# Benchmark learners: the tuning sweep", "",
             "Generated from a checkout by `python -m domino_training.scripts.tuning` from configs/benchmark/tuning.yaml: "
             f"{len(next(iter(sweep['learners'].values())))} settings per learner (an equal tuning budget), "
             f"each trained once (seed {sweep['seed']}) for {budget:,} env steps per game, scored (win share / fair "
             f"share, 95% interval) against greedy and the heuristic on {sweep['deals']} fresh duplicate deals "
             f"(seed {sweep['eval_seed']}, not the benchmark's frozen deals). A setting is the learner's params on top "
             "of the benchmark suite's; `{}` is the learner as the benchmark runs it.", ""]
    for game in sweep["games"]:
        mine = [r for r in rows if r["game"] == game]
        if not mine:
            continue
        lines += [f"## {game}", "", "| learner | setting | train s | "
                  + " | ".join(f"vs {o} at {m:,}" for m in marks for o in OPPONENTS) + " |",
                  "|---|---|---|" + "---|" * (len(marks) * len(OPPONENTS))]
        for r in mine:
            lines.append(f"| {r['learner']} | `{r['label']}` {json.dumps(r['params'])} | {r['train_seconds']:.0f} | "
                         + " | ".join(cell(r["scores"][f"{o}@{m}"]) for m in marks for o in OPPONENTS) + " |")
        lines.append("")
        for learner in sweep["learners"]:
            of = [r for r in mine if r["learner"] == learner]
            if not of:
                continue
            best = max(of, key=lambda r: r["scores"][f"heuristic@{final}"][0])
            lo = best["scores"][f"heuristic@{final}"][1]
            near = [r["label"] for r in of if r is not best and r["scores"][f"heuristic@{final}"][0] >= lo]
            lines.append(f"- {learner}: best against the heuristic at {final:,} steps `{best['label']}` "
                         f"({cell(best['scores'][f'heuristic@{final}'])}); inside its interval: "
                         + (", ".join(f"`{n}`" for n in near) or "none"))
        lines.append("")
    lines += ["## What the benchmark keeps", ""]
    for learner, settings in sweep["learners"].items():
        default = next((label for label, params in (settings or {}).items() if not params), None)
        held = []
        for game in sweep["games"]:
            of = [r for r in rows if r["game"] == game and r["learner"] == learner]
            if of and default is not None:
                best = max(of, key=lambda r: r["scores"][f"heuristic@{final}"][0])
                mine = next((r for r in of if r["label"] == default), None)
                held.append(mine is not None and mine["scores"][f"heuristic@{final}"][0] >= best["scores"][
                    f"heuristic@{final}"][1])
        if held and all(held):
            lines.append(f"- {learner}: its default (`{default}`) is inside the best setting's interval in every game "
                         "swept, so no setting is a finding and the benchmark runs the default.")
        elif held:
            lines.append(f"- {learner}: its default (`{default}`) falls below the best setting's interval in "
                         f"{held.count(False)} of {len(held)} games: a candidate for the suite's learner params.")
    lines.append("")
    return "\n".join(lines) + "\n"


def page(data: dict) -> str:
    """docs/benchmark_tuning.md from the JSON written beside it."""
    return markdown(data["sweep"], data["rows"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m domino_training.scripts.tuning", description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", help="the sweep file (default configs/benchmark/tuning.yaml)")
    ap.add_argument("--suite", help="the benchmark suite (default configs/benchmark/suite.yaml)")
    ap.add_argument("--out", default="runs/tuning", help="output folder (resumable)")
    ap.add_argument("--report", default=str(DOCS / "benchmark_tuning.md"), help="the Markdown report")
    ap.add_argument("--only", nargs="+", metavar="GAME", help="run only these games of the sweep")
    add_workers(ap, "train and score the settings")
    args = ap.parse_args(argv)
    try:
        sweep = read_sweep(Path(args.sweep) if args.sweep else None)
        rows = run_sweep(sweep, Path(args.out), Path(args.suite) if args.suite else None, args.only, workers=args.workers)
    except ValueError as err:  # a bad sweep or suite, a setting that failed in its worker (JobError): one line
        print(f"{ap.prog}: error: {err}", file=sys.stderr)
        return 2
    report = Path(args.report)
    data = {"sweep": sweep, "rows": rows}
    report.with_suffix(".json").write_text(json.dumps(data, indent=1) + "\n")  # the page's data (scripts/pages.py)
    report.write_text(page(data))
    print(f"wrote {report} and its .json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
