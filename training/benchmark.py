"""`domino benchmark`: games x learners x seeds under one frozen protocol, aggregated across seeds.

    domino benchmark --profile quick                  # train, evaluate, rate, write docs/benchmark.md
    domino benchmark --profile quick --only draw      # some games (the rest resume later)
    domino benchmark --profile quick --learners rllib --out runs/benchmark/quick-rllib \
        --report docs/benchmark_rllib.md              # an optional learner (its extra), its own page
    domino benchmark --profile full --learners ppo --only draw magic7 --seeds 1 \
        --report docs/benchmark_full.md               # part of a profile: the page says what it holds
    domino benchmark --profile ci --out /tmp/b        # the seconds-long version CI runs
    domino benchmark freeze                           # after bumping `version`: record the fingerprints
    domino benchmark --import my_learner.py ...       # a learner of your own (register_learner)

The suite is configs/benchmark/suite.yaml. Its `protocol` (games, deal seed, budgets in env steps,
marks, the evaluation ladder, deal counts) and the frozen deals it names are fingerprinted in
configs/benchmark/lock.json under the suite's `version`; a protocol or a dealing engine that no longer
matches its version's fingerprint is refused (`ProtocolError`), so published numbers stay
comparable: change the protocol by bumping `version` and running `domino benchmark freeze`.

One run is (game, learner, seed). It trains through the learner interface (training/learners.py)
to the profile's budget, saving a policy at every mark, and each saved policy is evaluated on the
first N frozen deals of its game (duplicate deals, seats rotated: training/evaluate.py) against the
ladder (random, greedy, heuristic), the final one also against the search agent. Everything lands
in the output folder (runs/benchmark/<profile> by default): the learners' run folders, and
scores.jsonl with one line per (run, mark, opponent). A killed benchmark continues where it stopped:
learners resume from their checkpoints and evaluations already in scores.jsonl are not redone.

Aggregation (rliable's estimators): a run's score on a game against an opponent is its win share
divided by the fair share (1.0 = as good as a table of that opponent). Per learner and opponent: IQM
and mean over runs x games with stratified bootstrap 95% intervals; probability of improvement
between learners; performance profiles (rliable's own); IQM against env steps. The bootstrap is
vectorized here (rliable's calls its estimator once per resample, ~3 ms each) and checked against
rliable's in a test. Learners that ran fewer games (the slow ones) are
aggregated on their games, and every learner also on the games they all ran. Then cross-play: every
final policy and the ladder in a round robin on the frozen deals, rated in one pass
(training/ratings.py), and in a partnership game each policy beside partners it never trained with.
Time to strength: env steps and training minutes until a run first beats greedy (interval above the
fair share) and first reaches the heuristic's level (mean at or above the fair share).

The report is Markdown (docs/benchmark.md for the quick profile), with a JSON of every score and the
plots beside it (docs/benchmark/).
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib.resources
import json
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from domino_envs.errors import ConfigError, ProtocolError
from domino_envs.registry import make_game
from domino_envs.rng import mix_seed

PROFILES = ("ci", "quick", "full")
DOCS = Path(__file__).resolve().parents[1] / "docs"
SCORE_OPPONENTS_LABEL = {"random": "random", "greedy": "greedy", "heuristic": "heuristic"}


def suite_folder() -> Path:
    """configs/benchmark, installed as package data of domino_training.game_configs."""
    return Path(str(importlib.resources.files("domino_training.game_configs"))) / "benchmark"


# ------------------------------------------------------------------------------ the suite
@dataclass
class GameSpec:
    name: str          # the suite's name for it (e.g. "racehorse_teams")
    env: str
    config: dict


@dataclass
class Suite:
    """One profile of the suite, resolved: what to run and the frozen protocol it runs under."""

    version: int
    profile: str
    protocol: dict
    games: dict[str, GameSpec]
    budget: int
    marks: list[int]                       # env steps
    ladder: list[str]
    ladder_deals: int
    search: str
    search_deals: int
    crossplay_deals: int
    deal_seed: int
    runs: dict[str, tuple[int, list[str]]]  # learner -> (seeds, games)
    params: dict[str, dict] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)  # learner -> why it runs fewer games (shown in the report)
    left_out: list[str] = field(default_factory=list)  # optional learners of the profile not selected
    capped: dict[str, int] = field(default_factory=dict)  # learner -> the profile's seeds, where --seeds ran fewer

    def run_list(self) -> list[tuple[str, str, int]]:
        """(game, learner, seed) of every run, games in suite order."""
        out = []
        for g in self.games:
            for learner, (seeds, games) in self.runs.items():
                if g in games:
                    out += [(g, learner, s) for s in range(seeds)]
        return out


def _need(cond, where: str, got, allowed: str) -> None:
    if not cond:
        raise ConfigError(f"benchmark suite: {where}={got!r}; {allowed}")


def _per_profile(protocol: dict, key: str, profile: str) -> int:
    v = protocol.get(key)
    _need(isinstance(v, dict) and profile in v, f"protocol.{key}", v, f"a mapping with a value for each of {PROFILES}")
    n = v[profile]
    _need(isinstance(n, int) and not isinstance(n, bool) and n >= 1, f"protocol.{key}.{profile}", n, "a positive int")
    return n


def read_suite_file(path: Path | None = None) -> dict:
    path = Path(path) if path is not None else suite_folder() / "suite.yaml"
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the benchmark suite ({err.strerror})") from None
    if not isinstance(data, dict) or set(data) != {"version", "protocol", "runs", "learners"}:
        got = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise ConfigError(f"{path}: a suite is a mapping of version, protocol, runs and learners; got {got}")
    return data


def load_suite(profile: str, path: Path | None = None, only: list[str] | None = None,
               learners: list[str] | None = None, seeds: int | None = None) -> Suite:
    """The suite file's `profile`, checked (ConfigError naming a bad key or value). `only` keeps
    these games, `learners` these learners of the profile's runs; without `learners`, every learner
    the profile runs except the optional ones (rllib: an extra not every venv has), which run only
    when named. `seeds` runs at most that many seeds of each (a page of fewer seeds says so)."""
    from domino_training.learners import LEARNERS
    data = read_suite_file(path)
    _need(profile in PROFILES, "profile", profile, f"one of {list(PROFILES)}")
    version = data["version"]
    _need(isinstance(version, int) and not isinstance(version, bool) and version >= 1, "version", version,
          "a positive int")
    p = data["protocol"]
    games = {}
    for name, g in (p.get("games") or {}).items():
        _need(isinstance(g, dict) and "env" in g and set(g) <= {"env", "config"}, f"protocol.games.{name}", g,
              "a mapping with env and optional config")
        games[name] = GameSpec(name, g["env"], dict(g.get("config") or {}))
        make_game(g["env"], **games[name].config)  # the engine checks the rule keys
    _need(games, "protocol.games", p.get("games"), "at least one game")
    budget = _per_profile(p, "budget", profile)
    marks = p.get("marks")
    _need(isinstance(marks, list) and marks and all(isinstance(m, (int, float)) and 0 < m <= 1 for m in marks)
          and marks == sorted(set(marks)) and marks[-1] == 1, "protocol.marks", marks,
          "increasing fractions in (0, 1], the last 1")
    steps = sorted({max(1, round(budget * m)) for m in marks})
    runs_all = data["runs"]
    _need(isinstance(runs_all, dict) and profile in runs_all, "runs", runs_all, f"a mapping with an entry for {profile}")
    spec = runs_all[profile] or {}
    _need(set(spec) <= {"games", "learners", "params"}, f"runs.{profile}", sorted(spec), "keys games, learners, params")
    default_games = spec.get("games", list(games))
    for g in default_games:
        _need(g in games, f"runs.{profile}.games", g, f"one of the protocol's games {list(games)}")
    runs, why = {}, {}
    for learner, v in (spec.get("learners") or {}).items():
        _need(isinstance(v, int) or (isinstance(v, dict) and set(v) <= {"seeds", "games", "why"}),
              f"runs.{profile}.learners.{learner}", v, "seeds (a positive int) or {seeds: N, games: [...], why: text}")
        n, gs = (v, default_games) if isinstance(v, int) else (v.get("seeds"), v.get("games", default_games))
        _need(isinstance(n, int) and n >= 1, f"runs.{profile}.learners.{learner}", v,
              "seeds (a positive int) or {seeds: N, games: [...], why: text}")
        if isinstance(v, dict) and "why" in v:
            _need(isinstance(v["why"], str) and v["why"].strip(), f"runs.{profile}.learners.{learner}.why", v["why"],
                  "a sentence saying why the learner runs fewer games")
            why[learner] = v["why"].strip()
        for g in gs:
            _need(g in games, f"runs.{profile}.learners.{learner}.games", g, f"one of {list(games)}")
        runs[learner] = (n, [g for g in games if g in gs])
    if only:
        for g in only:
            _need(g in games, "--only", g, f"one of the protocol's games {list(games)}")
        runs = {k: (s, [g for g in gs if g in only]) for k, (s, gs) in runs.items()}
    for lr in runs:
        _need(lr in LEARNERS, f"runs.{profile}.learners", lr, f"a registered learner {sorted(LEARNERS)}")
    capped = {}
    if seeds is not None:
        _need(isinstance(seeds, int) and not isinstance(seeds, bool) and seeds >= 1, "--seeds", seeds, "a positive int")
        capped = {k: n for k, (n, _) in runs.items() if n > seeds}
        runs = {k: (min(n, seeds), gs) for k, (n, gs) in runs.items()}
    if learners:
        for lr in learners:
            _need(lr in runs, "--learners", lr, f"one of the learners profile {profile} runs {list(runs)}")
        left_out = []
        runs = {k: v for k, v in runs.items() if k in learners}
    else:
        left_out = [k for k in runs if LEARNERS[k].optional]
        runs = {k: v for k, v in runs.items() if k not in left_out}
    params = data["learners"] or {}
    _need(isinstance(params, dict), "learners", params, "a mapping learner -> settings")
    params = {k: dict(v or {}) for k, v in params.items()}
    for k, v in (spec.get("params") or {}).items():  # the profile's own settings on top (ci: tiny batches)
        params[k] = {**params.get(k, {}), **dict(v or {})}
    return Suite(version, profile, p, games, budget, steps, list(p["ladder"]), _per_profile(p, "ladder_deals", profile),
                 p["search"], _per_profile(p, "search_deals", profile), _per_profile(p, "crossplay_deals", profile),
                 int(p["deal_seed"]), runs, params, {k: w for k, w in why.items() if k in runs}, left_out,
                 {k: n for k, n in capped.items() if k in runs})


# ------------------------------------------------------------------------------ the frozen protocol
def canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def protocol_digest(protocol: dict) -> str:
    return hashlib.sha256(canonical(protocol).encode()).hexdigest()


def deals_digest(game: GameSpec, deal_seed: int, deals: int) -> str:
    """sha256 over the first `deals` deals of the game (deal d: reset with mix_seed(deal_seed, d)),
    each as `game.deal_of` reads it (hands and stock, the replay format's deal): an engine change
    that deals a different hand changes it, a change of the state row's layout does not."""
    g = make_game(game.env, **game.config)
    state = g.new_state()
    h = hashlib.sha256(f"{game.env}{canonical(game.config)}".encode())
    for d in range(deals):
        g.reset(state, mix_seed(deal_seed, d))
        h.update(canonical(g.deal_of(state)).encode())
    return h.hexdigest()


def fingerprints(data: dict) -> dict:
    """The lock entry of a suite file: its protocol's digest and each game's deals' digest (the
    largest deal count any profile uses)."""
    p = data["protocol"]
    most = max(max(p[k].values()) for k in ("ladder_deals", "search_deals", "crossplay_deals"))
    games = {name: GameSpec(name, g["env"], dict(g.get("config") or {})) for name, g in p["games"].items()}
    return {"protocol": protocol_digest(p), "deals": {n: deals_digest(g, int(p["deal_seed"]), most)
                                                      for n, g in games.items()}}


def read_lock(path: Path | None = None) -> dict:
    path = Path(path) if path is not None else suite_folder() / "lock.json"
    if not path.is_file():
        return {}
    return json.loads(path.read_text())


def check_protocol(data: dict, lock: dict) -> None:
    """ProtocolError unless the suite's protocol and deals match the fingerprints of its version."""
    v = str(data["version"])
    if v not in lock:
        raise ProtocolError(f"benchmark protocol version {v} has no fingerprint in lock.json (locked: "
                            f"{sorted(lock) or 'none'}); record it with `domino benchmark freeze`")
    want, got = lock[v], fingerprints(data)
    if want["protocol"] != got["protocol"]:
        raise ProtocolError(f"the benchmark protocol differs from version {v}'s: bump `version` in suite.yaml "
                            f"and run `domino benchmark freeze` (numbers of different protocols are not comparable)")
    for name, digest in got["deals"].items():
        if want["deals"].get(name) != digest:
            raise ProtocolError(f"game {name!r} deals differently from version {v}'s frozen deals (an engine or "
                                f"dealing change): bump `version` and run `domino benchmark freeze`")


def freeze(suite_path: Path | None = None, lock_path: Path | None = None) -> dict:
    """Record the suite's fingerprints under its version; refuses to overwrite a version already
    locked with other fingerprints (that is what bumping the version is for)."""
    data = read_suite_file(suite_path)
    lock_path = Path(lock_path) if lock_path is not None else suite_folder() / "lock.json"
    lock = read_lock(lock_path)
    v = str(data["version"])
    fp = fingerprints(data)
    if v in lock and lock[v] != fp:
        raise ProtocolError(f"version {v} is already locked with other fingerprints: bump `version` to change the "
                            f"protocol (locked versions: {sorted(lock)})")
    lock[v] = fp
    lock_path.write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n")
    return lock


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


def trimmed_means(samples: np.ndarray) -> np.ndarray:
    """IQM of each row: the mean of the middle half, cutting int(n / 4) values from each end
    (scipy's trim_mean(x, 0.25), which rliable's aggregate_iqm is)."""
    n = samples.shape[-1]
    k = int(0.25 * n)
    return np.sort(samples, axis=-1)[..., k:n - k].mean(axis=-1)


def stratified_resamples(x: np.ndarray, reps: int, rng: np.random.Generator) -> np.ndarray:
    """reps resamples of a runs x games matrix, the runs of each game drawn with replacement on
    their own (rliable's stratified bootstrap over runs, the games kept): (reps, runs, games)."""
    runs, games = x.shape
    return x[rng.integers(0, runs, size=(reps, runs, games)), np.arange(games)]


def interval_estimates(x: np.ndarray, reps: int, rng: np.random.Generator) -> dict:
    """IQM and mean of a runs x games score matrix with percentile 95% intervals of the stratified
    bootstrap. The same estimates as rliable's get_interval_estimates with aggregate_iqm and
    aggregate_mean, vectorized (rliable calls its function once per resample, about 3 ms each;
    tests/learners/test_benchmark.py checks the two agree)."""
    b = stratified_resamples(x, reps, rng).reshape(reps, -1)
    iqm, mean = trimmed_means(b), b.mean(axis=1)
    return {"iqm": float(trimmed_means(x.ravel())), "iqm_lo": float(np.percentile(iqm, 2.5)),
            "iqm_hi": float(np.percentile(iqm, 97.5)), "mean": float(x.mean()),
            "mean_lo": float(np.percentile(mean, 2.5)), "mean_hi": float(np.percentile(mean, 97.5))}


def improvement(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """P(a run of X beats a run of Y) on each game, averaged over games (ties half), for stacks of
    resamples (..., runs, games): rliable's probability_of_improvement (the Mann-Whitney U / mn)."""
    gt = (x[..., :, None, :] > y[..., None, :, :]).mean(axis=(-3, -2))
    eq = (x[..., :, None, :] == y[..., None, :, :]).mean(axis=(-3, -2))
    return (gt + 0.5 * eq).mean(axis=-1)


def aggregate(suite: Suite, scores: ScoreFile, reps: int, seed: int = 0) -> dict:
    """IQM and mean with stratified bootstrap 95% intervals, per learner and opponent, at every
    mark (the curve, each learner on its games) and at the last mark on the games every learner
    ran; probability of improvement between learners there; performance profiles (rliable)."""
    import warnings

    from rliable import library as rly

    warnings.filterwarnings("ignore", message="random_state is deprecated", category=FutureWarning)  # arch, via rliable
    rng = np.random.default_rng(seed)
    learners = list(suite.runs)
    common = [g for g in suite.games if all(g in gs for _, gs in suite.runs.values())]
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
def crossplay(suite: Suite, scores: ScoreFile, bootstrap: int, echo=print) -> dict:
    """Per game: every final policy and the ladder rated from a round robin on the frozen deals;
    in a partnership game each learner's seed-0 policy also beside unseen partners."""
    from domino_training.ratings import partner_table, rate

    out = {}
    for name, game in suite.games.items():
        finals = {}
        for learner, (seeds, games) in suite.runs.items():
            if name in games:
                for s in range(seeds):
                    rows = [r for r in scores.of(game=name, learner=learner, seed=s) if r["final"]]
                    if rows:
                        finals[f"{learner}/{s}"] = rows[0]["spec"]
        if not finals:
            continue
        specs = list(suite.ladder) + list(finals.values())
        t0 = time.perf_counter()
        r = rate(game.env, specs, suite.crossplay_deals, suite.deal_seed, dict(game.config), bootstrap=bootstrap)
        labels = {spec: label for label, spec in finals.items()}
        entry = {"ratings": r.to_json(), "labels": labels, "markdown": r.markdown(labels)}
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
        out[name] = entry
        echo(f"cross-play {name}: {len(specs)} agents, {time.perf_counter() - t0:.0f} s")
    return out


# ------------------------------------------------------------------------------ report
def _plots(suite: Suite, agg: dict, folder: Path, stem: str, scores: ScoreFile) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    curves = agg["curves"].get("own", {})
    opps = [o for o in suite.ladder if curves.get(o)]
    if opps:
        fig, axes = plt.subplots(1, len(opps), figsize=(4.6 * len(opps), 3.8), squeeze=False)
        for ax, opp in zip(axes[0], opps):
            for lr, rows in curves[opp].items():
                x = [r["env_steps"] for r in rows]
                ax.plot(x, [r["iqm"] for r in rows], marker="o", ms=3, label=lr)
                ax.fill_between(x, [r["iqm_lo"] for r in rows], [r["iqm_hi"] for r in rows], alpha=0.2)
            ax.axhline(1.0, color="grey", ls="--", lw=1)
            ax.set_title(f"vs {opp}: IQM over runs x games")
            ax.set_xlabel("env steps")
            ax.set_ylabel("win share / fair share")
            ax.grid(alpha=0.3)
        axes[0][0].legend(loc="lower right", fontsize=8)
        fig.tight_layout()
        paths.append(folder / f"{stem}_iqm.png")
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
    games = [g for g in suite.games if any(g in gs for _, gs in suite.runs.values())]
    if games and "heuristic" in suite.ladder:
        cols = min(4, len(games))
        rows_n = math.ceil(len(games) / cols)
        fig, axes = plt.subplots(rows_n, cols, figsize=(4.2 * cols, 3.4 * rows_n), squeeze=False)
        for k, g in enumerate(games):
            ax = axes[k // cols][k % cols]
            for lr, (seeds, gs) in suite.runs.items():
                if g not in gs:
                    continue
                ys = np.array([[score_of(scores.rows[(g, lr, s, m, "heuristic")])
                                if (g, lr, s, m, "heuristic") in scores.rows else np.nan for m in suite.marks]
                               for s in range(seeds)])
                mean = np.nanmean(ys, axis=0)
                ax.plot(suite.marks, mean, marker="o", ms=3, label=lr)
                ax.fill_between(suite.marks, np.nanmin(ys, axis=0), np.nanmax(ys, axis=0), alpha=0.15)
            ax.axhline(1.0, color="grey", ls="--", lw=1)
            ax.set_title(f"{g} vs heuristic")
            ax.grid(alpha=0.3)
        for k in range(len(games), rows_n * cols):
            axes[k // cols][k % cols].axis("off")
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        paths.append(folder / f"{stem}_games.png")
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
    return paths


def _cell(r: dict | None, lo="iqm_lo", mid="iqm", hi="iqm_hi") -> str:
    return "-" if not r else f"{r[mid]:.2f} [{r[lo]:.2f}, {r[hi]:.2f}]"


def finished_seeds(suite: Suite, scores: ScoreFile) -> dict[tuple[str, str], int]:
    """(learner, game) -> how many of its seeds have their final policy evaluated."""
    return {(lr, g): len({r["seed"] for r in scores.of(game=g, learner=lr) if r["final"] and r["seed"] < seeds})
            for lr, (seeds, gs) in suite.runs.items() for g in gs}


def regenerate_command(profile: str, only: list[str] | None = None, learners: list[str] | None = None,
                       seeds: int | None = None, out: Path | None = None, report: Path | None = None) -> str:
    """The `domino benchmark` line that writes a page again: the profile alone, or a part of it
    (games, learners, fewer seeds) with the folder and page it lives in."""
    command = f"domino benchmark --profile {profile}"
    subset = [f"--{flag} {' '.join(map(str, value)) if isinstance(value, list) else value}"
              for flag, value in (("only", only), ("learners", learners), ("seeds", seeds)) if value]
    if subset:
        command = " ".join([command, *subset, f"--out {out} --report {report}"])
    return command


def coverage_line(suite: Suite, done: dict[tuple[str, str], int], command: str | None = None) -> str:
    """"Complete", or "Partial" naming each (learner, game) short of its seeds."""
    short = [f"{lr} on {g} {done[(lr, g)]}/{seeds}" for lr, (seeds, gs) in suite.runs.items() for g in gs
             if done[(lr, g)] < seeds]
    if not short:
        return "**Complete:** every run of the profile has its final policy evaluated."
    return ("**Partial:** the aggregates hold the finished runs only; seeds finished of those configured: "
            + ", ".join(short) + f". `{command or regenerate_command(suite.profile)}` resumes the rest.")


def markdown(suite: Suite, agg: dict, strength: dict, cross: dict, plots: list[Path], where: Path,
             hardware: str, minutes: float, done: dict[tuple[str, str], int] | None = None,
             coverage: str | None = None, command: str | None = None, per_game: dict | None = None) -> str:
    learners = list(suite.runs)
    command = command or regenerate_command(suite.profile)
    done = done if done is not None else {(lr, g): seeds for lr, (seeds, gs) in suite.runs.items() for g in gs}
    lines = [f"# Benchmark: profile `{suite.profile}` (protocol version {suite.version})", "",
             coverage or coverage_line(suite, done), "",
             f"Regenerate: `{command}` (resumes; configs/benchmark/suite.yaml). "
             f"Budget {suite.budget:,} env steps a run (every seat's decisions), policies saved at "
             f"{', '.join(f'{m:,}' for m in suite.marks)}. Each saved policy plays the first {suite.ladder_deals} "
             f"frozen duplicate deals of its game (seats rotated) against a table of each ladder agent; the final "
             f"one also {suite.search_deals} deals against `{suite.search}`. Score: win share / fair share "
             f"(1.0 = as good as the table). Aggregates with rliable: IQM and mean over runs x games, stratified "
             f"bootstrap 95% intervals. {hardware}; {minutes:.0f} minutes in the session that wrote this page (a resumed "
             f"benchmark counts only its own session; each run's training minutes are in the JSON).", "",
             "## Runs", "", "| learner | seeds | games (seeds finished) |", "|---|---|---|"]
    for lr, (seeds, gs) in suite.runs.items():
        lines.append(f"| {lr} | {seeds} | {', '.join(f'{g} ({done[(lr, g)]})' for g in gs)} |")
    notes = [f"- `{lr}` runs on {', '.join(suite.runs[lr][1])} only: {w}" for lr, w in suite.why.items()]
    notes += [f"- `{lr}`: {suite.runs[lr][0]} of the profile's {n} seeds on this page (`--seeds`)."
              for lr, n in suite.capped.items()]
    for lr in suite.left_out:
        page = f"{where.stem}_{lr}.md"
        notes.append(f"- `{lr}` needs an optional extra and has a page of its own, [{page}]({page}) "
                     f"(`{command} --learners {lr} --out runs/benchmark/{suite.profile}-{lr} --report "
                     f"{where.parent.name}/{page}`, from a venv with the extra).")
    if notes:
        lines += [""] + notes
    for view, title in (("own", "each learner on its games"), ("common", f"on the games every learner ran: "
                                                                         f"{', '.join(agg['common_games']) or 'none'}")):
        table = agg["opponents"].get(view, {})
        if not table:
            continue
        opps = [o for o in suite.ladder + [suite.search] if o in table]
        lines += ["", f"## Final policies, {title}", "",
                  "IQM [95% CI] of the score; mean in the second table.", "",
                  "| learner | " + " | ".join(f"vs {o}" for o in opps) + " |", "|---" * (len(opps) + 1) + "|"]
        for lr in learners:
            lines.append(f"| {lr} | " + " | ".join(_cell(table[o].get(lr)) for o in opps) + " |")
        lines += ["", "| learner (mean) | " + " | ".join(f"vs {o}" for o in opps) + " |", "|---" * (len(opps) + 1) + "|"]
        for lr in learners:
            lines.append(f"| {lr} | " + " | ".join(_cell(table[o].get(lr), "mean_lo", "mean", "mean_hi") for o in opps)
                         + " |")
    if per_game:
        opps = suite.ladder + [suite.search]
        lines += ["", "## Final policies per game", "", "Mean score over seeds [lowest, highest seed].", "",
                  "| learner | game | " + " | ".join(f"vs {o}" for o in opps) + " |", "|---" * (len(opps) + 2) + "|"]
        for lr, per in per_game.items():
            for g, cells in per.items():
                lines.append(f"| {lr} | {g} | " + " | ".join(
                    f"{np.mean(cells[o]):.2f} [{min(cells[o]):.2f}, {max(cells[o]):.2f}]" if o in cells else "-"
                    for o in opps) + " |")
    if agg["improvement"]:
        lines += ["", "## Probability of improvement (final policies, common games)", "",
                  "P(a run of the first beats a run of the second on a random common game) [95% CI].", "",
                  "| pair | " + " | ".join(f"vs {o}" for o in agg["improvement"]) + " |",
                  "|---" * (len(agg["improvement"]) + 1) + "|"]
        pairs = next(iter(agg["improvement"].values())).keys()
        for pair in pairs:
            cells = [f"{agg['improvement'][o][pair]['p']:.2f} [{agg['improvement'][o][pair]['lo']:.2f}, "
                     f"{agg['improvement'][o][pair]['hi']:.2f}]" if pair in agg["improvement"][o] else "-"
                     for o in agg["improvement"]]
            lines.append(f"| {pair.replace(',', ' > ')} | " + " | ".join(cells) + " |")
    lines += ["", "## Time to strength", "",
              "Median over runs that got there (runs that did / runs) of the env steps and training minutes until a "
              "run first beats greedy (interval above the fair share) and first reaches the heuristic's level "
              "(mean at or above it), read at the marks. These runs were trained one after another, each under "
              "whatever else the machine ran; for minutes that compare between learners, trained side by side "
              "under the same load at finer marks, see [benchmark_timing.md](benchmark_timing.md).", "",
              "| learner | game | beats greedy | heuristic level |", "|---|---|---|---|"]

    def reach(c):
        if not c["reached"]:
            return f"not reached (0/{c['runs']})"
        return f"{c['env_steps']:,.0f} steps, {c['minutes']:.1f} min ({c['reached']}/{c['runs']})"

    for lr, per in strength.items():
        for g, c in per.items():
            lines.append(f"| {lr} | {g} | {reach(c['beat_greedy'])} | {reach(c['heuristic_level'])} |")
    if cross:
        lines += ["", "## Cross-play and ratings", "",
                  f"Every final policy (learner/seed) and the ladder, round robin on {suite.crossplay_deals} frozen "
                  "deals; two sides: Bradley-Terry on the Elo scale; 3+ players: openskill Plackett-Luce mu on "
                  "finishing orders. random = 0, 95% bootstrap intervals over deals."]
        for g, e in cross.items():
            lines += ["", f"### {g} ({e['ratings']['model']})", "", e["markdown"]]
            if e.get("partners"):
                lines += ["", "Beside partners it never trained with (the pair's win share against two heuristics):", "",
                          "| policy | partner | win share | 95% CI |", "|---|---|---|---|"]
                for pol, mates in e["partners"].items():
                    for mate, st in mates.items():
                        lines.append(f"| {pol} | {mate} | {st['mean']:.3f} | [{st['lo']:.3f}, {st['hi']:.3f}] |")
    if plots:
        lines += ["", "## Curves", ""] + [f"![{p.stem}]({p.relative_to(where.parent).as_posix()})" for p in plots]
    return "\n".join(lines) + "\n"


def hardware_line() -> str:
    import os
    import platform

    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def run_benchmark(profile: str, out: Path, report: Path, suite_path: Path | None = None, lock_path: Path | None = None,
                  only: list[str] | None = None, reps: int = 2000, bootstrap: int = 200, echo=print,
                  train: bool = True, learners: list[str] | None = None, seeds: int | None = None) -> dict:
    """The whole pipeline: check the protocol, train and evaluate (resuming), aggregate, rate, report.
    ``train=False`` (``--report-only``) trains and evaluates nothing: the report holds the runs whose
    seeds are all finished, each learner on the games where it has them all, and says what is missing."""
    t0 = time.perf_counter()
    data = read_suite_file(suite_path)
    check_protocol(data, read_lock(lock_path))
    suite = load_suite(profile, suite_path, only, learners, seeds)
    scores = run_all(suite, out, echo) if train else ScoreFile(Path(out) / "scores.jsonl")
    done = finished_seeds(suite, scores)
    command = regenerate_command(profile, only, learners, seeds, out, report)
    coverage = coverage_line(suite, done, command)
    if not train:
        suite = dataclasses.replace(suite, runs={lr: (seeds, [g for g in gs if done[(lr, g)] == seeds])
                                                 for lr, (seeds, gs) in suite.runs.items()})
    agg = aggregate(suite, scores, reps)
    strength_rows = time_to_strength(suite, scores)
    strength = summarize_strength(strength_rows, suite)
    cross = crossplay(suite, scores, bootstrap, echo)
    report = Path(report)
    folder = report.parent / report.stem
    folder.mkdir(parents=True, exist_ok=True)
    plots = _plots(suite, agg, folder, profile, scores)
    minutes = (time.perf_counter() - t0) / 60
    report.write_text(markdown(suite, agg, strength, cross, plots, report, hardware_line(), minutes, done, coverage,
                               command, per_game_finals(suite, scores)))
    everything = {"profile": profile, "version": suite.version, "protocol": suite.protocol,
                  "scores": list(scores.rows.values()), "aggregate": agg, "time_to_strength": strength_rows,
                  "crossplay": {g: {k: v for k, v in e.items() if k != "markdown"} for g, e in cross.items()}}
    (folder / f"{profile}.json").write_text(json.dumps(everything, indent=1))
    echo(f"wrote {report} and {folder}/")
    return everything


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="domino benchmark", description=__doc__.split("\n")[0])
    ap.add_argument("action", nargs="?", default="run", choices=["run", "freeze"],
                    help="run the benchmark (default) or record the protocol's fingerprints")
    ap.add_argument("--profile", default="quick", choices=PROFILES)
    ap.add_argument("--out", help="output folder (default runs/benchmark/<profile>)")
    ap.add_argument("--report", help="the Markdown report (default docs/benchmark.md for quick, "
                                     "docs/benchmark_<profile>.md otherwise)")
    ap.add_argument("--only", nargs="+", metavar="GAME", help="run only these games of the suite")
    ap.add_argument("--learners", nargs="+", metavar="LEARNER",
                    help="run only these learners of the profile (default: all but the optional ones, e.g. rllib)")
    ap.add_argument("--seeds", type=int, metavar="N", help="at most N seeds of each learner (the page says so)")
    ap.add_argument("--suite", help="another suite file (default configs/benchmark/suite.yaml)")
    ap.add_argument("--lock", help="another lock file (default configs/benchmark/lock.json)")
    ap.add_argument("--report-only", action="store_true",
                    help="train and evaluate nothing: report the runs already finished and name the missing ones")
    ap.add_argument("--reps", type=int, default=2000, help="bootstrap resamples of the aggregates")
    ap.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE_OR_FILE",
                    help="import a module or .py file first (a learner of your own that calls register_learner)")
    return ap


def import_learner_code(item: str) -> None:
    """Import a user's learner module (dotted name) or file (path ending in .py): its
    `register_learner` call makes the learner known to the suite."""
    import importlib
    import importlib.util

    if item.endswith(".py"):
        path = Path(item)
        if not path.is_file():
            raise ConfigError(f"--import {item!r}: no such file")
        spec = importlib.util.spec_from_file_location(f"domino_user_learner_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    else:
        try:
            importlib.import_module(item)
        except ImportError as err:
            raise ConfigError(f"--import {item!r}: {err}") from None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        for item in args.imports:
            import_learner_code(item)
        if args.action == "freeze":
            lock = freeze(args.suite and Path(args.suite), args.lock and Path(args.lock))
            print(f"locked versions: {sorted(lock)}")
            return 0
        out = Path(args.out or f"runs/benchmark/{args.profile}")
        report = Path(args.report or (DOCS / ("benchmark.md" if args.profile == "quick"
                                              else f"benchmark_{args.profile}.md")))
        run_benchmark(args.profile, out, report, args.suite and Path(args.suite), args.lock and Path(args.lock),
                      args.only, args.reps, train=not args.report_only, learners=args.learners, seeds=args.seeds)
    except ValueError as e:
        print(f"domino benchmark: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
