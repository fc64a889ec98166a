"""Training speed benchmark (issue 14, criterion 1): env steps/s end to end and collection only.

    python -m domino_training.scripts.train_speed --game draw_v0 --sb3-steps 16384 --ppo-updates 8
    python -m domino_training.scripts.train_speed --heuristics [GAME ...]    # compiled vs Python heuristics

Not a test: timings depend on the machine and on what else runs on it. Both sides run in one
process, one after the other, with the same game, the same network (``network.hidden``), the same
torch threads and the same opponent pool, and the ratio of ours to MaskablePPO's is printed.

Our side (`ppo_steps_per_second`): the `Trainer` of training/learners/ppo.py, one untimed warm-up update
(numba compiles), then `updates` timed updates. *End to end* is the wall time of the updates
(collection + PPO epochs); *collection only* the part spent in `Collector.collect`. *Decisions*
(env steps) count every seat's decisions stepped in the vector env; *samples* the learner's
transitions among them (opponents' moves give none), the counterpart of SB3's timesteps.

SB3 section (`sb3_steps_per_second`): MaskablePPO on SingleSeatEnv exactly as ``train_sb3_points`` builds
it (the game's config file, its ``sb3`` settings and opponent pool, ``network.hidden``, torch
threads ``sb3.torch_threads``), after one untimed warm-up rollout (numba compiles, first calls).
- *End to end*: wall time of ``model.learn`` over `steps` timesteps (collection + updates).
- *Collection only*: the part of that same run spent inside ``collect_rollouts`` (from SB3's
  rollout-start to rollout-end callbacks: policy forward, env steps with the opponents' moves,
  GAE over the buffer), so both numbers come from one run.
- Wall and CPU time: on a shared machine the rate per CPU second (``time.process_time``) shows
  what the process would reach on its own cores (torch runs ``sb3.torch_threads`` threads; with
  more than one, CPU time exceeds wall time and the per-CPU-second rate understates).
- Two counts: *timesteps* are SB3's (the learner's decisions only, one per ``env.step``);
  *decisions* add the opponents' moves made inside those steps, which is what our vector env
  counts as env steps (every seat's decisions). Compare ours against ``decisions_per_s``.

Heuristic section (``--heuristics``, issue 24): the compiled heuristics against the per-row Python
ones they replaced, in one run. The Python side is the heuristic modules of commit `LEGACY_COMMIT`,
read from git (``git show``) and loaded inside this benchmark only, played as the old
`HeuristicBatch` played them (a loop over the rows, the agent reseeded from one draw per call).
For each game, interleaved rounds (old, new, old, new, ...), each side on a fresh `Trainer` of the
game's own config file with the same seed, so both play the very same games:
- *Collection*: decisions/s of `Collector.collect` with the config's opponent pool (its heuristic
  share included), after one untimed rollout per side; and the heuristic's own cost per decision.
- *Evaluation*: hands/s of `evaluate(...)` (what ``domino evaluate`` runs) of random against a
  table of heuristics, the heuristic agent built by the agent registry.
- *Same*: whether the two sides chose the same actions (the learner buffers of every rollout and
  the evaluation's per-deal results are compared).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from domino_training.commands import add_set
from domino_training.learners.train import load_settings


def sets_for(learner: str, pairs) -> list[str]:
    """The --set pairs learner `learner` takes (one list times both): the other's own params dropped."""
    from domino_training.learners.interface import LEARNERS
    from domino_training.settings import keys

    params = {name: set(keys(LEARNERS[name].settings(), LEARNERS[name].sections)) for name in ("ppo", "sb3")}
    others = set().union(*params.values()) - params[learner]
    return [text for text in pairs if text.partition("=")[0].strip() not in others]


def sb3_steps_per_second(game: str = "draw_v0", steps: int = 16_384, hidden: list[int] | None = None,
                         overrides: list[str] | tuple = (), seed: int = 0) -> dict:
    """Time MaskablePPO learning `steps` timesteps on `game` (see module doc). hidden: the network's
    widths (default: the config's ``network.hidden``); overrides: more ``key=value`` training keys.
    Returns the rates and what they were measured with."""
    from stable_baselines3.common.callbacks import BaseCallback

    from domino_envs.rng import mix_seed
    from domino_training.learners.sb3 import LearnerCopy, make_envs, new_model, seeded_globals

    extra = [f"network.hidden={list(hidden)}"] if hidden is not None else []
    run = load_settings(game=game, learner="sb3", overrides=[*extra, *sets_for("sb3", overrides), f"seed={seed}"])
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

    with seeded_globals(mix_seed(seed, 0), run.train.sb3.torch_threads):
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
            "torch_threads": run.train.sb3.torch_threads, "timesteps": timesteps, "decisions": decisions,
            "seconds": seconds, "cpu_seconds": cpu_seconds, "collect_seconds": timer.collect,
            "steps_per_s": timesteps / seconds, "collect_steps_per_s": timesteps / timer.collect,
            "decisions_per_s": decisions / seconds, "collect_decisions_per_s": decisions / timer.collect,
            "steps_per_cpu_s": timesteps / cpu_seconds, "decisions_per_cpu_s": decisions / cpu_seconds}


