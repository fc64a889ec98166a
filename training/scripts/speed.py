"""The speed page: `python -m domino_training.scripts.speed`, writes docs/speed.md from docs/speed.json.

    domino bench --seconds 2 --json bench.json                    # measure the envs (an idle machine)
    python -m domino_training.scripts.speed --bench bench.json    # take that run into docs/speed.json, write the page

The envs' table is one `domino bench` run (training/tools/envspeed.py), kept whole under "envs" with
the day it ran; the ratios against the peers are computed here from its numbers, so the prose says
what the table says. The training sections hold `python -m domino_training.scripts.train_speed`'s
figures with the day and the command that gave them. Each section's source is named on the page.
"""
from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path

from domino_envs.registry import game_names
from domino_training.scripts import DOCS

PROG = "python -m domino_training.scripts.speed"
BATCHES = (1, 1024, 16384)
CONNECT_FOUR = "pettingzoo_connect_four_v3_decisions_per_s"
BLOCK_DOMINOES = "openspiel_python_block_dominoes_decisions_per_s"


def rate(x: float) -> str:
    """Decisions a second as the tables write them: 155k, 14.02M."""
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.0f}k" if x >= 1e5 else f"{x / 1e3:.1f}k"


def _span(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:.1f}x" if f"{lo:.1f}" == f"{hi:.1f}" else f"{lo:.1f}-{hi:.1f}x"


def envs_section(envs: dict) -> list[str]:
    games = [g for g in game_names() if g in envs["games"]]
    rows = envs["games"]
    c4, osd = envs["peers"][CONNECT_FOUR], envs["peers"][BLOCK_DOMINOES]
    lines = [f"Decisions per second, random legal play, observation and mask built for every decision. Measured "
             f"with `{envs['command']}` on the 2-core VM ({envs['date']}; {envs['machine']}, Python {envs['python']}):",
             "", "| game | PettingZoo API (`env()`) | " + " | ".join(f"vector b={b}" for b in BATCHES) + " |",
             "|---|---|" + "---|" * len(BATCHES)]
    for g in games:
        r = rows[g]
        lines.append(f"| {g} | {rate(r['pettingzoo_decisions_per_s'])} | "
                     + " | ".join(rate(r[f"vector_batch_{b}_decisions_per_s"]) for b in BATCHES) + " |")
    ours = [rows[g]["pettingzoo_decisions_per_s"] for g in games]
    lines += ["", f"In the same run and loop, PettingZoo's `connect_four_v3` made {rate(c4)} decisions/s (our "
              f"PettingZoo column is {_span([x / c4 for x in ours])} it) and OpenSpiel's `python_block_dominoes` "
              f"with `observation_tensor` {rate(osd)} (our `block_v0` "
              f"{rows['block_v0']['pettingzoo_decisions_per_s'] / osd:.1f}x, `draw_v0` "
              f"{rows['draw_v0']['pettingzoo_decisions_per_s'] / osd:.1f}x). {envs['note']}", ""]
    return lines


def training_section(t: dict) -> list[str]:
    ppo, sb3, one = t["ppo"], t["sb3"], t["ppo_one_thread"]
    return [
        f"`python -m domino_training.scripts.train_speed` (a maintainer script, run from a checkout) times our PPO "
        f"against MaskablePPO on `draw_v0` with 2 players, the same [256, 256] network and opponent pool on both "
        f"sides, in one process. Measured on the quiet 2-core VM ({t['date']}):", "",
        "| | end to end | collection only |", "|---|---|---|",
        f"| our PPO (vector env, 256 games x 64 steps, 4 epochs, {ppo['torch_threads']} torch threads) | "
        f"{rate(ppo['decisions_per_s'])} decisions/s ({rate(ppo['samples_per_s'])} learner samples/s) | "
        f"{rate(ppo['collect_decisions_per_s'])} decisions/s |",
        f"| MaskablePPO on SingleSeatEnv (4 envs x 512 steps, 4 epochs, batch 256, {sb3['torch_threads']} thread: its "
        f"fastest) | {rate(sb3['steps_per_s'])} timesteps/s ({rate(sb3['decisions_per_s'])} decisions/s counting the "
        f"opponents' moves) | {rate(sb3['collect_steps_per_s'])} timesteps/s ({rate(sb3['collect_decisions_per_s'])} "
        f"decisions/s) |", "",
        f"Ours is {ppo['decisions_per_s'] / sb3['decisions_per_s']:.1f}x MaskablePPO in decisions/s, "
        f"{ppo['samples_per_s'] / sb3['steps_per_s']:.1f}x in learner samples/s and "
        f"{ppo['decisions_per_s'] / sb3['steps_per_s']:.1f}x in each library's own env steps; "
        f"{ppo['collect_decisions_per_s'] / sb3['collect_decisions_per_s']:.1f}x in collection alone (decisions). "
        f"With 1 torch thread ours gives {rate(one['decisions_per_s'])} decisions/s. Every opponent in the pool "
        "decides all its rows at once: random, greedy and snapshots as array operations, the heuristic as one call of "
        "its compiled kernel (below).", ""]


