"""From scores.jsonl to the numbers the page shows: final scores per game, IQM and mean with stratified
bootstrap intervals over runs x games, probability of improvement (training/stats.py), time to strength,
and cross-play of the final policies with ratings (training/benchmark/ratings.py).
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from domino_envs.registry import make_game
from domino_training.benchmark.runner import ScoreFile
from domino_training.benchmark.suite import Suite
from domino_training.stats import improvement, interval_estimates, stratified_resamples


# ------------------------------------------------------------------------------ aggregation
def score_of(r: dict) -> float:
    return r["win"] / r["fair"]


def per_game_finals(suite: Suite, scores: ScoreFile) -> dict[str, dict[str, dict[str, list[float]]]]:
    """learner -> game -> opponent -> the final policies' scores, one per finished seed."""
    out = {}
    for lr, (seeds, gs) in suite.runs.items():
        for g in gs:
            for o in suite.ladder + [suite.search]:
                vals = [score_of(r) for r in sorted(scores.of(game=g, learner=lr, opponent=o), key=lambda r: r["seed"])
                        if r["final"] and r["seed"] < seeds]
                if vals:
                    out.setdefault(lr, {}).setdefault(g, {})[o] = vals
    return out


def score_matrix(scores: ScoreFile, learner: str, games: list[str], seeds: int, opponent: str,
                 env_steps: int) -> np.ndarray | None:
    """runs x games of normalized scores at `env_steps` (None if any is missing)."""
    m = np.full((seeds, len(games)), np.nan)
    for j, g in enumerate(games):
        for s in range(seeds):
            key = (g, learner, s, env_steps, opponent)
            if key in scores.rows:
                m[s, j] = score_of(scores.rows[key])
    return None if np.isnan(m).any() else m


def aggregate(suite: Suite, scores: ScoreFile, reps: int, seed: int = 0) -> dict:
    """IQM and mean with stratified bootstrap 95% intervals, per learner and opponent, at every
    mark (the curve, each learner on its games) and at the last mark on the games every learner
    ran; probability of improvement between learners there; performance profiles (rliable)."""
    import warnings

    from rliable import library as rly

    warnings.filterwarnings("ignore", message="random_state is deprecated", category=FutureWarning)  # arch, via rliable
    rng = np.random.default_rng(seed)
    learners = list(suite.runs)
    common = [g for g in suite.games if all(g in gs for _, gs in suite.runs.values() if gs)]  # of those with a game
    result = {"common_games": common, "opponents": {}, "curves": {}, "improvement": {}, "profiles": {}}
    last = suite.marks[-1]
    for opp in suite.ladder + [suite.search]:
        for view, games_of, marks in (("own", lambda lr: suite.runs[lr][1], suite.marks if opp != suite.search else [last]),
                                      ("common", lambda lr: common, [last])):
            table = {}
            for steps in marks:
                for lr in learners:
                    m = score_matrix(scores, lr, games_of(lr), suite.runs[lr][0], opp, steps)
                    if m is not None and m.size:
                        table.setdefault(lr, []).append({"env_steps": steps, **interval_estimates(m, reps, rng),
                                                         "runs": int(m.shape[0]), "games": games_of(lr)})
            result["curves"].setdefault(view, {})[opp] = table
            result["opponents"].setdefault(view, {})[opp] = {lr: rows[-1] for lr, rows in table.items()
                                                             if rows[-1]["env_steps"] == last}
    if common and len(learners) > 1:
        for opp in suite.ladder:
            sd = {lr: score_matrix(scores, lr, common, suite.runs[lr][0], opp, last) for lr in learners}
            full = {lr: m for lr, m in sd.items() if m is not None}
            pairs = {}
            for i, a in enumerate(learners):
                for b in learners[i + 1:]:
                    if a in full and b in full:
                        boot = improvement(stratified_resamples(full[a], reps, rng), stratified_resamples(full[b], reps, rng))
                        pairs[f"{a},{b}"] = {"p": float(improvement(full[a], full[b])),
                                             "lo": float(np.percentile(boot, 2.5)), "hi": float(np.percentile(boot, 97.5))}
            if pairs:
                result["improvement"][opp] = pairs
            if full:
                taus = np.linspace(0.0, 2.0, 41)
                dist, dist_ci = rly.create_performance_profile(full, taus, reps=min(reps, 500))
                result["profiles"][opp] = {"taus": taus.tolist(),
                                           **{lr: {"p": dist[lr].tolist(), "lo": dist_ci[lr][0].tolist(),
                                                   "hi": dist_ci[lr][1].tolist()} for lr in full}}
    return result


def time_to_strength(suite: Suite, scores: ScoreFile) -> list[dict]:
    """Per run: env steps and training minutes at the first mark where it beats greedy (interval
    above the fair share) and where it reaches the heuristic's level (mean >= fair share)."""
    out = []
    for game, learner, seed in suite.run_list():
        row = {"game": game, "learner": learner, "seed": seed}
        for key, opp, test in (("beat_greedy", "greedy", lambda r: r["win_lo"] > r["fair"]),
                               ("heuristic_level", "heuristic", lambda r: r["win"] >= r["fair"])):
            hit = next((r for r in sorted(scores.of(game=game, learner=learner, seed=seed, opponent=opp),
                                          key=lambda r: r["env_steps"]) if test(r)), None)
            row[key] = None if hit is None else {"env_steps": hit["env_steps"], "minutes": hit["seconds"] / 60}
        out.append(row)
    return out