def ppo_steps_per_second(game: str = "draw_v0", updates: int = 8, hidden: list[int] | None = None,
                         overrides: list[str] | tuple = (), seed: int = 0) -> dict:
    """Time our PPO's `updates` updates on `game` after one warm-up update (see module doc)."""
    import tempfile

    from domino_training.learners.ppo import Trainer

    extra = [f"network.hidden={list(hidden)}"] if hidden is not None else []
    run = load_settings(game=game, learner="ppo", overrides=[*extra, *sets_for("ppo", overrides), f"seed={seed}"])
    with tempfile.TemporaryDirectory() as tmp:
        trainer = Trainer(run, tmp)
        trainer.iterate()  # warm-up, untimed
        collect = seconds = samples = 0.0
        c0 = time.process_time()
        for _ in range(updates):
            row = trainer.iterate()
            n = trainer.steps_per_update
            seconds += n / row["steps_per_s"]
            collect += n / row["collect_steps_per_s"]
            samples += row["learner_transitions"]
        cpu_seconds = time.process_time() - c0
    decisions = updates * trainer.steps_per_update
    p = run.train.ppo
    return {"algo": "ours PPO", "game": game, "hidden": list(run.train.network.hidden), "num_envs": p.num_envs,
            "rollout_steps": p.rollout_steps, "epochs": p.epochs, "minibatch_size": p.minibatch_size,
            "torch_threads": p.torch_threads, "decisions": decisions, "samples": int(samples),
            "seconds": seconds, "cpu_seconds": cpu_seconds, "collect_seconds": collect,
            "decisions_per_s": decisions / seconds, "collect_decisions_per_s": decisions / collect,
            "samples_per_s": samples / seconds, "collect_samples_per_s": samples / collect,
            "decisions_per_cpu_s": decisions / cpu_seconds}


LEGACY_COMMIT = "7b59658"  # the last commit with the per-observation Python heuristics


def legacy_heuristic_class(game):
    """The Python heuristic class of commit LEGACY_COMMIT for `game`, loaded from git into a module
    of its own (the benchmark's "before"; nothing else imports it). ConfigError outside a git
    checkout that has the commit."""
    import subprocess
    import types

    from domino_agents.heuristics import heuristic_family
    from domino_envs.errors import ConfigError

    family = heuristic_family(game)
    path = f"agents/heuristic_{family}.py"
    from domino_training.scripts import CHECKOUT as root
    got = subprocess.run(["git", "-C", str(root), "show", f"{LEGACY_COMMIT}:{path}"], capture_output=True, text=True)
    if got.returncode != 0:
        raise ConfigError(f"the heuristic benchmark reads {path} at commit {LEGACY_COMMIT} with git in {root}: "
                          f"{got.stderr.strip()} (run it in a git checkout of the project)")
    module = types.ModuleType(f"_legacy_heuristic_{family}")
    exec(compile(got.stdout, f"{LEGACY_COMMIT}:{path}", "exec"), module.__dict__)
    return getattr(module, f"{family.capitalize()}Heuristic")


class _LegacyBatch:
    """The old HeuristicBatch: the Python agent reseeded from one draw, then called row by row."""

    name = "heuristic"

    def __init__(self, cls, game, seed: int):
        self.agent = cls(game, seed=seed)

    def act_batch(self, obs, masks, rng):
        self.agent.reset(int(rng.integers(2**62)))
        return np.array([self.agent.act(o, m) for o, m in zip(obs, masks)], dtype=np.int64)


class _Timed:
    """Wraps an opponent batch, adding up the wall and CPU seconds and the rows of its act_batch calls."""

    def __init__(self, inner):
        self.inner, self.seconds, self.cpu, self.rows = inner, 0.0, 0.0, 0

    def act_batch(self, obs, masks, rng):
        t0, c0 = time.perf_counter(), time.process_time()
        out = self.inner.act_batch(obs, masks, rng)
        self.seconds += time.perf_counter() - t0
        self.cpu += time.process_time() - c0
        self.rows += len(obs)
        return out


