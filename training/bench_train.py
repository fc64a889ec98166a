"""Training speed benchmark (issue 14, criterion 1): env steps/s end to end and collection only.

    python -m training.bench_train --game draw_v0 --sb3-steps 16384

Not a test: timings depend on the machine and on what else runs on it.

SB3 section (`sb3_steps_per_second`): MaskablePPO on SingleSeatEnv exactly as ``train_sb3`` builds
it (the game's config file, its ``sb3`` settings and opponent pool, ``network.hidden``, torch
threads ``ppo.torch_threads``), after one untimed warm-up rollout (numba compiles, first calls).
- *End to end*: wall time of ``model.learn`` over `steps` timesteps (collection + updates).
- *Collection only*: the part of that same run spent inside ``collect_rollouts`` (from SB3's
  rollout-start to rollout-end callbacks: policy forward, env steps with the opponents' moves,
  GAE over the buffer), so both numbers come from one run.
- Wall and CPU time: on a shared machine the rate per CPU second (``time.process_time``) shows
  what the process would reach on its own cores (torch runs ``ppo.torch_threads`` threads; with
  more than one, CPU time exceeds wall time and the per-CPU-second rate understates).
- Two counts: *timesteps* are SB3's (the learner's decisions only, one per ``env.step``);
  *decisions* add the opponents' moves made inside those steps, which is what our vector env
  counts as env steps (every seat's decisions). Compare ours against ``decisions_per_s``.
"""
from __future__ import annotations

import argparse
import time

from training.configs import load_run


def sb3_steps_per_second(game: str = "draw_v0", steps: int = 16_384, hidden: list[int] | None = None,
                         overrides: list[str] | tuple = (), seed: int = 0) -> dict:
    """Time MaskablePPO learning `steps` timesteps on `game` (see module doc). hidden: the network's
    widths (default: the config's ``network.hidden``); overrides: more ``key=value`` training keys.
    Returns the rates and what they were measured with."""
    from stable_baselines3.common.callbacks import BaseCallback

    from domino_envs.rng import mix_seed
    from training.sb3 import LearnerCopy, make_envs, new_model, seeded_globals

    extra = [f"network.hidden={list(hidden)}"] if hidden is not None else []
    run = load_run(game=game, overrides=[*extra, *overrides, f"seed={seed}"])
    s = run.train.sb3
    rollout = s.n_steps * s.n_envs
    learner = LearnerCopy()
    venv = make_envs(run, learner)
    counts = {"opponent_moves": 0}
    for env in venv.envs:  # count the opponents' moves (Monitor -> SingleSeatEnv -> opponents)
        for opp in env.unwrapped.opponents:
            opp.act = _counted(opp.act, counts)

    class Timer(BaseCallback):
        collect = 0.0

        def _on_rollout_start(self) -> None:
            self.t0 = time.perf_counter()
            learner.refresh(self.model.policy, self.num_timesteps)  # the refresh cost, as in training

        def _on_rollout_end(self) -> None:
            self.collect += time.perf_counter() - self.t0

        def _on_step(self) -> bool:
            return True

    with seeded_globals(mix_seed(seed, 0), run.train.ppo.torch_threads):
        model = new_model(run, venv)
        learner.refresh(model.policy, 0)
        model.learn(total_timesteps=rollout, progress_bar=False)  # warm-up, untimed
        t0_steps, t0_moves = model.num_timesteps, counts["opponent_moves"]
        timer = Timer()
        t0, c0 = time.perf_counter(), time.process_time()
        model.learn(total_timesteps=steps, reset_num_timesteps=False, callback=timer, progress_bar=False)
        seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    timesteps = model.num_timesteps - t0_steps
    decisions = timesteps + counts["opponent_moves"] - t0_moves
    venv.close()
    return {"algo": "sb3 MaskablePPO", "game": game, "hidden": list(run.train.network.hidden),
            "n_envs": s.n_envs, "n_steps": s.n_steps, "batch_size": s.batch_size, "n_epochs": s.n_epochs,
            "torch_threads": run.train.ppo.torch_threads, "timesteps": timesteps, "decisions": decisions,
            "seconds": seconds, "cpu_seconds": cpu_seconds, "collect_seconds": timer.collect,
            "steps_per_s": timesteps / seconds, "collect_steps_per_s": timesteps / timer.collect,
            "decisions_per_s": decisions / seconds, "collect_decisions_per_s": decisions / timer.collect,
            "steps_per_cpu_s": timesteps / cpu_seconds, "decisions_per_cpu_s": decisions / cpu_seconds}


def _counted(act, counts: dict):
    def counted(observation, action_mask):
        counts["opponent_moves"] += 1
        return act(observation, action_mask)
    return counted


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="draw_v0")
    p.add_argument("--sb3-steps", type=int, default=16_384, help="timed MaskablePPO timesteps")
    p.add_argument("--hidden", type=int, nargs="+", default=None, help="network widths (default: the config's)")
    args = p.parse_args(argv)
    result = sb3_steps_per_second(args.game, args.sb3_steps, args.hidden)
    print(f"{result['algo']} on {result['game']} (hidden {result['hidden']}, {result['n_envs']} envs x "
          f"{result['n_steps']} steps, {result['n_epochs']} epochs, batch {result['batch_size']}, "
          f"{result['torch_threads']} torch thread(s)): {result['timesteps']} timesteps in {result['seconds']:.1f} s")
    print(f"  end to end:      {result['steps_per_s']:8.0f} timesteps/s  {result['decisions_per_s']:8.0f} decisions/s")
    print(f"  collection only: {result['collect_steps_per_s']:8.0f} timesteps/s  "
          f"{result['collect_decisions_per_s']:8.0f} decisions/s")
    print(f"  per CPU second:  {result['steps_per_cpu_s']:8.0f} timesteps/s  {result['decisions_per_cpu_s']:8.0f} "
          f"decisions/s  (end to end; {result['cpu_seconds']:.1f} CPU s, for a shared machine)")
    return result


if __name__ == "__main__":
    main()
