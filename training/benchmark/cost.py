"""What a benchmark profile costs: core-hours per run from the runs' own clocks, and the wall clock of the whole
profile on N cores or a Ray cluster projected from the stages measured so far (docs/scaling.md's section on the
full profile, from docs/benchmark_full/full.json and docs/benchmark/quick.json).

A run trains and is evaluated in one process on one core (one torch thread), so its CPU seconds (recorded by each
sitting since the full profile's stages) are its core-seconds; a run without them (the quick profile's) counts its
clocks, training (numba's compiling left out) plus evaluations, which overstate its core's share when other work
shared the cores. A run of the full profile not yet
measured is projected from the quick profile's measured run of the same learner and game, times that learner's
full-to-quick ratio on the games measured in both (all learners' pooled ratio where a learner has none yet). A
stage's cross-play is projected from the measured cost per hand played. The wall clock on N cores is a
longest-first schedule of the runs on N workers (what `--workers N` or N Ray tasks do: each run is one job),
stage after stage or the whole profile at once.
"""
from __future__ import annotations

import heapq
from pathlib import Path

from domino_envs.registry import make_game
from domino_training.benchmark.runner import ScoreFile
from domino_training.benchmark.suite import Suite, load_suite

CORES = (2, 8, 16, 32, 64)


def run_seconds(suite: Suite, scores: ScoreFile) -> dict[tuple[str, str, int], dict[str, float]]:
    """(game, learner, seed) -> training and evaluation seconds by the run's clocks (wall seconds in its
    process: more than its core's share where other work shared the cores), and its CPU seconds where every
    sitting recorded them (`session_cpu_seconds`, runner.train_and_score), for every run of `suite` with its
    final policy evaluated."""
    out = {}
    for g, lr, seed in suite.run_list():
        rows = scores.of(game=g, learner=lr, seed=seed)
        if any(r["final"] for r in rows):
            cpu = [r["session_cpu_seconds"] for r in rows if "session_cpu_seconds" in r]
            out[(g, lr, seed)] = {"train": max(r["seconds"] for r in rows),
                                  "evaluate": sum(r.get("eval_seconds", 0.0) for r in rows),
                                  "cpu": sum(cpu) if cpu else None}
    return out


def core_seconds(sec: dict[str, float]) -> float:
    """A run's cost: its CPU seconds where recorded, else its clocks (training and evaluation)."""
    return sec["cpu"] if sec.get("cpu") is not None else sec["train"] + sec["evaluate"]


def run_costs(suite: Suite, scores: ScoreFile) -> dict[str, dict[str, dict]]:
    """learner -> game -> runs finished and their training and evaluation seconds (core-seconds) summed."""
    out: dict = {}
    for (g, lr, _seed), sec in run_seconds(suite, scores).items():
        cell = out.setdefault(lr, {}).setdefault(g, {"runs": 0, "train": 0.0, "evaluate": 0.0, "cpu": 0.0})
        cell["runs"] += 1
        cell["train"] += sec["train"]
        cell["evaluate"] += sec["evaluate"]
        cell["cpu"] = None if cell["cpu"] is None or sec["cpu"] is None else cell["cpu"] + sec["cpu"]
    return out


def schedule(jobs: list[float], workers: int) -> float:
    """Wall seconds of `jobs` (seconds each) on `workers`, longest first, each to the worker free soonest."""
    free = [0.0] * min(workers, max(1, len(jobs)))
    for job in sorted(jobs, reverse=True):
        heapq.heappush(free, heapq.heappop(free) + job)
    return max(free) if jobs else 0.0


def _suite_of(data: dict) -> Suite:
    facts = data["page"]
    return load_suite(data["profile"], facts["suite"] and Path(facts["suite"]), facts["only"], facts["learners"],
                      facts["seeds"])