def heuristic_speed(game: str, rollouts: int = 1, rounds: int = 2, deals: int = 100, seed: int = 0) -> dict:
    """Collection with the config's pool and evaluation against the heuristic, Python heuristics of
    LEGACY_COMMIT ("old") vs the compiled kernels ("new"), interleaved in one run (module doc).
    Rates per wall second and per CPU second of this process (the machine may be shared)."""
    import tempfile

    import domino_agents.registry as registry
    from domino_envs.registry import make_game
    from domino_training.evaluate import evaluate
    from domino_training.learners.ppo import HEURISTIC, Trainer

    run = load_settings(game=game, learner="ppo", overrides=[f"seed={seed}"])
    legacy = legacy_heuristic_class(make_game(run.game, **run.config))
    keys = ("collect_s", "collect_cpu", "decisions", "heur_s", "heur_cpu", "heur_rows", "eval_s", "eval_cpu", "hands")
    rec = {side: dict.fromkeys(keys, 0.0) for side in ("old", "new")}
    actions, results = {}, {}
    for r in range(rounds):
        for side in ("old", "new"):
            v = rec[side]
            with tempfile.TemporaryDirectory() as tmp:
                trainer = Trainer(run, tmp)
                col = trainer.collector
                if side == "old":
                    col.baselines[HEURISTIC] = _LegacyBatch(legacy, col.game, run.train.seed)
                timed = col.baselines[HEURISTIC] = _Timed(col.baselines[HEURISTIC])
                if r == 0:
                    col.collect(trainer.model)  # warm-up, untimed: numba compiles, first calls
                timed.seconds = timed.cpu = timed.rows = 0
                bufs = []
                for _ in range(rollouts):
                    t0, c0 = time.perf_counter(), time.process_time()
                    buf = col.collect(trainer.model)
                    v["collect_s"] += time.perf_counter() - t0
                    v["collect_cpu"] += time.process_time() - c0
                    bufs.append(buf.action[:buf.size].copy())
                v["decisions"] += rollouts * trainer.steps_per_update
                v["heur_s"] += timed.seconds
                v["heur_cpu"] += timed.cpu
                v["heur_rows"] += timed.rows
                actions.setdefault(side, []).append(np.concatenate(bufs))
            saved = registry.AGENTS["heuristic"]
            if side == "old":
                registry.AGENTS["heuristic"] = lambda g: legacy
            try:
                t0, c0 = time.perf_counter(), time.process_time()
                report = evaluate(game, ["random", "heuristic"], deals, seed=seed + r, config=run.config,
                                  pairs=[("random", "heuristic")], progress=False)
                v["eval_s"] += time.perf_counter() - t0
                v["eval_cpu"] += time.process_time() - c0
            finally:
                registry.AGENTS["heuristic"] = saved
            v["hands"] += deals * report.num_players
            results.setdefault(side, []).append(report.matchups[("random", "heuristic")].win)
    out = {"game": game, "heuristic_share": run.train.opponents.heuristic, "rollouts": rollouts, "rounds": rounds,
           "deals": deals, "decisions_per_rollout": trainer.steps_per_update}
    for side, v in rec.items():
        out[side] = {"collect_decisions_per_s": v["decisions"] / v["collect_s"],
                     "collect_decisions_per_cpu_s": v["decisions"] / v["collect_cpu"],
                     "heuristic_us_per_decision": 1e6 * v["heur_s"] / max(v["heur_rows"], 1),
                     "heuristic_cpu_us_per_decision": 1e6 * v["heur_cpu"] / max(v["heur_rows"], 1),
                     "heuristic_decisions": int(v["heur_rows"]),
                     "eval_hands_per_s": v["hands"] / v["eval_s"], "eval_hands_per_cpu_s": v["hands"] / v["eval_cpu"]}
    out["same_actions"] = all(np.array_equal(a, b) for a, b in zip(actions["old"], actions["new"]))
    out["same_results"] = all(np.array_equal(a, b) for a, b in zip(results["old"], results["new"]))
    o, n = out["old"], out["new"]
    for name, key, invert in (("collect", "collect_decisions_per_s", False),
                              ("collect_cpu", "collect_decisions_per_cpu_s", False),
                              ("heuristic", "heuristic_us_per_decision", True),
                              ("heuristic_cpu", "heuristic_cpu_us_per_decision", True),
                              ("eval", "eval_hands_per_s", False), ("eval_cpu", "eval_hands_per_cpu_s", False)):
        out[f"{name}_ratio"] = o[key] / n[key] if invert else n[key] / o[key]
    return out


GAMES = ("draw_v0", "block_v0", "seven_toed_pete_v0", "racehorse_v0", "sum7_v0", "magic7_v0")


