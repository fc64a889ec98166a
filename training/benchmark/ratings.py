"""Cross-play and ratings: `domino rate --game G SPEC...` and the benchmark's cross-play step.

Every agent plays every other on the same duplicate deals, and one rating per agent is fitted from
all of those hands at once, with random anchored at 0:

- **Two sides** (2 players, or Racehorse with ``teams=True``: seats 0 & 2 against 1 & 3): a round
  robin of every pair, each deal played with the sides swapped (and, with teams, partners in every
  seat), gives a win matrix; a Bradley-Terry model is fitted to it by maximum likelihood (Newton's
  method; a tie counts half a win each way). Ratings are on the Elo scale
  (400 * log10 of the strength), so a 100-point gap means about 64% wins.
- **Three or more players, each for itself**: tables of distinct agents drawn per deal (seeded),
  every agent seated in every seat by cyclic rotation, and each hand's finishing order (returns
  ranked, ties shared) broken into every pair of agents at the table (i finished above j; a tie half
  each way), the same Bradley-Terry fit run on those counts: Plackett-Luce by full rank-breaking,
  which estimates Plackett-Luce's strengths consistently (tests/benchmark/test_ratings.py checks it
  against choix's Plackett-Luce likelihood fit). It is one batch fit of all hands, so it does not
  depend on their order, as openskill's hand-by-hand updates did, and a bootstrap resample only
  reweights deals. On the Elo scale too: 100 points is about 64% to finish above the other. The
  matrix is how often the row agent finished above the column agent when both sat at a table.

Intervals are 95% bootstrap percentiles over deals (the deal is the independent unit: the hands of
one deal share its tiles), refitted per resample, from a seeded `numpy.random.Generator`.

The play is split into units, each a job (training/parallel.py): one pair of agents (two sides), or
DEALS_PER_UNIT deals whose tables the parent drew (more players). `rate(..., workers=N)` gives the
same ratings for any N; with `cache` (`domino rate --out DIR`) each unit is kept as a file named by a
hash of what it plays, and read back instead of played, so a killed run resumes.
`decision_seconds` times an agent's decisions (the ladder's cost column, training/scripts/ladder.py).

Partnership games also answer the question self-play flatters: ``partner_table`` puts a policy
beside a partner it never trained with (a baseline, another seed's policy) against a fixed pair.
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from domino_agents.registry import make_agent
from domino_envs.errors import ConfigError
from domino_envs.outcome import finishing_ranks, win_shares
from domino_envs.registry import config_from_pairs, make_game
from domino_envs.rng import mix_seed
from domino_training.commands import HelpFormatter, add_address, add_import, add_seed, add_set, add_workers
from domino_training.evaluate import play_hand
from domino_training.parallel import check_address, check_workers, run_jobs
from domino_training.stats import percentile_interval
from domino_training.user_code import import_all

ELO = 400.0 / math.log(10.0)
ANCHOR = "random"
_SEAT_STREAM = 0x5EA7_0F_AB
_TABLE_STREAM = 0x7AB1E5


def two_sided(game) -> bool:
    """True when a hand is won by one of two sides: 2 players, or partnerships (teams=True)."""
    return game.num_players == 2 or bool(getattr(game.config, "teams", False))


def side_of(game, seat: int) -> int:
    """The side a seat plays for in a two-sided game (teams: seats 0 & 2 are side 0)."""
    return seat % 2


# ------------------------------------------------------------------------------ playing tables
def play_table(game, specs: list[str], deals: int, seed: int, table_index: int = 0,
               agents: dict | None = None) -> np.ndarray:
    """Play the table `specs` (one agent spec per seat) on `deals` duplicate deals, each deal once
    per cyclic rotation of the seats, and return returns[deal, rotation, position]: the return of
    the agent at position p of `specs` (which sat in seat (p + rotation) % n). Deal d is the engine
    seed mix_seed(seed, d), as in `evaluate`. `agents` caches agent objects by (spec, seat)."""
    n = game.num_players
    if len(specs) != n:
        raise ConfigError(f"{game.name}: a table needs {n} agent specs (one a seat); got {len(specs)}")
    agents = {} if agents is None else agents
    state = game.new_state()
    out = np.zeros((deals, n, n))
    for d in range(deals):
        engine_seed = mix_seed(seed, d)
        for r in range(n):
            seat_of = [(p + r) % n for p in range(n)]
            by_seat = [None] * n
            for p, spec in enumerate(specs):
                key = (spec, seat_of[p])
                if key not in agents:
                    agents[key] = make_agent(spec, game)
                by_seat[seat_of[p]] = agents[key]
            base = ((table_index * deals + d) * n + r) * n
            agent_seeds = [mix_seed(seed ^ _SEAT_STREAM, base + k) for k in range(n)]
            totals = play_hand(game, state, by_seat, engine_seed, agent_seeds)
            out[d, r] = [totals[seat_of[p]] for p in range(n)]
    return out


# ------------------------------------------------------------------------------ Bradley-Terry
def bradley_terry(wins: np.ndarray, games: np.ndarray, iterations: int = 100, tol: float = 1e-12) -> np.ndarray:
    """Maximum-likelihood Bradley-Terry log-strengths from wins[i, j] (i's wins over j, ties as
    halves) and games[i, j] (= games[j, i]), by Newton's method on the log-likelihood. An agent that
    won or lost everything has no finite maximum: a tiny prior (half a win and half a loss against
    a virtual player of log-strength 0) keeps every strength finite and the problem strictly
    concave, so Newton converges in a few steps. Returned centred at mean 0."""
    k = wins.shape[0]
    x = np.zeros(k)
    wins_of = wins.sum(axis=1)
    for _ in range(iterations):
        sig = 1.0 / (1.0 + np.exp(-(x[:, None] - x[None, :])))
        s0 = 1.0 / (1.0 + np.exp(-x))
        grad = wins_of - (games * sig).sum(axis=1) + 0.5 - s0
        curv = games * sig * (1.0 - sig)
        hess = curv - np.diag(curv.sum(axis=1) + s0 * (1.0 - s0))
        step = np.linalg.solve(hess, grad)
        x -= step
        if np.max(np.abs(step)) < tol:
            break
    return x - x.mean()


@dataclass
class Ratings:
    """One game's ratings of a set of agents, with 95% bootstrap intervals and the cross-play matrix."""

    game: str
    config: dict
    names: list[str]
    model: str                      # "bradley-terry (elo scale)" or "plackett-luce by rank-breaking (elo scale)"
    rating: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    matrix: np.ndarray              # row's win share (two sides) or finished-above share against column
    deals: int
    hands: int
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"game": self.game, "config": self.config, "model": self.model, "deals": self.deals,
                "hands": self.hands, "anchor": ANCHOR if ANCHOR in self.names else self.names[0],
                "ratings": [{"agent": a, "rating": float(r), "lo": float(lo), "hi": float(hi)}
                            for a, r, lo, hi in zip(self.names, self.rating, self.lo, self.hi)],
                "matrix": {a: {b: (None if math.isnan(v) else float(v)) for b, v in zip(self.names, row)}
                           for a, row in zip(self.names, self.matrix)}, **self.extra}

    @classmethod
    def from_json(cls, data: dict) -> Ratings:
        """The Ratings `to_json` wrote (extra keys are not read back)."""
        names = [x["agent"] for x in data["ratings"]]
        col = {k: np.array([x[k] for x in data["ratings"]], dtype=float) for k in ("rating", "lo", "hi")}
        matrix = np.array([[np.nan if data["matrix"][a][b] is None else data["matrix"][a][b] for b in names]
                           for a in names], dtype=float)
        return cls(data["game"], data["config"], names, data["model"], col["rating"], col["lo"], col["hi"], matrix,
                   data["deals"], data["hands"])

    def order(self) -> list[int]:
        return sorted(range(len(self.names)), key=lambda i: -self.rating[i])

    def markdown(self, labels: dict[str, str] | None = None, costs: dict[str, float] | None = None,
                 digits: int = 0) -> str:
        """The ratings table (with `costs`, agent -> seconds per decision, a column of them; ratings to
        `digits` decimals) and the matrix."""
        lab = (labels or {}).get
        cost = "" if costs is None else " time per decision |"
        lines = ["| agent | rating | 95% interval |" + cost, "|---|---|---|" + "---|" * bool(costs is not None)]
        for i in self.order():
            a = self.names[i]
            cell = "" if costs is None else f" {duration(costs[a]) if a in costs else '-'} |"
            r, lo, hi = (f"{x[i]:+.{digits}f}" for x in (self.rating, self.lo, self.hi))
            lines.append(f"| {lab(a, a)} | {r} | [{lo}, {hi}] |" + cell)
        head = "| row vs column | " + " | ".join(lab(self.names[j], self.names[j]) for j in self.order()) + " |"
        lines += ["", head, "|---" * (len(self.names) + 1) + "|"]
        for i in self.order():
            cells = ["-" if i == j or math.isnan(self.matrix[i, j]) else f"{self.matrix[i, j]:.2f}"
                     for j in self.order()]
            lines.append(f"| {lab(self.names[i], self.names[i])} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


def duration(seconds: float) -> str:
    """A short time for a table: 4.2 µs, 0.22 ms, 36 ms, 1.2 s."""
    unit, scale = ("s", 1.0) if seconds >= 1 else ("ms", 1e-3) if seconds >= 1e-3 else ("µs", 1e-6)
    v = seconds / scale
    return f"{v:.2g} {unit}" if v < 10 else f"{v:.0f} {unit}"


def _anchor_index(names: list[str]) -> int:
    return names.index(ANCHOR) if ANCHOR in names else 0


def _pair_share(game_name: str, config: dict, first: str, second: str, deals: int, seed: int, t: int) -> list[float]:
    """One unit of a two-sided round robin (a job): `first`'s win share per deal against `second`,
    over the rotations (sides swapped); `t` is the pair's index in combinations order."""
    game = make_game(game_name, **config)
    n = game.num_players
    specs = [first if side_of(game, p) == 0 else second for p in range(n)]
    returns = play_table(game, specs, deals, seed, t)  # [deal, rotation, position]
    share = np.zeros(deals)
    for d in range(deals):
        for r in range(n):
            w = win_shares(returns[d, r])
            share[d] += sum(w[p] for p in range(n) if side_of(game, p) == 0) / n
    return share.tolist()


def _fit_two_sided(k: int, per_pair: dict, pick=None) -> tuple[np.ndarray, np.ndarray]:
    wins = np.zeros((k, k))
    games = np.zeros((k, k))
    for (i, j), share in per_pair.items():
        s = share if pick is None else share[pick]
        wins[i, j] += s.sum()
        wins[j, i] += len(s) - s.sum()
        games[i, j] += len(s)
        games[j, i] += len(s)
    return bradley_terry(wins, games), wins / np.where(games > 0, games, np.nan)


def _draw_tables(game, k: int, deals: int, seed: int) -> list[list[int]]:
    """Per deal, a table of n distinct agents of the k drawn at random (seeded by seed and k)."""
    n = game.num_players
    if k < n:
        raise ConfigError(f"{game.name}: rating {n}-player tables needs at least {n} distinct agents; got {k}")
    rng = np.random.default_rng(mix_seed(seed ^ _TABLE_STREAM, k))
    return [[int(x) for x in rng.choice(k, size=n, replace=False)] for _ in range(deals)]


def _table_hands(game_name: str, config: dict, tables: list[list[str]], first: int, seed: int) -> list:
    """One unit of free-for-all play (a job): deals first, first + 1, ... at the given tables (agent
    specs by position), each seated in every rotation; per deal, per hand, each position's finishing rank."""
    game = make_game(game_name, **config)
    n = game.num_players
    agents: dict = {}
    out = []
    for d, specs in enumerate(tables, start=first):
        returns = play_table(game, specs, 1, mix_seed(seed, d), d, agents)[0]
        out.append([[int(x) for x in finishing_ranks(returns[r])] for r in range(n)])
    return out


def _finish_counts(k: int, hand_list: list) -> tuple[np.ndarray, np.ndarray]:
    """Per deal d: above[d, i, j], the times i finished above j at a table of its hands (a tie half each way),
    and met[d, i, j], the times they sat at one: every hand's finishing order broken into its pairs."""
    above = np.zeros((len(hand_list), k, k))
    met = np.zeros((len(hand_list), k, k))
    for d, hands in enumerate(hand_list):
        for hand in hands:
            for (i, ri), (j, rj) in itertools.permutations(hand, 2):
                met[d, i, j] += 1
                above[d, i, j] += 1.0 if ri < rj else 0.5 if ri == rj else 0.0
    return above, met


def _fit_free_for_all(counts: tuple[np.ndarray, np.ndarray], pick=None) -> tuple[np.ndarray, np.ndarray]:
    """Log-strengths from the finish counts of the deals in `pick` (a bootstrap resample: each deal counted as
    often as drawn; None: every deal once) by the Bradley-Terry fit (module doc), and the finished-above shares."""
    above, met = counts
    weight = np.ones(len(above)) if pick is None else np.bincount(pick, minlength=len(above)).astype(float)
    wins, games = np.tensordot(weight, above, 1), np.tensordot(weight, met, 1)
    return bradley_terry(wins, games), wins / np.where(games > 0, games, np.nan)


# ------------------------------------------------------------------------------ units of work, cached
DEALS_PER_UNIT = 10  # free-for-all: the deals one job plays (and one cache file holds)


def _files_digest(game_name: str, spec: str) -> str:
    """sha256 of the files a spec plays from (the shipped policy for `trained` or `policy=trained`, any
    file or folder a value names), so a cache is not reused once the policy behind a spec changes."""
    from domino_agents.registry import parse_spec

    name, params = parse_spec(spec)
    paths = []
    if name == "trained" or params.get("policy") == "trained":
        from domino_agents.trained import shipped_path

        paths.append(shipped_path(game_name))
    paths += [Path(v) for v in params.values() if isinstance(v, str) and v != "trained" and Path(v).exists()]
    h = hashlib.sha256()
    for path in paths:
        for f in sorted(f for f in path.rglob("*") if f.is_file()) if path.is_dir() else [path]:
            h.update(f.relative_to(path).as_posix().encode() if path.is_dir() else b"")
            h.update(f.read_bytes())
    return h.hexdigest()[:16] if paths else ""


def _cache_file(cache: Path, key: dict) -> Path:
    return cache / (hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24] + ".json")