def crossplay_hands(suite: Suite, game: str) -> int:
    """Hands the round robin of `game` plays: the ladder and every final policy (ratings.rate's units)."""
    g = suite.games[game]
    env = make_game(g.env, **g.config)
    k = len(suite.ladder) + sum(seeds for seeds, games in suite.runs.values() if game in games)
    two_sided = env.num_players == 2 or bool(getattr(env.config, "teams", False))
    return (k * (k - 1) // 2 if two_sided else 1) * suite.crossplay_deals * env.num_players


def projection(full: dict, quick: dict) -> dict:
    """The whole full profile's runs, each measured or projected (module doc), its cross-play per game, and the
    wall clock on CORES workers stage by stage and at once."""
    profile = load_suite(full["profile"])  # the whole profile, not the part the page shows
    measured = run_seconds(profile, ScoreFile.of_rows(full["scores"]))
    quick_suite = _suite_of(quick)
    quick_costs = run_costs(quick_suite, ScoreFile.of_rows(quick["scores"]))

    def quick_run(lr: str, g: str) -> float | None:
        c = quick_costs.get(lr, {}).get(g)
        return None if c is None else core_seconds(c) / c["runs"]

    pairs: dict[str, list[float]] = {}
    for (g, lr, _s), sec in measured.items():
        q = quick_run(lr, g)
        if q:
            pairs.setdefault(lr, [0.0, 0.0])
            pairs[lr][0] += core_seconds(sec)
            pairs[lr][1] += q
    pooled = sum(a for a, _ in pairs.values()) / max(sum(b for _, b in pairs.values()), 1e-9) if pairs else None
    ratio = {lr: a / b for lr, (a, b) in pairs.items()}
    runs = []
    for g, lr, seed in profile.run_list():
        if (g, lr, seed) in measured:
            sec = measured[(g, lr, seed)]
            runs.append({"game": g, "learner": lr, "seed": seed, "seconds": core_seconds(sec), "measured": True})
        else:
            q, r = quick_run(lr, g), ratio.get(lr, pooled)
            runs.append({"game": g, "learner": lr, "seed": seed, "measured": False,
                         "seconds": None if q is None or r is None else q * r})
    per_hand = [e["seconds"] * e.get("workers", 1) / e["ratings"]["hands"]
                for e in full["crossplay"].values() if "seconds" in e]
    hand_cost = sum(per_hand) / len(per_hand) if per_hand else None
    cross = {}
    for g in profile.games:
        e = full["crossplay"].get(g)
        if e is not None and "seconds" in e:
            cross[g] = {"seconds": e["seconds"] * e.get("workers", 1), "measured": True}
        elif hand_cost is not None and any(g in gs for _, gs in profile.runs.values()):
            cross[g] = {"seconds": hand_cost * crossplay_hands(profile, g), "measured": False}
    known = all(r["seconds"] is not None for r in runs) and set(cross) >= {r["game"] for r in runs}
    walls = {}
    if known:
        for n in CORES:
            by_stage = sum(schedule([r["seconds"] for r in runs if r["game"] == g], n) + cross[g]["seconds"] / n
                           for g in cross)
            at_once = schedule([r["seconds"] for r in runs], n) + sum(c["seconds"] for c in cross.values()) / n
            walls[n] = {"stages": by_stage, "at_once": at_once}
    return {"runs": runs, "crossplay": cross, "ratio": ratio, "pooled": pooled, "walls": walls,
            "quick_budget": quick_suite.budget, "budget": profile.budget}


def section(data: dict) -> str:
    """docs/scaling.md's section on the full benchmark profile, from full.json and quick.json."""
    full, quick = data["benchmark_full/full.json"], data["benchmark/quick.json"]
    p = projection(full, quick)
    runs = p["runs"]
    done = [r for r in runs if r["measured"]]
    stages = full.get("stages", [])
    lines = [f"The full profile (docs/benchmark_full.md) is {len(runs)} runs of {p['budget']:,} env steps, one game a "
             f"stage. Measured so far: {len(done)} runs in {len(stages)} stage sitting(s) "
             f"({', '.join(sorted({s['game'] for s in stages})) or 'none'}); every other run is projected from the "
             f"quick profile's run of the same learner and game ({p['quick_budget']:,} env steps) times the learner's "
             "measured full-to-quick ratio (training/benchmark/cost.py).", ""]
    if stages:
        lines += ["| stage sitting | runs it trained | workers | wall clock (h) | CPU (core-h) | cores busy (CPU / wall) | "
                  "the stage's runs' own CPU (core-h) | longest-first schedule of them on its workers (h) |",
                  "|---|---|---|---|---|---|---|---|"]
        for st in stages:
            own = [r["seconds"] for r in done if r["game"] == st["game"]]
            cross = p["crossplay"].get(st["game"], {}).get("seconds", 0.0)
            model = schedule(own, st["workers"]) + cross / st["workers"]
            lines.append(f"| {st['game']} ({st['date']}) | {st['runs']} | {st['workers']} | {st['wall_seconds'] / 3600:.2f} | "
                         f"{st['cpu_seconds'] / 3600:.2f} | {st['cpu_seconds'] / st['wall_seconds']:.2f} | "
                         f"{(sum(own) + cross) / 3600:.2f} | {model / 3600:.2f} |")
        lines += ["", "A stage's wall clock is its workers' schedule when nothing else runs; fewer busy cores than workers "
                  "means other work shared the machine, and the schedule column is what the same runs take without it. "
                  "A sitting stopped before its end (a session's time up) writes no line: the runs it finished count "
                  "in their stage's own-CPU and schedule columns, from each run's own clocks, but in no sitting's "
                  "wall clock."]
        lines += [""]
    lines += ["| learner | runs | measured | full / quick core-seconds a run | core-hours (measured + projected) |",
              "|---|---|---|---|---|"]
    for lr in dict.fromkeys(r["learner"] for r in runs):
        mine = [r for r in runs if r["learner"] == lr]
        total = sum(r["seconds"] for r in mine if r["seconds"] is not None)
        ratio = p["ratio"].get(lr)
        said = f"{ratio:.1f}" if ratio is not None else (f"{p['pooled']:.1f} (pooled)" if p["pooled"] else "-")
        lines.append(f"| {lr} | {len(mine)} | {sum(r['measured'] for r in mine)} | {said} | {total / 3600:.1f} |")
    cross_total = sum(c["seconds"] for c in p["crossplay"].values())
    lines.append(f"| cross-play | {len(p['crossplay'])} games | {sum(c['measured'] for c in p['crossplay'].values())} | "
                 f"- | {cross_total / 3600:.1f} |")
    if p["walls"]:
        total = sum(r["seconds"] for r in runs) + cross_total
        lines += ["", f"The whole profile: {total / 3600:.0f} core-hours. Wall clock on N cores (one machine with "
                  "`--workers N`, or a Ray cluster of N cores with `--address`: one run is one job either way):", "",
                  "| cores | one stage after another (h) | the whole profile in one command (h) |", "|---|---|---|"]
        for n, w in p["walls"].items():
            lines.append(f"| {n} | {w['stages'] / 3600:.1f} | {w['at_once'] / 3600:.1f} |")
        longest = max(r["seconds"] for r in runs)
        lines += ["", f"No schedule is shorter than the longest run, {longest / 60:.0f} minutes. The projection leaves "
                  "out each worker's start-up (seconds) and, on a cluster, moving files (every node needs the runs "
                  "folder at the same path); it is read again from the data as each stage lands."]
    else:
        lines += ["", "No projection yet: some learner or game has no measured run to project from."]
    return "\n".join(lines) + "\n"