def collection_section(c: dict) -> list[str]:
    before, after = c["before"], c["after"]
    others = ", ".join(f"{g} {rate(x)}" for g, x in c["after_two_threads_by_game"].items())
    return [
        f"Since {c['date']} our PPO collects on 1 torch thread whatever `ppo.torch_threads` says (the table above "
        f"collected on 2): in a Draw training from the shipped actor ({c['work']}) collection went from "
        f"{rate(before['collect_decisions_per_s'])} to {rate(after['collect_decisions_per_s'])} decisions/s and the "
        f"whole run from {rate(before['decisions_per_s'])} to {rate(after['decisions_per_s'])} decisions/s with 2 "
        f"threads for the update ({rate(after['one_thread_decisions_per_s'])} with 1); the other envs after, with 2: "
        f"{others} ([training.md](training.md#cpu-threads)).", ""]


def page(data: dict) -> str:
    """docs/speed.md from docs/speed.json."""
    return "\n".join([
        "# Speed", "",
        "How fast the envs step, how fast the learners train, and what compiling the heuristics bought. Every number "
        "here was measured on a 2-core VM whose speed changes from day to day; read the ratios between columns of one "
        f"table, not the absolute numbers. The page is generated from [speed.json](speed.json) by `{PROG}` (from a "
        "checkout).", "",
        "## The envs", "",
        "`make bench` (or `domino bench --seconds 2`, or `python -m domino_training.tools.envspeed`) measures every "
        "game in one run on one core and writes `bench_results.json` in the current folder (`--json` names another "
        "file); the peers (PettingZoo's `connect_four_v3`, OpenSpiel's `python_block_dominoes`) need the `bench` "
        f"extra. `{PROG} --bench FILE` (from a checkout) takes such a file into this page.", "",
        "```bash", "domino bench --seconds 0.5 --games draw_v0 magic7_v0", "```", "",
        *envs_section(data["envs"]),
        *data["envs_notes"],
        f"- A fresh process reaches a stepped `draw_v0` env in {data['envs']['startup_seconds']['draw_v0_warm_cache']:.2f} "
        f"s with a warm numba cache, {data['envs']['startup_seconds']['draw_v0_cold_compile']:.1f} s compiling from "
        "scratch (the same run). A game's vector loops are compiled on its first `VectorEnv` (with that game's kernels "
        "inlined) and cached.", "",
        "## Training", "",
        *training_section(data["training"]),
        *collection_section(data["collection_on_one_thread"]),
        "RLlib's throughput is on [rllib.md](rllib.md#notes); minutes to a given strength, ours against MaskablePPO, "
        "on [benchmark_timing.md](benchmark_timing.md).", "",
        "## Compiled heuristics", "",
        *data["heuristics"],
    ]) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("--bench", metavar="FILE", help="a `domino bench --json FILE` run to put on the page (all games)")
    ap.add_argument("--date", default=date.today().isoformat(), help="the day --bench ran (default today)")
    ap.add_argument("--note", default=None, help="with --bench: what the page says of the run's spread")
    ap.add_argument("--out-page", default=str(DOCS / "speed.md"), help="the page (its .json beside it)")
    args = ap.parse_args(argv)
    out_page = Path(args.out_page)
    out_json = out_page.with_suffix(".json")
    data = json.loads(out_json.read_text())
    if args.bench:
        run = json.loads(Path(args.bench).read_text())
        missing = [g for g in game_names() if g not in run["games"]] + [p for p in (CONNECT_FOUR, BLOCK_DOMINOES)
                                                                         if not run["peers"].get(p)]
        if missing:
            ap.error(f"--bench {args.bench}: lacks {missing} (run `domino bench` on every game with the `bench` extra)")
        data["envs"] = {**run, "date": args.date, "command": f"domino bench --seconds {run['seconds_per_measurement']:g}",
                        "note": args.note or data["envs"]["note"]}
        out_json.write_text(json.dumps(data, indent=1) + "\n")
    out_page.write_text(page(data))
    print(f"wrote {out_page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
