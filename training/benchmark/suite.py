"""The benchmark suite and its lock: configs/benchmark/suite.yaml resolved into one profile (`Suite`), and the
fingerprints (protocol digest, frozen deals, scoring rule) recorded in lock.json under the suite's `version`,
so that a protocol, a dealing or a scoring rule that changed without a version bump is refused (`ProtocolError`).
"""
from __future__ import annotations

import hashlib
import importlib.resources
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from domino_envs import outcome
from domino_envs.errors import ConfigError, ProtocolError
from domino_envs.registry import make_game
from domino_envs.rng import mix_seed

PROFILES = ("ci", "quick", "full")


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
    bases: dict[str, str] = field(default_factory=dict)  # entry -> the learner it runs, where they differ

    def learner_of(self, entry: str) -> str:
        """The registered learner an entry of the suite runs (an entry such as ppo_distill names one)."""
        return self.bases.get(entry, entry)

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
    from domino_training.learners.interface import LEARNERS
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
    params = data["learners"] or {}
    _need(isinstance(params, dict), "learners", params, "a mapping learner -> settings")
    params = {k: dict(v or {}) for k, v in params.items()}
    for k, v in (spec.get("params") or {}).items():  # the profile's own settings on top (ci: tiny batches)
        params[k] = {**params.get(k, {}), **dict(v or {})}
    bases = {k: v.pop("learner", k) for k, v in params.items()}  # an entry may run a learner with its own params
    for lr in runs:
        base = bases.get(lr, lr)
        _need(base in LEARNERS, f"runs.{profile}.learners", lr if base == lr else f"{lr} (learner: {base})",
              f"a registered learner {sorted(LEARNERS)}, or an entry of `learners` naming one with `learner: NAME`")
    capped = {}
    if seeds is not None:
        _need(isinstance(seeds, int) and not isinstance(seeds, bool) and seeds >= 1, "--seeds", seeds, "a positive int")
        capped = {k: n for k, (n, _) in runs.items() if n > seeds}
        runs = {k: (min(n, seeds), gs) for k, (n, gs) in runs.items()}
    if learners:
        for lr in learners:
            _need(lr in runs, "--learners", lr, f"one of the learners profile {profile} runs {list(runs)} (another "
                  f"learner runs from a suite file of your own that lists it under runs.{profile}: --suite FILE)")
        left_out = []
        runs = {k: v for k, v in runs.items() if k in learners}
    else:
        left_out = [k for k in runs if LEARNERS[bases.get(k, k)].optional]
        runs = {k: v for k, v in runs.items() if k not in left_out}
    return Suite(version, profile, p, games, budget, steps, list(p["ladder"]), _per_profile(p, "ladder_deals", profile),
                 p["search"], _per_profile(p, "search_deals", profile), _per_profile(p, "crossplay_deals", profile),
                 int(p["deal_seed"]), runs, params, {k: w for k, w in why.items() if k in runs}, left_out,
                 {k: n for k, n in capped.items() if k in runs}, {k: b for k, b in bases.items() if k != b})


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


def finished_games() -> list[list[float]]:
    """The returns of the finished games `scoring_digest` scores: every pattern of ties and orders among
    2, 3 and 4 seats (each seat's return in 0..n-1), the same scaled and shifted below zero, and returns
    within and just past `outcome.TIE_TOLERANCE` of each other."""
    games = []
    for n in (2, 3, 4):
        for r in itertools.product(range(n), repeat=n):
            games += [[float(x) for x in r], [7.5 * x - 20.0 for x in r]]
    eps = outcome.TIE_TOLERANCE
    return games + [[1.0, 1.0 + eps / 10], [1.0, 1.0 + eps * 1000], [3.0, 3.0 + eps / 2, 3.0 - eps / 2, 0.0],
                    [0.0, eps * 1000, -eps * 1000, 0.0]]


def scoring_digest() -> str:
    """sha256 of what the scoring rule (domino_envs/outcome.py) makes of `finished_games`: each game's win
    shares and finishing ranks, and the win shares of the 4-seat games as one batch. The functions'
    outputs, not their source: a refactor keeps the digest, and a change in how ties count, how shares or
    ranks are computed or where the tolerance lies changes it (every tie pattern of up to 4 seats is
    there). The benchmark's scores are win shares (the evaluation harness) and its ratings use ranks."""
    rows = []
    for r in finished_games():
        rows.append([[round(float(x), 12) for x in outcome.win_shares(r)], [int(x) for x in outcome.finishing_ranks(r)]])
    four = np.array([r for r in finished_games() if len(r) == 4])
    rows.append([[round(float(x), 12) for x in row] for row in outcome.win_shares(four)])
    return hashlib.sha256(canonical(rows).encode()).hexdigest()


def fingerprints(data: dict) -> dict:
    """The lock entry of a suite file: its protocol's digest, each game's deals' digest (the largest deal
    count any profile uses) and the scoring rule's digest."""
    p = data["protocol"]
    most = max(max(p[k].values()) for k in ("ladder_deals", "search_deals", "crossplay_deals"))
    games = {name: GameSpec(name, g["env"], dict(g.get("config") or {})) for name, g in p["games"].items()}
    return {"protocol": protocol_digest(p), "deals": {n: deals_digest(g, int(p["deal_seed"]), most)
                                                      for n, g in games.items()},
            "scoring": scoring_digest()}


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
                            f"{sorted(lock) or 'none'}); record it with `domino benchmark freeze --lock FILE`")
    want, got = lock[v], fingerprints(data)
    if want["protocol"] != got["protocol"]:
        raise ProtocolError(f"the benchmark protocol differs from version {v}'s: bump `version` in suite.yaml "
                            f"and run `domino benchmark freeze --lock FILE` (numbers of different protocols are not comparable)")
    for name, digest in got["deals"].items():
        if want["deals"].get(name) != digest:
            raise ProtocolError(f"game {name!r} deals differently from version {v}'s frozen deals (an engine or "
                                f"dealing change): bump `version` and run `domino benchmark freeze --lock FILE`")
    if "scoring" not in want:
        raise ProtocolError(f"version {v} in lock.json has no fingerprint of the scoring rule (a lock from before it "
                            f"was recorded): add it with `domino benchmark freeze --lock FILE`")
    if want["scoring"] != got["scoring"]:
        raise ProtocolError(f"the scoring rule (domino_envs/outcome.py: win shares with ties, finishing ranks) differs "
                            f"from version {v}'s: bump `version` and run `domino benchmark freeze --lock FILE` "
                            f"(scores under different rules are not comparable)")


def freeze(suite_path: Path | None, lock_path: Path) -> dict:
    """Record the suite's fingerprints under its version in the lock file `lock_path` (named by the
    caller: the shipped lock is package data, which no command writes; in a checkout it is
    configs/benchmark/lock.json); refuses to overwrite a version already locked with other fingerprints
    (that is what bumping the version is for). A version locked before the scoring rule's fingerprint was
    recorded gets it added, its other fingerprints unchanged."""
    data = read_suite_file(suite_path)
    lock_path = Path(lock_path)
    lock = read_lock(lock_path)
    v = str(data["version"])
    fp = fingerprints(data)
    if v in lock and {"scoring": fp["scoring"], **lock[v]} != fp:
        raise ProtocolError(f"version {v} is already locked with other fingerprints: bump `version` to change the "
                            f"protocol (locked versions: {sorted(lock)})")
    lock[v] = fp
    lock_path.write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n")
    return lock