def _run_units(fn, jobs: list[tuple], keys: list[dict], describe, workers: int, address: str | None,
               cache: Path | None, imports: list[str] | None, echo) -> list:
    """fn(*job) for every job, in `workers` processes (training/parallel.py); with a `cache` folder a
    job whose file (named by a hash of its key) exists is read instead of played, and every job
    played is written there as it finishes (atomically), so a killed run resumes."""
    results: list = [None] * len(jobs)
    todo = list(range(len(jobs)))
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        todo = []
        for u, key in enumerate(keys):
            try:
                data = json.loads(_cache_file(cache, key).read_text())
            except (OSError, ValueError):
                data = None
            if isinstance(data, dict) and data.get("key") == key:
                results[u] = data["result"]
            else:
                todo.append(u)
    if echo is not None and cache is not None:
        echo(f"{len(jobs) - len(todo)} of {len(jobs)} units read from {cache}; playing {len(todo)}")
    init = import_all if imports and (workers > 1 or address is not None) else None
    ran = run_jobs(fn, [jobs[u] for u in todo], workers, address, init, (list(imports or []),),
                   describe=lambda i: describe(todo[i]))
    for done, (i, result) in enumerate(ran, start=1):
        u = todo[i]
        results[u] = result
        if cache is not None:
            path = _cache_file(cache, keys[u])
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"key": keys[u], "result": result}))
            os.replace(tmp, path)
        if echo is not None:
            echo(f"{describe(u)} done ({done}/{len(todo)})")
    return results


