"""Training and evaluating the benchmark's runs: one (game, learner, seed) a run, through the learner
interface; each saved policy evaluated on the frozen deals against the ladder; scores.jsonl holds one line
per (run, mark, opponent), written by this process alone, and a rerun skips what it holds.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

from domino_training.benchmark.suite import GameSpec, Suite
from domino_training.parallel import check_address, check_workers, in_order, run_jobs
from domino_training.user_code import import_all

SCORE_OPPONENTS_LABEL = {"random": "random", "greedy": "greedy", "heuristic": "heuristic"}


# ------------------------------------------------------------------------------ scores
class ScoreFile:
    """scores.jsonl: one evaluation a line, keyed (game, learner, seed, env_steps, opponent).

    A process killed while appending can leave a last line without its newline: that partial line is
    cut off when the file is opened (its evaluation is redone), so the file never holds a truncated line."""

    def __init__(self, path: Path | None):
        self.path = path
        self.rows: dict[tuple, dict] = {}
        if path is not None and path.is_file():
            text = path.read_text(encoding="utf-8")
            if text and not text.endswith("\n"):
                text = text[:text.rfind("\n") + 1]
                path.write_text(text, encoding="utf-8")
            for line in text.splitlines():
                if line.strip():
                    r = json.loads(line)
                    self.rows[self.key(r)] = r

    @classmethod
    def of_rows(cls, rows: list[dict]) -> ScoreFile:
        """The scores of a published JSON, in memory: no file behind them, so nothing can be added."""
        scores = cls(None)
        scores.rows = {cls.key(r): r for r in rows}
        return scores

    @staticmethod
    def key(r: dict) -> tuple:
        return (r["game"], r["learner"], r["seed"], r["env_steps"], r["opponent"])

    def has(self, *key) -> bool:
        return tuple(key) in self.rows

    def add(self, r: dict) -> None:
        self.add_all([r])

    def add_all(self, rows: list[dict]) -> None:
        """Append rows in one write (a run's lines land together)."""
        if self.path is None:
            raise TypeError("these scores were read from a published JSON (ScoreFile.of_rows): there is no file to add to")
        for r in rows:
            self.rows[self.key(r)] = r
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(r) + "\n" for r in rows))

    def of(self, **match) -> list[dict]:
        return [r for r in self.rows.values() if all(r[k] == v for k, v in match.items())]


def scored(suite: Suite, have: set[tuple], game: str, learner: str, seed: int) -> bool:
    """True when `have` (scores.jsonl's keys) holds every evaluation of the run: nothing to train or play."""
    keys = {(game, learner, seed, m, o) for m in suite.marks for o in suite.ladder}
    return keys | {(game, learner, seed, suite.marks[-1], suite.search)} <= have


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


def train_and_score(suite: Suite, out: Path, game_name: str, learner: str, seed: int, have: set[tuple]
                    ) -> tuple[list[dict], int, float]:
    """One run: train it (resuming) to every mark and evaluate each saved policy against what `have`
    (the keys scores.jsonl holds) lacks. Returns the new score rows, in the order the serial benchmark
    has always written them, the policies saved and the seconds; writes no score (the driver does)."""
    from domino_training.learners import LearnerRun, train_learner

    game = suite.games[game_name]
    run_dir = Path(out) / "runs" / game_name / learner / f"seed{seed}"
    t0, cpu0 = time.perf_counter(), time.process_time()
    run = LearnerRun(game=game.env, config=dict(game.config), seed=seed, budget=suite.budget,
                     marks=list(suite.marks), run_dir=run_dir, params=dict(suite.params.get(learner, {})))
    points = sorted(train_learner(suite.learner_of(learner), run), key=lambda p: p.mark)
    rows = []
    for i, p in enumerate(points):  # keyed by the mark; the learner's own count is kept beside it
        last = i == len(points) - 1
        todo = [o for o in suite.ladder if (game_name, learner, seed, p.mark, o) not in have]
        evals = [(todo, suite.ladder_deals)]
        if last and (game_name, learner, seed, p.mark, suite.search) not in have:
            evals.append(([suite.search], suite.search_deals))
        for opponents, deals in evals:
            if not opponents:
                continue
            for o, res in evaluate_point(suite, game, p.spec, opponents, deals).items():
                rows.append({"game": game_name, "learner": learner, "seed": seed, "env_steps": p.mark,
                             "trained_env_steps": p.env_steps, "seconds": p.seconds, "opponent": o, "spec": p.spec,
                             "final": last, **res})
    if rows:  # this sitting's CPU seconds on the run (training and evaluating), once, on its last line
        rows[-1]["session_cpu_seconds"] = round(time.process_time() - cpu0, 2)
    return rows, len(points), time.perf_counter() - t0


def run_all(suite: Suite, out: Path, echo=print, workers: int = 1, imports: list[str] | None = None,
            address: str | None = None, scores_path: Path | None = None) -> ScoreFile:
    """Train every run (resuming) and evaluate every saved policy not yet in scores.jsonl (`scores_path`,
    default OUT/scores.jsonl: a stage keeps it beside its page, committed, so a profile resumes on any machine).

    With `workers` > 1 the runs train and evaluate in that many processes (spawned; one torch thread
    each; `imports`, the --import modules, registered in each), with `address` as Ray tasks on that
    cluster (training/parallel.py); this process alone appends to
    scores.jsonl, a run's lines at once and in the serial order (a finished run waits for the runs
    before it), so the file and the report are those of the serial benchmark, and a kill leaves no
    half-written line: a rerun resumes from the learners' checkpoints."""
    check_workers(workers)
    check_address(address)  # before the out folder is made
    out = Path(out).resolve()  # jobs carry it to workers that may start in another folder
    out.mkdir(parents=True, exist_ok=True)
    scores = ScoreFile(Path(scores_path) if scores_path is not None else out / "scores.jsonl")
    have = set(scores.rows)
    runs = [run for run in suite.run_list() if not scored(suite, have, *run)]  # on another machine: no checkpoint
    jobs = [(suite, out, g, lr, s, {k for k in have if k[:3] == (g, lr, s)}) for g, lr, s in runs]

    init = import_all if imports and (workers > 1 or address) else None
    results = run_jobs(train_and_score, jobs, workers, address, init, (list(imports or []),),
                       describe=lambda i: "the run {} {} seed {}".format(*runs[i]))
    for i, (rows, points, seconds) in in_order(results):  # a run's lines once every run before it is written
        scores.add_all(rows)
        g, lr, s = runs[i]
        echo(f"{g} {lr} seed {s}: {points} policies, {seconds:.0f} s this session")
    return scores
