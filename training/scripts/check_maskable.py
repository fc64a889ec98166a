"""Smoke-train MaskablePPO on SingleSeatEnv for every env and flag family: nothing may crash.

Issue 13's acceptance run. Each family trains ``sb3_contrib.MaskablePPO("MlpPolicy", env,
n_steps=512, batch_size=128, seed=0)`` against random opponents for ``--steps`` steps and reports
the episodes seen and the seconds taken; any exception fails the run (exit status 1, the family
and the error printed). Not a CI test (too slow at full size); CI runs a tiny budget on two
families (tests/fronts/test_wrappers.py).

    python -m domino_training.scripts.check_maskable --steps 50000            # the acceptance run
    python -m domino_training.scripts.check_maskable --steps 3000 --only block_4p sum7_wild_4p
"""
from __future__ import annotations

import argparse
import sys
import time
import traceback

from domino_training.commands import add_seed

# family name -> (env, config): the families issue 13 names, then every env's defaults
FAMILIES: dict[str, tuple[str, dict]] = {
    "block_4p": ("block_v0", {"num_players": 4}),
    "magic7_6p": ("magic7_v0", {"num_players": 6}),
    "sum7_wild_4p": ("sum7_v0", {"zero_rule": "wild", "num_players": 4}),
    "draw_4p": ("draw_v0", {"num_players": 4}),
    "draw": ("draw_v0", {}),
    "block": ("block_v0", {}),
    "sum7": ("sum7_v0", {}),
    "seven_toed_pete": ("seven_toed_pete_v0", {}),
    "racehorse": ("racehorse_v0", {}),
    "magic7": ("magic7_v0", {}),
}


class _EpisodeCounter:
    """Counts finished episodes through MaskablePPO's callback hook."""

    def __init__(self):
        from stable_baselines3.common.callbacks import BaseCallback

        counter = self

        class Callback(BaseCallback):
            def _on_step(self) -> bool:
                counter.episodes += int(sum(self.locals.get("dones", [])))
                return True

        self.episodes = 0
        self.callback = Callback()


def train_family(name: str, steps: int, seed: int = 0) -> dict:
    """Train one family for `steps` steps; its episodes and seconds."""
    from sb3_contrib import MaskablePPO

    from domino_agents import RandomAgent
    from domino_envs.wrappers import SingleSeatEnv

    game, config = FAMILIES[name]
    env = SingleSeatEnv(game, opponents=RandomAgent, seed=seed, **config)
    model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, seed=seed, device="cpu", verbose=0)
    counter = _EpisodeCounter()
    t0 = time.perf_counter()
    model.learn(total_timesteps=steps, callback=counter.callback)
    return {"family": name, "steps": steps, "episodes": counter.episodes, "seconds": time.perf_counter() - t0}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m domino_training.scripts.check_maskable", description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=3000, help="training steps per family")
    p.add_argument("--only", nargs="+", choices=list(FAMILIES), default=list(FAMILIES), help="families to run")
    add_seed(p, "the trainings")
    args = p.parse_args(argv)
    failed = []
    for name in args.only:
        try:
            r = train_family(name, args.steps, args.seed)
            print(f"ok    {name:16s} {r['steps']:7d} steps  {r['episodes']:6d} episodes  {r['seconds']:7.1f} s",
                  flush=True)
        except Exception:  # report every family, then fail
            failed.append(name)
            print(f"FAIL  {name}\n{traceback.format_exc()}", flush=True)
    if failed:
        print(f"failed: {failed}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