def rate(game_name: str, specs: list[str], deals: int, seed: int = 0, config: dict | None = None,
         bootstrap: int = 200, rng_seed: int = 0, workers: int = 1, address: str | None = None,
         cache: str | Path | None = None, imports: list[str] | None = None, echo=None) -> Ratings:
    """Ratings of `specs` in one game from their cross-play on `deals` duplicate deals (module doc).
    Every spec is built once first, so a bad one fails before any hand is played.

    The play is split into units (two sides: one pair of agents; otherwise DEALS_PER_UNIT deals, their
    tables drawn here first) run in `workers` processes or as Ray tasks at `address`, each importing
    `imports`; the ratings are the same for any number. With `cache` (a folder) each unit is saved
    when it finishes under a hash of what it plays (game, config, specs and the files they load,
    deals, seed, its index) and read back instead of played: a killed run resumes. `echo` gets a
    line per unit."""
    config = dict(config or {})
    if len(specs) < 2 or len(set(specs)) != len(specs):
        raise ConfigError(f"rate needs two or more distinct agent specs; got {specs}")
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 2:
        raise ConfigError(f"deals={deals!r} must be an int >= 2 (the bootstrap resamples deals)")
    check_workers(workers)
    check_address(address)  # before the cache folder is made
    game = make_game(game_name, **config)
    for s in specs:
        make_agent(s, game)
    k = len(specs)
    rng = np.random.default_rng(rng_seed)
    anchor = _anchor_index(specs)
    cache = None if cache is None else Path(cache)
    files = {s: _files_digest(game_name, s) for s in specs} if cache is not None else {}
    base = json.loads(json.dumps({"game": game_name, "config": config, "seed": int(seed)}))
    run = dict(workers=workers, address=address, cache=cache, imports=imports, echo=echo)
    if two_sided(game):
        pairs = list(itertools.combinations(range(k), 2))
        jobs = [(game_name, config, specs[i], specs[j], deals, seed, t) for t, (i, j) in enumerate(pairs)]
        keys = [{**base, "unit": "pair", "index": t, "deals": deals, "specs": [specs[i], specs[j]],
                 "files": [files.get(specs[i], ""), files.get(specs[j], "")]} for t, (i, j) in enumerate(pairs)]
        shares = _run_units(_pair_share, jobs, keys, lambda t: f"{game_name} {specs[pairs[t][0]]} vs "
                            f"{specs[pairs[t][1]]}", **run)
        per_pair = {pair: np.array(share) for pair, share in zip(pairs, shares)}
        strength, matrix = _fit_two_sided(k, per_pair)
        boots = [_fit_two_sided(k, per_pair, rng.integers(0, deals, deals))[0] for _ in range(bootstrap)]
        scale, model, hands = ELO, "bradley-terry (elo scale)", len(per_pair) * deals * game.num_players
    else:
        tables = _draw_tables(game, k, deals, seed)
        bounds = [(a, min(a + DEALS_PER_UNIT, deals)) for a in range(0, deals, DEALS_PER_UNIT)]
        jobs = [(game_name, config, [[specs[i] for i in tab] for tab in tables[a:b]], a, seed) for a, b in bounds]
        keys = [{**base, "unit": "deals", "index": u, "first": a, "stop": b, "tables": jobs[u][2],
                 "files": [files.get(s, "") for s in specs]} for u, (a, b) in enumerate(bounds)]
        parts = _run_units(_table_hands, jobs, keys, lambda u: f"{game_name} deals {bounds[u][0]}-"
                           f"{bounds[u][1] - 1}", **run)
        ranks = [deal for part in parts for deal in part]  # [deal][rotation][position]
        hand_list = [[[(tables[d][p], int(rank[p])) for p in range(game.num_players)] for rank in ranks[d]]
                     for d in range(deals)]
        counts = _finish_counts(k, hand_list)
        strength, matrix = _fit_free_for_all(counts)
        boots = [_fit_free_for_all(counts, rng.integers(0, deals, deals))[0] for _ in range(bootstrap)]
        scale, model, hands = ELO, "plackett-luce by rank-breaking (elo scale)", deals * game.num_players
    rating = scale * (strength - strength[anchor])
    b = np.array([scale * (x - x[anchor]) for x in boots]) if boots else np.array([rating])
    lo, hi = percentile_interval(b)
    return Ratings(game_name, config, list(specs), model, rating, lo, hi, matrix, deals, hands)


