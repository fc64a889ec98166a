"""`make demo`: a seeded tournament of the baseline agents on the Draw Game, printed as a table.

Random, greedy (heaviest tile first), the Draw heuristic and a small PIMC search (16 sampled
deals per decision) play every pairing on the same seeded duplicate deals with seats swapped,
through the evaluation harness (training/evaluate.py), which prints win rates and mean rewards
per hand with 95% intervals and the head-to-head matrix. Same seed, same table. The first run on
a fresh machine also compiles the search rollouts (cached on disk afterwards).
"""
from __future__ import annotations

import sys
import time

from training.evaluate import evaluate

DEALS = 300
SEED = 0
AGENTS = ["random", "greedy", "heuristic", "pimc:n=16"]


def main(deals: int = DEALS, seed: int = SEED) -> None:
    t0 = time.perf_counter()
    report = evaluate("draw_v0", AGENTS, deals, seed, progress=sys.stderr.isatty())
    print(report.table())
    print(f"\n{deals} deals x 2 seatings per pairing, {len(report.matchups) // 2} pairings, "
          f"{time.perf_counter() - t0:.1f} s. Regenerate the full per-game ladder with "
          f"`python -m training.baselines` (docs/baselines.md).")


if __name__ == "__main__":
    main()
