"""Regenerate docs/baselines.md: the baseline ladder measured on duplicate deals for every game.

    python -m domino_training.scripts.baselines --deals 2000 --seed 0        (writes docs/baselines.md and .json)

For each registered game (default config) it plays the four matchups the ladder needs - greedy vs
random, heuristic vs random, heuristic vs greedy, PIMC vs heuristic - through the evaluation
harness (training/evaluate.py: each deal replayed with the first agent in every seat and copies of
the second in the others), and states for each whether it *holds*: the lower end of the 95%
interval of the first agent's win rate is above its fair share (1/2 with 2 players, 1/n with n).
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from domino_envs.registry import game_names
from domino_training.commands import add_seed
from domino_training.evaluate import evaluate, report_markdown
from domino_training.scripts import DOCS

PIMC = "pimc:n=64,rollout=random"
LADDER = [("greedy", "random"), ("heuristic", "random"), ("heuristic", "greedy"), (PIMC, "heuristic")]


def run(deals: int, seed: int, games: list[str], out_md: Path, out_json: Path | None, progress: bool | None):
    blobs = {}
    for g in games:
        t0 = time.perf_counter()
        agents = ["random", "greedy", "heuristic", PIMC]
        report = evaluate(g, agents, deals, seed, pairs=LADDER, progress=progress)
        secs = time.perf_counter() - t0
        blobs[g] = {**report.to_json(), "seconds": round(secs)}
        print(report.table(), f"\n({secs:.0f} s)\n", flush=True)
    text = page(blobs)
    out_md.parent.mkdir(parents=True, exist_ok=True)
    out_md.write_text(text)
    if out_json is not None:
        out_json.write_text(json.dumps(blobs, indent=1))
    return text


def page(blobs: dict[str, dict]) -> str:
    """docs/baselines.md from docs/baselines.json: each game's evaluation report and its wall seconds."""
    (deals,), (seed,) = {b["deals"] for b in blobs.values()}, {b["seed"] for b in blobs.values()}
    rows, details = [], []
    for g, blob in blobs.items():
        fair = blob["fair_share"]
        cells = {(m["agent"], m["opponent"]): m for m in blob["matchups"]}
        for f, o in LADDER:
            w, r = cells[(f, o)]["win_rate"], cells[(f, o)]["reward"]
            holds = "yes" if w["lo"] > fair else "**no**"
            rows.append(f"| {g} | {blob['num_players']} | {f} vs {o} | {w['mean']:.3f} [{w['lo']:.3f}, {w['hi']:.3f}] | "
                        f"{fair:.3f} | {holds} | {r['mean']:+.2f} [{r['lo']:+.2f}, {r['hi']:+.2f}] |")
        details.append(report_markdown(blob) + f"\n({blob['seconds']} s on this machine)\n")
    head = [
        "# Baselines",
        "",
        f"Measured from a checkout with `python -m domino_training.scripts.baselines --deals {deals} --seed {seed}` "
        "(each matchup: that many duplicate deals, the first agent in every seat in turn, copies of the "
        "second agent in the other seats; default game configs). Win rate shares ties; intervals are "
        "95% normal intervals over deals. *Holds* = the interval's lower end is above the fair share.",
        "",
        f"PIMC here is `{PIMC}`: 64 sampled deals per decision, uniformly random rollouts.",
        "",
        "| game | players | matchup | win rate [95% CI] | fair share | holds | reward / hand [95% CI] |",
        "|---|---|---|---|---|---|---|",
    ]
    return "\n".join(head + rows) + "\n\n## Per game\n\n" + "\n".join(details)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m domino_training.scripts.baselines", description=__doc__.splitlines()[0])
    p.add_argument("--deals", type=int, default=2000)
    add_seed(p, "the training and the evaluation")
    p.add_argument("--games", nargs="+", default=game_names(), help=f"subset of {game_names()}")
    p.add_argument("--markdown", default=str(DOCS / "baselines.md"))
    p.add_argument("--json", default=str(DOCS / "baselines.json"))
    p.add_argument("--no-progress", action="store_true")
    a = p.parse_args(argv)
    bad = [g for g in a.games if g not in game_names()]
    if bad:
        raise SystemExit(f"unknown game(s) {bad}; registered games: {game_names()}")
    run(a.deals, a.seed, a.games, Path(a.markdown), Path(a.json) if a.json else None,
        False if a.no_progress else None)


if __name__ == "__main__":
    main()
