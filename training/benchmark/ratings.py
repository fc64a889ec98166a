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
  ranked, ties shared) fed once, in order, to openskill's Plackett-Luce model. The rating is its mu
  relative to random's. The matrix is how often the row agent finished above the column agent when
  both sat at a table.

Intervals are 95% bootstrap percentiles over deals (the deal is the independent unit: the hands of
one deal share its tiles), refitted per resample, from a seeded `numpy.random.Generator`.

Partnership games also answer the question self-play flatters: ``partner_table`` puts a policy
beside a partner it never trained with (a baseline, another seed's policy) against a fixed pair.
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from dataclasses import dataclass, field

import numpy as np

from domino_agents.registry import make_agent
from domino_envs.errors import ConfigError
from domino_envs.outcome import finishing_ranks, win_shares
from domino_envs.registry import config_from_pairs, make_game
from domino_envs.rng import mix_seed
from domino_training.commands import HelpFormatter
from domino_training.evaluate import play_hand
from domino_training.stats import percentile_interval

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
    model: str                      # "bradley-terry (elo scale)" or "plackett-luce (openskill mu)"
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

    def order(self) -> list[int]:
        return sorted(range(len(self.names)), key=lambda i: -self.rating[i])

    def markdown(self, labels: dict[str, str] | None = None) -> str:
        lab = (labels or {}).get
        lines = ["| agent | rating | 95% interval |", "|---|---|---|"]
        for i in self.order():
            a = self.names[i]
            lines.append(f"| {lab(a, a)} | {self.rating[i]:+.0f} | [{self.lo[i]:+.0f}, {self.hi[i]:+.0f}] |")
        head = "| row vs column | " + " | ".join(lab(self.names[j], self.names[j]) for j in self.order()) + " |"
        lines += ["", head, "|---" * (len(self.names) + 1) + "|"]
        for i in self.order():
            cells = ["-" if i == j or math.isnan(self.matrix[i, j]) else f"{self.matrix[i, j]:.2f}"
                     for j in self.order()]
            lines.append(f"| {lab(self.names[i], self.names[i])} | " + " | ".join(cells) + " |")
        return "\n".join(lines)


def _anchor_index(names: list[str]) -> int:
    return names.index(ANCHOR) if ANCHOR in names else 0


def _two_sided_results(game, names: list[str], deals: int, seed: int) -> dict:
    """Per pair (i, j), i < j: i's win share per deal over the rotations (sides swapped)."""
    n = game.num_players
    per_pair = {}
    agents: dict = {}
    for t, (i, j) in enumerate(itertools.combinations(range(len(names)), 2)):
        specs = [names[i] if side_of(game, p) == 0 else names[j] for p in range(n)]
        returns = play_table(game, specs, deals, seed, t, agents)  # [deal, rotation, position]
        share = np.zeros(deals)
        for d in range(deals):
            for r in range(n):
                w = win_shares(returns[d, r])
                share[d] += sum(w[p] for p in range(n) if side_of(game, p) == 0) / n
        per_pair[(i, j)] = share
    return per_pair


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


def _free_for_all_hands(game, names: list[str], deals: int, seed: int) -> list[list[tuple[int, int]]]:
    """Per deal, a table of n distinct agents drawn at random (seeded), seated in every rotation;
    each hand as [(agent index, finishing rank)]."""
    n = game.num_players
    k = len(names)
    if k < n:
        raise ConfigError(f"{game.name}: rating {n}-player tables needs at least {n} distinct agents; got {k}")
    rng = np.random.default_rng(mix_seed(seed ^ _TABLE_STREAM, k))
    agents: dict = {}
    hands = []
    for d in range(deals):
        table = [int(x) for x in rng.choice(k, size=n, replace=False)]
        returns = play_table(game, [names[i] for i in table], 1, mix_seed(seed, d), d, agents)[0]
        deal_hands = []
        for r in range(n):
            ranks = finishing_ranks(returns[r])
            deal_hands.append([(table[p], int(ranks[p])) for p in range(n)])
        hands.append(deal_hands)
    return hands


def _fit_free_for_all(k: int, hands: list, pick=None) -> tuple[np.ndarray, np.ndarray]:
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    players = [model.rating() for _ in range(k)]
    above = np.zeros((k, k))
    met = np.zeros((k, k))
    order = range(len(hands)) if pick is None else pick
    for d in order:
        for hand in hands[d]:
            teams = [[players[i]] for i, _ in hand]
            rated = model.rate(teams, ranks=[rank for _, rank in hand])
            for (i, _), team in zip(hand, rated):
                players[i] = team[0]
            for (i, ri), (j, rj) in itertools.permutations(hand, 2):
                met[i, j] += 1
                above[i, j] += 1.0 if ri < rj else 0.5 if ri == rj else 0.0
    mu = np.array([p.mu for p in players])
    return mu, above / np.where(met > 0, met, np.nan)


def rate(game_name: str, specs: list[str], deals: int, seed: int = 0, config: dict | None = None,
         bootstrap: int = 200, rng_seed: int = 0) -> Ratings:
    """Ratings of `specs` in one game from their cross-play on `deals` duplicate deals (module doc).
    Every spec is built once first, so a bad one fails before any hand is played."""
    config = dict(config or {})
    if len(specs) < 2 or len(set(specs)) != len(specs):
        raise ConfigError(f"rate needs two or more distinct agent specs; got {specs}")
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 2:
        raise ConfigError(f"deals={deals!r} must be an int >= 2 (the bootstrap resamples deals)")
    game = make_game(game_name, **config)
    for s in specs:
        make_agent(s, game)
    k = len(specs)
    rng = np.random.default_rng(rng_seed)
    anchor = _anchor_index(specs)
    if two_sided(game):
        per_pair = _two_sided_results(game, specs, deals, seed)
        strength, matrix = _fit_two_sided(k, per_pair)
        boots = [_fit_two_sided(k, per_pair, rng.integers(0, deals, deals))[0] for _ in range(bootstrap)]
        scale, model, hands = ELO, "bradley-terry (elo scale)", len(per_pair) * deals * game.num_players
    else:
        hand_list = _free_for_all_hands(game, specs, deals, seed)
        strength, matrix = _fit_free_for_all(k, hand_list)
        boots = [_fit_free_for_all(k, hand_list, rng.integers(0, deals, deals))[0] for _ in range(bootstrap)]
        scale, model, hands = 1.0, "plackett-luce (openskill mu)", deals * game.num_players
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


# ------------------------------------------------------------------------------ CLI
EXAMPLES = """examples:
  domino rate --game sum7_v0 random greedy heuristic --deals 200
"""  # shown by --help; tests/fronts/test_command_help.py parses them


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(epilog=EXAMPLES, formatter_class=HelpFormatter,
        prog="domino rate", description="Cross-play ratings of agents on duplicate deals.")
    ap.add_argument("specs", nargs="+", help="agent specs (random is the anchor at 0 when present)")
    ap.add_argument("--game", required=True, help="env name (see domino games)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a rule key of the game")
    ap.add_argument("--deals", type=int, default=200, help="duplicate deals each pairing (two sides) or table plays")
    ap.add_argument("--seed", type=int, default=0, help="seed of the deals (the same seed, the same deals)")
    ap.add_argument("--bootstrap", type=int, default=200, help="resamples of the deals for the 95%% intervals")
    ap.add_argument("--json", help="write the ratings and the matrix here")
    ap.add_argument("--import", dest="imports", action="append", default=[], metavar="MODULE_OR_FILE",
                    help="import a module or .py file first (an agent of your own: its register_agent call); "
                         "repeatable")
    return ap


def main(argv: list[str] | None = None) -> int:
    from domino_training.user_code import import_all

    args = build_parser().parse_args(argv)
    try:
        import_all(args.imports)
        r = rate(args.game, args.specs, args.deals, args.seed, config_from_pairs(args.set), args.bootstrap)
    except ValueError as e:  # DominoError and bad specs: one line, exit 2
        print(f"domino rate: error: {e}", file=sys.stderr)
        return 2
    print(f"{r.game} ({r.model}, {r.deals} deals, {r.hands} hands; random = 0)")
    print(r.markdown())
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(r.to_json(), fh, indent=1)
    return 0
