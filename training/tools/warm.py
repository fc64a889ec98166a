"""`domino warm`: compile each game's numba kernels ahead of use, so no later command waits on them.

numba compiles a kernel on its first call and caches the machine code on disk (keyed on the
package's sources: domino_envs/_numba_cache.py), so the first run after an install or upgrade pays
seconds to minutes a game and later runs load in about a second. Warming runs a tiny workload per
game through every compiled path the commands use: the PettingZoo env, the vector env, the
heuristic, and the search (with random and with policy rollouts), then reports the seconds and how
many functions were compiled (0: the cache was already warm). Useful before timing anything, on
each node of a cluster, or in a container image build.
"""
from __future__ import annotations

import argparse
import sys
import time

from domino_training.commands import HelpFormatter

EXAMPLES = """examples:
  domino warm                      # every game
  domino warm draw_v0 magic7_v0    # two games
"""


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="domino warm", description="Compile the games' numba kernels now, once per install or upgrade, "
        "so later commands start at once; prints each game's seconds and compiled-function count.",
        epilog=EXAMPLES, formatter_class=HelpFormatter)
    ap.add_argument("games", nargs="*", metavar="GAME", help="games to compile (default: every registered game)")
    return ap


class _Count:
    """Counts numba compilations (cache misses) while installed."""

    def __init__(self):
        from numba.core import event

        count = self

        class _Listener(event.Listener):
            def on_start(self, ev):
                count.n += 1

            def on_end(self, ev):
                pass

        self.n = 0
        self._listener = _Listener()

    def __enter__(self):
        from numba.core import event

        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc):
        from numba.core import event

        event.unregister("numba:compile", self._listener)


def warm_game(game_name: str) -> tuple[float, int]:
    """Run every compiled path for one game on a tiny workload; (seconds, functions compiled)."""
    import numpy as np

    import domino_envs
    from domino_training.evaluate import evaluate

    start = time.perf_counter()
    with _Count() as count:
        env = domino_envs.make(game_name)
        env.reset(seed=0)
        rng = np.random.default_rng(0)
        for _ in env.agent_iter(max_iter=50):
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        venv = domino_envs.make_vec(game_name, 2, seed=0)
        _, masks, _ = venv.reset()
        for _ in range(3):
            venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks], dtype=np.int64))
        evaluate(game_name, ["random", "greedy", "heuristic", "trained", "pimc:n=2,rollout=random",
                             "pimc:n=2,rollout=policy,policy=trained"], deals=1, seed=0, progress=False)
        _tiny_training(game_name)
    return time.perf_counter() - start, count.n


def _tiny_training(game_name: str) -> None:
    """A few PPO updates (with the perfect-information critic, which observes every seat with its
    own compiled loop) in a throw-away folder: compiles the learners' kernels."""
    import tempfile

    from domino_training.learners.train import load, train

    run = load(game=game_name, learner="ppo", overrides=[
        "ppo.num_envs=4", "ppo.rollout_steps=4", "network.hidden=[8]", "budget.env_steps=32",
        "eval.every_updates=0", "eval.final_deals=0", "ppo.perfect_info_critic=true"])
    with tempfile.TemporaryDirectory(prefix="domino-warm-") as folder:
        train(run, folder, progress=False, echo=lambda *a, **k: None)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from domino_envs.registry import game_names

    names = args.games or game_names()
    unknown = [g for g in names if g not in game_names()]
    if unknown:
        print(f"domino warm: error: unknown game {unknown[0]!r}; games: {', '.join(game_names())}", file=sys.stderr)
        return 2
    import numba

    print(f"numba cache: {numba.config.CACHE_DIR}")
    for name in names:
        seconds, compiled = warm_game(name)
        what = f"{compiled} functions compiled" if compiled else "already compiled (cache warm)"
        print(f"{name}: {seconds:.1f} s, {what}", flush=True)
    return 0
