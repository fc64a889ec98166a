"""The measured speed-ups of docs/scaling.md: `python -m domino_training.scripts.scaling`, writes docs/scaling.json
and the page's generated section.

    python -m domino_training.scripts.scaling --deals 1300 --runs 3     # on an idle machine

Times whole `domino evaluate` commands from outside (a fresh process each, wall clock): the work with
one process, with `--workers 2`, and as two independent half-size evaluations side by side (the
machine's own two-process ceiling), in turns (1, 2, pair, 1, 2, pair, ...) so that drift in the
machine's speed touches every arm alike. The page's table and ratios are computed from the runs kept
in the JSON by `section`.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from datetime import date

from domino_training.benchmark.report import hardware_line
from domino_training.scripts import DOCS

PROG = "python -m domino_training.scripts.scaling"
GAME, AGENTS = "magic7_v0", ["heuristic", "pimc:n=64,rollout=random"]


def evaluate_argv(deals: int, workers: int, seed: int = 0) -> list[str]:
    return ["domino", "evaluate", "--game", GAME, "--agents", *AGENTS, "--pairs", "@".join(AGENTS),
            "--deals", str(deals), "--seed", str(seed), "--no-progress", "--workers", str(workers)]


def _timed(commands: list[list[str]]) -> float:
    """Wall seconds until every command, started together, has exited (each must succeed)."""
    t0 = time.perf_counter()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL) for c in commands]
    codes = [p.wait() for p in procs]
    if any(codes):
        raise SystemExit(f"{PROG}: a timed command failed ({codes}): {commands}")
    return time.perf_counter() - t0


def measure(deals: int, runs: int) -> dict:
    arms = {"one process": [evaluate_argv(deals, 1)], "two workers": [evaluate_argv(deals, 2)],
            "two half evaluations side by side": [evaluate_argv(deals // 2, 1, 0), evaluate_argv(deals // 2, 1, 1)]}
    seconds: dict[str, list[float]] = {a: [] for a in arms}
    for _ in range(runs):
        for arm, commands in arms.items():
            seconds[arm].append(round(_timed(commands), 1))
    return {"game": GAME, "agents": AGENTS, "deals": deals, "date": date.today().isoformat(),
            "hardware": hardware_line(), "commands": {a: [" ".join(c) for c in cs] for a, cs in arms.items()},
            "seconds": seconds}


def section(data: dict) -> str:
    """The page's "Measured speed-ups" section from docs/scaling.json."""
    m = data["measurement"]
    med = {arm: statistics.median(s) for arm, s in m["seconds"].items()}
    one = med["one process"]
    lines = [f"On this project's 2-core development machine ({m['date']}; {m['hardware']}), whole commands timed from "
             f"outside, medians of runs taken in turn (one process, two workers, the pair side by side, and again), "
             f"nothing else running. The work: {m['game']}, `{m['agents'][0]}` against a table of `{m['agents'][1]}`, "
             f"{m['deals']:,} duplicate deals. {m['source']}", "",
             "| command | wall seconds (median) | against one process |", "|---|---|---|"]
    for arm, runs in m["seconds"].items():
        lines.append(f"| {arm}: `{'` and `'.join(m['commands'][arm])}` | {med[arm]:.1f} ({len(runs)} runs: "
                     f"{min(runs):.1f}-{max(runs):.1f}) | {one / med[arm]:.2f}x |")
    pair = med["two workers"] / med["two half evaluations side by side"]
    lines += ["", f"Two workers take {pair:.3f} of the side-by-side pair's time (ratio of the medians), so the sharding "
              "costs next to nothing beyond the second process's start-up: the report, identical to the serial one, "
              "comes at the machine's own ceiling. With more cores the shards (about four per worker) spread the same "
              "way; no larger machine has been measured yet, nor a Ray cluster beyond one machine's local head node, "
              f"nor a GPU. Measure again, from a checkout: `{PROG} --deals {m['deals']} --runs 3`."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=1300, help="duplicate deals of the one-process run (default 1300)")
    ap.add_argument("--runs", type=int, default=3, help="turns of the three arms (default 3)")
    args = ap.parse_args(argv)
    if args.deals < 2 or args.runs < 1:
        ap.error(f"--deals {args.deals} must be >= 2 and --runs {args.runs} >= 1")
    out_json = DOCS / "scaling.json"
    data = json.loads(out_json.read_text())
    data["measurement"] = {**measure(args.deals, args.runs), "source": "Measured by this section's command."}
    out_json.write_text(json.dumps(data, indent=1) + "\n")
    from domino_training.scripts.pages import write_page

    write_page("scaling.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