def print_heuristic_table(rows: list[dict]) -> None:
    """The --heuristics results as a Markdown table (Python -> compiled, and the ratio)."""
    print("| game | collection, decisions/s | per CPU s | heuristic, us/decision | evaluate vs heuristic, hands/s "
          "| per CPU s | same choices |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        o, n = r["old"], r["new"]
        same = "yes" if r["same_actions"] and r["same_results"] else \
            f"no (collection {r['same_actions']}, evaluation {r['same_results']})"
        print(f"| {r['game']} | {o['collect_decisions_per_s'] / 1e3:.1f}k -> {n['collect_decisions_per_s'] / 1e3:.1f}k "
              f"({r['collect_ratio']:.1f}x) | {r['collect_cpu_ratio']:.1f}x | "
              f"{o['heuristic_us_per_decision']:.1f} -> {n['heuristic_us_per_decision']:.2f} "
              f"({r['heuristic_ratio']:.0f}x) | {o['eval_hands_per_s']:.0f} -> {n['eval_hands_per_s']:.0f} "
              f"({r['eval_ratio']:.1f}x) | {r['eval_cpu_ratio']:.1f}x | {same} |", flush=True)


def _counted(act, counts: dict):
    def counted(observation, action_mask):
        counts["opponent_moves"] += 1
        return act(observation, action_mask)
    return counted


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="draw_v0")
    p.add_argument("--sb3-steps", type=int, default=16_384, help="timed MaskablePPO timesteps (0: skip)")
    p.add_argument("--ppo-updates", type=int, default=8, help="timed updates of our PPO (0: skip)")
    p.add_argument("--hidden", type=int, nargs="+", default=None, help="network widths (default: the config's)")
    add_set(p, learner_params=True)
    p.add_argument("--heuristics", nargs="*", default=None, metavar="GAME",
                   help="instead: the compiled heuristics vs the Python ones of commit "
                        f"{LEGACY_COMMIT} (collection and evaluation), for these games (default all)")
    p.add_argument("--rollouts", type=int, default=1, help="--heuristics: timed rollouts per side and round")
    p.add_argument("--rounds", type=int, default=2, help="--heuristics: interleaved rounds (old, new, ...)")
    p.add_argument("--deals", type=int, default=100, help="--heuristics: evaluation deals per side and round")
    args = p.parse_args(argv)
    out = {}
    if args.heuristics is not None:
        rows = []
        for game in args.heuristics or GAMES:
            rows.append(heuristic_speed(game, args.rollouts, args.rounds, args.deals))
            print_heuristic_table(rows[-1:])
        print()
        print_heuristic_table(rows)
        return {"heuristics": rows}
    if args.ppo_updates:
        r = out["ppo"] = ppo_steps_per_second(args.game, args.ppo_updates, args.hidden, args.set)
        print(f"{r['algo']} on {r['game']} (hidden {r['hidden']}, {r['num_envs']} envs x {r['rollout_steps']} steps, "
              f"{r['epochs']} epochs, minibatch {r['minibatch_size']}, {r['torch_threads']} torch thread(s)): "
              f"{r['decisions']} decisions in {r['seconds']:.1f} s")
        print(f"  end to end:      {r['decisions_per_s']:8.0f} decisions/s  {r['samples_per_s']:8.0f} samples/s")
        print(f"  collection only: {r['collect_decisions_per_s']:8.0f} decisions/s  "
              f"{r['collect_samples_per_s']:8.0f} samples/s")
        print(f"  per CPU second:  {r['decisions_per_cpu_s']:8.0f} decisions/s (end to end)")
    if args.sb3_steps:
        result = out["sb3"] = sb3_steps_per_second(args.game, args.sb3_steps, args.hidden, args.set)
        print(f"{result['algo']} on {result['game']} (hidden {result['hidden']}, {result['n_envs']} envs x "
              f"{result['n_steps']} steps, {result['n_epochs']} epochs, batch {result['batch_size']}, "
              f"{result['torch_threads']} torch thread(s)): {result['timesteps']} timesteps in {result['seconds']:.1f} s")
        print(f"  end to end:      {result['steps_per_s']:8.0f} timesteps/s  {result['decisions_per_s']:8.0f} decisions/s")
        print(f"  collection only: {result['collect_steps_per_s']:8.0f} timesteps/s  "
              f"{result['collect_decisions_per_s']:8.0f} decisions/s")
        print(f"  per CPU second:  {result['steps_per_cpu_s']:8.0f} timesteps/s  {result['decisions_per_cpu_s']:8.0f} "
              f"decisions/s  (end to end; {result['cpu_seconds']:.1f} CPU s, for a shared machine)")
    if "ppo" in out and "sb3" in out:
        a, b = out["ppo"], out["sb3"]
        print(f"ours / MaskablePPO, end to end: {a['decisions_per_s'] / b['decisions_per_s']:.1f}x decisions/s, "
              f"{a['samples_per_s'] / b['steps_per_s']:.1f}x learner samples/s; collection only: "
              f"{a['collect_decisions_per_s'] / b['collect_decisions_per_s']:.1f}x decisions/s")
    return out


if __name__ == "__main__":
    main()