def partner_table(game_name: str, policy: str, partners: list[str], opponent: str, deals: int, seed: int = 0,
                  config: dict | None = None) -> dict[str, dict]:
    """Partnership games: `policy` with each partner (itself included for comparison) against a pair
    of `opponent`s, on duplicate deals with every seat rotated. Returns partner -> the pair's win
    share (mean and 95% normal interval over deals): how much of a policy's strength survives a
    partner it never trained with."""
    from domino_training.stats import Stat

    game = make_game(game_name, **dict(config or {}))
    if not getattr(game.config, "teams", False):
        raise ConfigError(f"{game_name}: partner tables need a partnership config (teams=True)")
    out = {}
    for t, partner in enumerate(partners):
        returns = play_table(game, [policy, opponent, partner, opponent], deals, seed, t)
        share = np.array([np.mean([win_shares(returns[d, r])[[0, 2]].sum() for r in range(4)])
                          for d in range(deals)])
        out[partner] = Stat.of(share, (0.0, 1.0)).as_dict()
    return out


# ------------------------------------------------------------------------------ cost of a decision
class _Timed:
    """An agent whose decisions (`act`, and `observe_state` for a search) are timed, nothing else."""

    def __init__(self, agent):
        self.agent, self.seconds, self.decisions = agent, 0.0, 0
        self.searches = bool(getattr(agent, "searches", False))

    def reset(self, seed: int) -> None:
        self.agent.reset(seed)

    def observe_state(self, *args) -> None:
        t0 = time.perf_counter()
        self.agent.observe_state(*args)
        self.seconds += time.perf_counter() - t0

    def act(self, obs, mask):
        t0 = time.perf_counter()
        action = self.agent.act(obs, mask)
        self.seconds += time.perf_counter() - t0
        self.decisions += 1
        return action


