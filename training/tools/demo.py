"""`make demo`: train an agent on the Draw Game with the demo budget, then evaluate it.

Trains configs/draw.yaml's run (its learner, ppo_bc: our PPO after imitating the heuristic,
training/learners/ppo.py) on `draw_v0` with its `demo` overrides (a budget of a few minutes on 2
cores), in runs/demo (started afresh each time, so the demo is the same every run for a given
seed), then prints the evaluation harness's
table: the trained policy against random, greedy and the Draw heuristic on the same duplicate
deals with seats swapped, win rates and rewards with 95% intervals.
"""
from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

from domino_training.learners.train import load, train

RUN_DIR = Path("runs/demo")


def main(argv: list[str] | None = None) -> int:
    t0 = time.perf_counter()
    run = load(game="draw_v0", demo=True, overrides=list(argv or []))
    if RUN_DIR.exists():
        shutil.rmtree(RUN_DIR)
    print(f"training {run.game} with {run.learner} for {run.run.budget.env_steps:,} env steps "
          f"(configs/draw.yaml, demo budget) in {RUN_DIR}/ ...", flush=True)
    report = train(run, RUN_DIR, progress=sys.stderr.isatty())
    print()
    print(report.table())
    curve = RUN_DIR / "curve.png"  # drawn only when the run evaluated along the way (eval.every_updates > 0)
    print(f"\n{time.perf_counter() - t0:.0f} s in all. The policy: {RUN_DIR / 'policy.npz'} "
          f"(agent spec mlp:checkpoint={RUN_DIR / 'policy.npz'})"
          + (f"; learning curve: {curve}" if curve.is_file() else "") + ". Longer runs: domino train draw_v0.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
