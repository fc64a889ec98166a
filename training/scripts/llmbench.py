"""The language-model section of docs/llm.md: `python -m domino_training.scripts.llmbench` (from a checkout),
writes docs/llm.json and the section rendered from it.

Two measurements, both without a model (the fake server of tests/agents/fake_llm_server.py and the fake
models of agents/llm.py):
- concurrency: `domino evaluate` of an ``llm:`` agent against `heuristic` on Block, the agent's endpoint a local
  fake OpenAI-compatible server (a process of its own) answering every request after `--latency` seconds
  (50 ms), timed with one deal at a time and with `--concurrency` deals at once (8), for each of `--deals`;
- the fake models' table: each fake model against `heuristic` on `--deals` duplicate deals of every game:
  win share and failed-reply rate with their 95% intervals, tokens a decision. These are fake models, a check
  of the harness, not results about any language model.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from datetime import date

import numpy as np

from domino_envs.registry import game_names
from domino_training.evaluate import evaluate
from domino_training.scripts import CHECKOUT, DOCS, pages

PROG = "python -m domino_training.scripts.llmbench"
FAKES = ("fake:heuristic", "fake:random", "fake:illegal-then-legal", "fake:garbage", "fake:truncated")


def measure_concurrency(deals: int, concurrency: int, latency: float, seed: int = 0, game: str = "block_v0",
                        repeats: int = 3) -> dict:
    """Seconds of one evaluation played one deal at a time and `concurrency` deals at once, the fake
    server (in a process of its own, off this one's GIL) answering after `latency` seconds: a warm-up run
    first (imports, kernels), then `repeats` runs of each arm in turns, their median kept (all kept in
    `*_runs`); the calls each made and the win share (the same for both arms: the results are the same)."""
    out = {"game": game, "deals": deals, "concurrency": concurrency, "latency_s": latency, "seed": seed}
    server = subprocess.Popen([sys.executable, "-m", "tests.agents.fake_llm_server", "--latency", str(latency)],
                              cwd=CHECKOUT, stdout=subprocess.PIPE, text=True)
    try:
        base_url = server.stdout.readline().strip()
        spec = f"llm:model=bench,base_url={base_url},network_retries=0"
        evaluate(game, [spec, "heuristic"], deals=1, seed=seed, progress=False, concurrency=concurrency)
        for _ in range(repeats):
            for arm, c in (("serial", 1), ("concurrent", concurrency)):
                t0 = time.perf_counter()
                report = evaluate(game, [spec, "heuristic"], deals=deals, seed=seed, progress=False, concurrency=c)
                out.setdefault(f"{arm}_runs", []).append(round(time.perf_counter() - t0, 3))
                out[f"{arm}_calls"] = report.calls
                out[f"{arm}_win"] = report.to_json()["matchups"][0]["win_rate"]["mean"]
        for arm in ("serial", "concurrent"):
            out[f"{arm}_s"] = float(np.median(out[f"{arm}_runs"]))
    finally:
        server.terminate()
        server.wait()
    return out


def fake_table(deals: int, seed: int = 0) -> list[dict]:
    rows = []
    for game in game_names():
        for fake in FAKES:
            spec = f"llm:model={fake}"
            m = evaluate(game, [spec, "heuristic"], deals=deals, seed=seed, progress=False).to_json()["matchups"][0]
            rows.append({"game": game, "model": fake, "deals": m["deals"], "win": m["win_rate"],
                         "failed": m["llm"]["illegal_reply_rate"], "fallbacks": m["llm"]["fallbacks"],
                         "tokens_per_decision": m["llm"]["tokens_per_decision"]["in"]
                         + m["llm"]["tokens_per_decision"]["out"]})
    return rows


def section(data: dict) -> str:
    """The section of docs/llm.md from docs/llm.json."""
    runs = data["concurrency"]
    c0 = runs[0]
    lines = [f"Measured {data['date']} with `{data['command']}` on {data['machine']}.", "",
             f"**Concurrency.** `domino evaluate` of an `llm:` agent against `heuristic` on {c0['game']}, its endpoint a "
             f"local fake server (a process of its own) answering each call after {c0['latency_s'] * 1000:.0f} ms, "
             f"played one deal at a time and {c0['concurrency']} deals at once (each deal's rotations are hands of "
             "their own, so that is twice as many hands at once):", "",
             f"| deals | calls | seconds, one deal at a time (median of {len(c0['serial_runs'])}) | seconds, deals at once | "
             "ratio | win share (both) |",
             "|---|---|---|---|---|---|"]
    for c in runs:
        same = c["serial_win"] == c["concurrent_win"] and c["serial_calls"] == c["concurrent_calls"]
        lines.append(f"| {c['deals']} | {c['serial_calls']} | {c['serial_s']:.2f} | {c['concurrent_s']:.2f} "
                     f"(x{c['concurrency']}) | {c['concurrent_s'] / c['serial_s']:.3f} | "
                     f"{c['serial_win']:.3f}{'' if same else ' / ' + format(c['concurrent_win'], '.3f')} |")
    lines += ["", "A hand's calls wait on each other, so the longest hand bounds the time: on about 64 decisions that "
              "bound is near a tenth of the serial time, and the ratio falls as the run grows.", "",
              f"**The fake models** (no language model: a check of the harness) against `heuristic`, "
              f"{data['fake_deals']} duplicate deals a game, seed 0. Win share and failed-reply rate (replies not ok over "
              "replies) with 95% intervals over deals; fallbacks are decisions that ended in a random move; a fake model "
              "counts a token per four characters of the prompt.", "",
              "| game | model | win share | 95% CI | failed replies | 95% CI | random fallbacks | tokens / decision |",
              "|---|---|---|---|---|---|---|---|"]
    for r in data["fakes"]:
        w, f = r["win"], r["failed"]
        lines.append(f"| {r['game']} | `{r['model']}` | {w['mean']:.3f} | [{w['lo']:.3f}, {w['hi']:.3f}] | "
                     f"{f['mean']:.3f} | [{f['lo']:.3f}, {f['hi']:.3f}] | {r['fallbacks']['random']} | "
                     f"{r['tokens_per_decision']:.0f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    p.add_argument("--deals", type=int, nargs="+", default=[10, 32], help="deals of each concurrency measurement")
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--latency", type=float, default=0.05, help="seconds the fake server waits before each answer")
    p.add_argument("--fake-deals", type=int, default=20, help="duplicate deals a game for the fake models' table")
    p.add_argument("--machine", default="the 2-core VM")
    p.add_argument("--docs", default=str(DOCS), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    data = {"date": date.today().isoformat(), "machine": args.machine,
            "command": f"{PROG} --deals {' '.join(map(str, args.deals))} --concurrency {args.concurrency} --latency {args.latency} "
                       f"--fake-deals {args.fake_deals}",
            "concurrency": [measure_concurrency(d, args.concurrency, args.latency) for d in args.deals],
            "fake_deals": args.fake_deals, "fakes": fake_table(args.fake_deals)}
    from pathlib import Path

    docs = Path(args.docs)
    (docs / "llm.json").write_text(json.dumps(data, indent=1) + "\n")
    page = next(pg for pg in pages.PAGES if pg.page == "llm.md")
    (docs / "llm.md").write_text(page.text(docs))
    print(section(data), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
