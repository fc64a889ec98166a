"""Training and evaluating the benchmark's runs: one (game, learner, seed) a run, through the learner
interface; each saved policy evaluated on the frozen deals against the ladder; scores.jsonl holds one line
per (run, mark, opponent), written by this process alone, and a rerun skips what it holds.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from domino_training.benchmark.suite import GameSpec, Suite

SCORE_OPPONENTS_LABEL = {"random": "random", "greedy": "greedy", "heuristic": "heuristic"}


# ------------------------------------------------------------------------------ scores
class ScoreFile:
    """scores.jsonl: one evaluation a line, keyed (game, learner, seed, env_steps, opponent)."""

    def __init__(self, path: Path):
        self.path = path
        self.rows: dict[tuple, dict] = {}
        if path.is_file():
            for line in path.read_text().splitlines():
                if line.strip():
                    r = json.loads(line)
                    self.rows[self.key(r)] = r

    @staticmethod
    def key(r: dict) -> tuple:
        return (r["game"], r["learner"], r["seed"], r["env_steps"], r["opponent"])

    def has(self, *key) -> bool:
        return tuple(key) in self.rows

    def add(self, r: dict) -> None:
        self.rows[self.key(r)] = r
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(r) + "\n")

    def of(self, **match) -> list[dict]:
        return [r for r in self.rows.values() if all(r[k] == v for k, v in match.items())]


def evaluate_point(suite: Suite, game: GameSpec, spec: str, opponents: list[str], deals: int) -> dict[str, dict]:
    """Win share (mean and 95% interval over deals) and mean return of `spec` against each opponent."""
    from domino_training.evaluate import evaluate

    report = evaluate(game.env, [spec, *opponents], deals, suite.deal_seed, dict(game.config),
                      pairs=[(spec, o) for o in opponents], progress=False)
    out = {}
    for o in opponents:
        m = report.matchups[(spec, o)]
        w, r = m.win_stat, m.reward_stat
        out[o] = {"win": w.mean, "win_lo": w.lo, "win_hi": w.hi, "reward": r.mean, "deals": int(m.win.size),
                  "fair": report.fair_share, "eval_seconds": m.seconds}
    return out


def run_all(suite: Suite, out: Path, echo=print) -> ScoreFile:
    """Train every run (resuming) and evaluate every saved policy not yet in scores.jsonl."""
    from domino_training.learners import LearnerRun, train_learner

    out.mkdir(parents=True, exist_ok=True)
    scores = ScoreFile(out / "scores.jsonl")
    for game_name, learner, seed in suite.run_list():
        game = suite.games[game_name]
        run_dir = out / "runs" / game_name / learner / f"seed{seed}"
        t0 = time.perf_counter()
        run = LearnerRun(game=game.env, config=dict(game.config), seed=seed, budget=suite.budget,
                         marks=list(suite.marks), run_dir=run_dir, params=dict(suite.params.get(learner, {})))
        points = sorted(train_learner(learner, run), key=lambda p: p.mark)
        for i, p in enumerate(points):  # keyed by the mark; the learner's own count is kept beside it
            last = i == len(points) - 1
            todo = [o for o in suite.ladder if not scores.has(game_name, learner, seed, p.mark, o)]
            evals = [(todo, suite.ladder_deals)]
            if last and not scores.has(game_name, learner, seed, p.mark, suite.search):
                evals.append(([suite.search], suite.search_deals))
            for opponents, deals in evals:
                if not opponents:
                    continue
                for o, res in evaluate_point(suite, game, p.spec, opponents, deals).items():
                    scores.add({"game": game_name, "learner": learner, "seed": seed, "env_steps": p.mark,
                                "trained_env_steps": p.env_steps, "seconds": p.seconds, "opponent": o, "spec": p.spec,
                                "final": last, **res})
        echo(f"{game_name} {learner} seed {seed}: {len(points)} policies, {time.perf_counter() - t0:.0f} s this session")
    return scores