def decision_seconds(game_name: str, spec: str, hands: int = 4, config: dict | None = None, seed: int = 0) -> dict:
    """Mean seconds `spec` takes per decision in this game (this process, one core): `hands` hands
    against random, its seat rotating, after one untimed hand (compiling and loading are not a
    decision's cost). Returns {"seconds", "decisions", "hands"}."""
    if isinstance(hands, bool) or not isinstance(hands, int) or hands < 1:
        raise ConfigError(f"hands={hands!r} must be an int >= 1")
    game = make_game(game_name, **dict(config or {}))
    n = game.num_players
    timed = _Timed(make_agent(spec, game))
    others = [make_agent(ANCHOR, game) for _ in range(n - 1)]
    state = game.new_state()
    for h in range(-1, hands):
        if h == 0:
            timed.seconds, timed.decisions = 0.0, 0
        seat = h % n
        by_seat = others[:seat] + [timed] + others[seat:]
        play_hand(game, state, by_seat, mix_seed(seed, h + 1), [mix_seed(seed ^ _SEAT_STREAM, (h + 1) * n + k)
                                                                 for k in range(n)])
    return {"seconds": timed.seconds / max(timed.decisions, 1), "decisions": timed.decisions, "hands": hands}


# ------------------------------------------------------------------------------ CLI
EXAMPLES = """examples:
  domino rate --game sum7_v0 random greedy heuristic --deals 200
  domino rate --game block_v0 random greedy pimc:n=16 --deals 200 --workers 2 --out runs/rate/block
"""  # shown by --help; tests/fronts/test_command_help.py parses them


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(epilog=EXAMPLES, formatter_class=HelpFormatter,
        prog="domino rate", description="Cross-play ratings of agents on duplicate deals.")
    ap.add_argument("specs", nargs="+", help="agent specs (random is the anchor at 0 when present)")
    ap.add_argument("--game", required=True, help="env name (see domino games)")
    add_set(ap)
    ap.add_argument("--deals", type=int, default=200, help="duplicate deals each pairing (two sides) or table plays")
    add_seed(ap, "the deals")
    ap.add_argument("--bootstrap", type=int, default=200, help="resamples of the deals for the 95%% intervals")
    ap.add_argument("--json", help="write the ratings and the matrix here")
    add_import(ap)
    add_workers(ap, "play (a pair of agents, or a chunk of deals, each)")
    add_address(ap, "play the units")
    ap.add_argument("--out", default=None, metavar="DIR",
                    help="keep each unit played here (a pair of agents, or a chunk of deals) and read it back instead "
                         "of playing it again: a killed run resumes")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        import_all(args.imports)
        r = rate(args.game, args.specs, args.deals, args.seed, config_from_pairs(args.set), args.bootstrap,
                 workers=args.workers, address=args.address, cache=args.out, imports=args.imports)
    except ValueError as e:  # DominoError and bad specs: one line, exit 2
        print(f"domino rate: error: {e}", file=sys.stderr)
        return 2
    print(f"{r.game} ({r.model}, {r.deals} deals, {r.hands} hands; random = 0)")
    print(r.markdown())
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(r.to_json(), fh, indent=1)
    return 0