def summarize_strength(rows: list[dict], suite: Suite) -> dict:
    """Per learner and game: the median env steps and minutes over runs that got there, and how many did."""
    out = {}
    for learner, (_seeds, games) in suite.runs.items():
        for g in games:
            rs = [r for r in rows if r["learner"] == learner and r["game"] == g]
            cell = {}
            for key in ("beat_greedy", "heuristic_level"):
                hits = [r[key] for r in rs if r[key] is not None]
                cell[key] = {"reached": len(hits), "runs": len(rs),
                             "env_steps": float(np.median([h["env_steps"] for h in hits])) if hits else None,
                             "minutes": float(np.median([h["minutes"] for h in hits])) if hits else None}
            out.setdefault(learner, {})[g] = cell
    return out


# ------------------------------------------------------------------------------ cross-play
def crossplay(suite: Suite, scores: ScoreFile, bootstrap: int, echo=print, workers: int = 1,
              address: str | None = None, imports: list[str] | None = None, previous: dict | None = None) -> dict:
    """Per game: every final policy and the ladder rated from a round robin on the frozen deals;
    in a partnership game each learner's seed-0 policy also beside unseen partners. A game whose entry
    in `previous` (the published JSON's cross-play) was played by the same agents (its `played`
    fingerprint) is kept, not played again: a stage's round robin needs the policies only on the machine
    that trained them. The round robin runs in `workers` processes (or on Ray at `address`)."""
    from domino_training.benchmark.ratings import partner_table, rate

    out = {}
    for name, game in suite.games.items():
        finals = {}
        for learner, (seeds, games) in suite.runs.items():
            if name in games:
                for s in range(seeds):
                    rows = [r for r in scores.of(game=name, learner=learner, seed=s) if r["final"]]
                    if rows:
                        finals[f"{learner}/{s}"] = rows
        if not finals:
            continue
        played = crossplay_fingerprint(suite, finals)
        kept = (previous or {}).get(name)
        if kept is not None and kept.get("played") == played:
            out[name] = kept
            echo(f"cross-play {name}: kept from the published data (the same {len(finals)} final policies)")
            continue
        finals = {label: rows[0]["spec"] for label, rows in finals.items()}
        specs = list(suite.ladder) + list(finals.values())
        t0 = time.perf_counter()
        r = rate(game.env, specs, suite.crossplay_deals, suite.deal_seed, dict(game.config), bootstrap=bootstrap,
                 workers=workers, address=address, imports=imports)
        labels = {spec: label for label, spec in finals.items()}
        entry = {"ratings": r.to_json(), "labels": labels, "played": played}
        if getattr(make_game(game.env, **game.config).config, "teams", False):
            partners = {}
            for label, spec in finals.items():
                if not label.endswith("/0"):
                    continue
                others = [s for lab, s in finals.items() if lab.split("/")[0] == label.split("/")[0] and s != spec]
                mates = [spec, "heuristic", "greedy"] + others[:1]
                partners[label] = {labels.get(m, m): v for m, v in
                                   partner_table(game.env, spec, mates, "heuristic", suite.crossplay_deals,
                                                 suite.deal_seed, dict(game.config)).items()}
            entry["partners"] = partners
        entry["seconds"], entry["workers"] = time.perf_counter() - t0, workers
        out[name] = entry
        echo(f"cross-play {name}: {len(specs)} agents, {entry['seconds']:.0f} s")
    return out


def crossplay_fingerprint(suite: Suite, finals: dict[str, list[dict]]) -> dict:
    """What a game's round robin played: the ladder, the deals, and each final policy by its label and its
    own evaluations (a policy trained again differently scores differently)."""
    return {"ladder": list(suite.ladder), "deals": suite.crossplay_deals, "deal_seed": suite.deal_seed,
            "finals": {label: sorted([r["opponent"], r.get("trained_env_steps"), r["win"]] for r in rows)
                       for label, rows in sorted(finals.items())}}


def finished_only(suite: Suite, done: dict[tuple[str, str], int]) -> Suite:
    """The suite cut to the (learner, game) runs whose seeds are all finished (`--report-only`'s page)."""
    return dataclasses.replace(suite, runs={lr: (seeds, [g for g in gs if done[(lr, g)] == seeds])
                                            for lr, (seeds, gs) in suite.runs.items()})


def finished_seeds(suite: Suite, scores: ScoreFile) -> dict[tuple[str, str], int]:
    """(learner, game) -> how many of its seeds have their final policy evaluated."""
    return {(lr, g): len({r["seed"] for r in scores.of(game=g, learner=lr) if r["final"] and r["seed"] < seeds})
            for lr, (seeds, gs) in suite.runs.items() for g in gs}
