"""Fair evaluation of agents on duplicate deals: `domino evaluate` and `evaluate(...)`.

Why duplicate deals: in a domino hand the deal decides most of the result, so comparing two agents
on independent deals needs many thousands of hands to see a small skill gap. Here every deal is
played once for each seat the agent under test (the *focal* agent) can occupy, on the very same
tiles, so the luck of the deal is shared out evenly.

Design (decisions the issue left open):
- A matchup (A, B) in an n-player game plays, for each deal d, n hands: A in seat k and a copy of
  B in every other seat, k = 0..n-1. With 2 players this is the classic "swap seats" duplicate;
  with more players it measures A against a table of B's, so A's *fair share* of wins is 1/n.
  (B against a table of A's is the separate matchup (B, A); with 2 players both come out of the
  same hands and are computed once.)
- Deal d is the engine seed ``mix_seed(seed, d)`` (domino_envs.rng): the same seed gives the same
  deal (tests check it, also through ``env.reset(seed=...)``, whose first episode uses
  ``mix_seed(seed, 0)``). Agents are reseeded before every hand from a separate stream keyed on
  (seed, matchup, deal, rotation, seat), so a whole table is deterministic for a given seed.
- Hands run on the engine directly (``make_game``: reset/step/observe/legal_mask on one state
  row), not the AEC env, for speed; an agent still only receives ``act(observation, mask)``.
  Agents that search declare ``searches = True`` and get ``observe_state(state, seat, returns_so_far)`` right
  before each of their decisions; the PIMC agent uses it only through ``sample_hidden``.
- A hand's *return* for a seat is the sum of its rewards over the episode (all games are
  zero-sum). The *winners* of a hand are the seats with the highest return; ties share one win
  (each of w tied seats gets 1/w), so every hand hands out exactly one win.
- Statistics are per deal: the focal agent's win share and mean return averaged over the n
  rotations of a deal, then mean and 95% interval over deals, normal approximation
  (mean +- 1.96 * sd / sqrt(deals), sd with ddof=1; the win interval clipped to [0, 1]). The deal
  is the independent unit - the rotations of one deal are paired, which is the point of the
  design - so a Wilson interval over hands (which assumes independent hands) would be wrong here.
- Per-agent summary: the focal agent's per-deal values pooled over all its matchups.

Output: a printed table, Markdown (``--markdown FILE``) and JSON (``--json FILE``); every hand as a
replay line (``--save-replays FILE``, ``evaluate(..., replay_path=FILE)``: domino_envs/replay.py); a tqdm
progress bar on stderr for runs over a few thousand hands (``--no-progress`` turns it off).
``--import FILE`` (or a module) registers agents of your own first, in every worker too.

    domino evaluate --game draw_v0 --agents random greedy heuristic --deals 2000 --seed 0
    domino evaluate --game sum7_v0 --agents random greedy heuristic pimc:n=16 \
        --pairs greedy@random heuristic@random heuristic@greedy pimc@heuristic --deals 2000
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from domino_agents.llm import CATEGORIES, BudgetExhausted, CallMeter
from domino_agents.registry import agent_names, make_agent, parse_spec
from domino_envs.core import H_DONE, H_TURN
from domino_envs.outcome import win_shares
from domino_envs.registry import config_from_pairs, game_names, make_game
from domino_envs.replay import Recorder
from domino_envs.rng import mix_seed
from domino_training.commands import HelpFormatter, add_address, add_import, add_seed, add_set, add_workers
from domino_training.parallel import WorkerInfo, check_address, check_workers, ran_in, run_jobs
from domino_training.stats import Stat
from domino_training.user_code import import_all

PROGRESS_MIN_HANDS = 2000  # bar shown for runs longer than this (unless disabled)
_AGENT_STREAM = 0x5EED_A6E7


# ------------------------------------------------------------------------------ one hand
def play_hand(game, state, agents, engine_seed: int, agent_seeds, recorder=None, infos: list | None = None) -> np.ndarray:
    """Play one episode from `engine_seed` with agents[k] in seat k; return each seat's return.
    With a `recorder` (domino_envs.replay.Recorder) the hand is recorded as it is played. An agent with a
    `step_info()` method (a language model's costs: agents/llm.py) has what it returns after each decision
    kept in the replay's step and, with `infos` (a list), appended there as (seat, info)."""
    n = game.num_players
    game.reset(state, engine_seed)
    if recorder is not None:
        recorder.start(state, engine_seed)
    for agent, s in zip(agents, agent_seeds):
        agent.reset(int(s))
    totals = np.zeros(n, dtype=np.float64)
    searching = [bool(getattr(a, "searches", False)) for a in agents]
    if state[H_DONE]:
        totals += game.rewards(state)
        return totals
    n_actions = game.num_actions
    while not state[H_DONE]:
        seat = int(state[H_TURN])
        obs = game.observe(state, seat)
        mask = game.legal_mask(state, np.zeros(n_actions, dtype=np.int8))
        agent = agents[seat]
        if searching[seat]:
            agent.observe_state(state, seat, totals)  # returns so far: PIMC judges whole episodes
        action = agent.act(obs, mask)
        if not (0 <= int(action) < n_actions) or not mask[int(action)]:
            raise RuntimeError(f"{game.name}: agent {getattr(agent, 'name', agent)!r} in seat {seat} chose "
                               f"illegal action {action!r} ({game.describe_action(int(action))}); "
                               f"legal: {np.flatnonzero(mask).tolist()}")
        info = agent.step_info() if hasattr(agent, "step_info") else None
        game.step(state, int(action))
        totals += game.rewards(state)
        if recorder is not None:
            recorder.step(seat, int(action), state, info)
        if infos is not None and info is not None:
            infos.append((seat, info))
    return totals


def scored_shares(totals: np.ndarray, forfeit: list[int]) -> np.ndarray:
    """Each seat's win share of a hand: `win_shares` of its returns, except that a seat that gave the hand up
    (a language model's on_fail=forfeit) scores a loss: the win goes to the others (shared as usual)."""
    if not forfeit or len(forfeit) == totals.size:
        return win_shares(totals)
    kept = totals.astype(np.float64).copy()
    kept[forfeit] = -np.inf
    return win_shares(kept)


# ------------------------------------------------------------------------------ language-model counts
LLM_SUMS = ("hands", "decisions", "replies", "failed", *CATEGORIES, "random", "forfeit", "tokens_in", "tokens_out",
            "tokens_reasoning", "seconds", "cost")


def _llm_sums(infos: list[dict]) -> np.ndarray:
    """One seat's decisions of one hand (their step infos) summed in the order of LLM_SUMS (hands: 0 here)."""
    out = dict.fromkeys(LLM_SUMS, 0.0)
    for info in infos:
        d = info["llm"]
        out["decisions"] += 1
        out["replies"] += len(d["replies"])
        out["failed"] += sum(c != "ok" for c in d["replies"])
        for c in d["replies"]:
            out[c] += 1
        if d["fallback"]:
            out[d["fallback"]] += 1
        for k in ("tokens_in", "tokens_out", "tokens_reasoning", "seconds", "cost"):
            out[k] += d[k]
    return np.array([out[k] for k in LLM_SUMS])


@dataclass
class Matchup:
    """Focal agent vs a table of copies of the opponent: per-deal win shares and returns."""

    focal: str
    opponent: str
    win: np.ndarray
    reward: np.ndarray
    seconds: float = 0.0
    # the focal agent's language-model sums per deal (LLM_SUMS -> one value a deal), None where it made no call
    llm: dict | None = None
    stopped: str | None = None  # why the run stopped before the last deal (--max-calls, --budget)

    @property
    def win_stat(self) -> Stat:
        return Stat.of(self.win, (0.0, 1.0))

    def llm_json(self) -> dict | None:
        """The language-model counts and rates of the focal agent (see `llm_summary`)."""
        return None if self.llm is None else llm_summary(self.llm)

    @property
    def reward_stat(self) -> Stat:
        return Stat.of(self.reward)


def llm_summary(sums: dict) -> dict:
    """Counts, rates and costs of a language-model agent from its per-deal sums (LLM_SUMS): replies by
    category, fallbacks, the failed-reply rate (replies not ok over replies) with its 95% interval over the
    deals that had replies, tokens per decision, seconds per decision, cost per hand and in all."""
    tot = {k: float(np.sum(v)) for k, v in sums.items()}
    asked = sums["replies"] > 0
    rate = Stat.of(sums["failed"][asked] / sums["replies"][asked], (0.0, 1.0))
    per = max(tot["decisions"], 1.0)
    return {"decisions": int(tot["decisions"]), "replies": int(tot["replies"]),
            "categories": {c: int(tot[c]) for c in CATEGORIES},
            "fallbacks": {"random": int(tot["random"]), "forfeit": int(tot["forfeit"])},
            "illegal_reply_rate": rate.as_dict(),
            "tokens_per_decision": {"in": tot["tokens_in"] / per, "out": tot["tokens_out"] / per,
                                    "reasoning": tot["tokens_reasoning"] / per},
            "seconds_per_decision": tot["seconds"] / per,
            "cost": tot["cost"], "cost_per_hand": tot["cost"] / max(tot["hands"], 1.0)}


@dataclass
class Report:
    game: str
    config: dict
    num_players: int
    deals: int
    seed: int
    agents: list[str]
    matchups: dict[tuple[str, str], Matchup] = field(default_factory=dict)
    # where each shard ran, in shard order (training/parallel.py): empty where this process played every
    # deal; not part of the report's JSON, which is the same for every number of workers
    shard_workers: list[WorkerInfo] = field(default_factory=list)
    stopped: str | None = None  # why a language model's --max-calls / --budget stopped the run early
    calls: int = 0  # language-model calls made (not counting replies from the cache)
    cached: int = 0  # replies read from the cache

    @property
    def fair_share(self) -> float:
        return 1.0 / self.num_players

    def summary(self) -> dict[str, dict]:
        out = {}
        for a in self.agents:
            ms = [m for (f, _), m in self.matchups.items() if f == a]
            if not ms:
                continue
            win = Stat.of(np.concatenate([m.win for m in ms]), (0.0, 1.0))
            rew = Stat.of(np.concatenate([m.reward for m in ms]))
            out[a] = {"win": win, "reward": rew, "deals": win.n, "opponents": [m.opponent for m in ms]}
        return out

    # ---------------------------------------------------------------- output
    def to_json(self) -> dict:
        out = {
            "game": self.game, "config": self.config, "num_players": self.num_players,
            "deals": self.deals, "seed": self.seed, "agents": self.agents,
            "fair_share": self.fair_share,
            "interval": "95% normal interval over deals (mean +- 1.96 sd/sqrt(deals))",
            "summary": {a: {"win_rate": s["win"].as_dict(), "reward": s["reward"].as_dict(),
                            "deals": s["deals"], "opponents": s["opponents"]}
                        for a, s in self.summary().items()},
            "matchups": [{"agent": m.focal, "opponent": m.opponent, "deals": int(m.win.size),
                          "win_rate": m.win_stat.as_dict(), "reward": m.reward_stat.as_dict(),
                          **({"llm": m.llm_json()} if m.llm is not None else {})}
                         for m in self.matchups.values()],
        }
        if any(m.llm is not None for m in self.matchups.values()):
            out["llm_calls"] = {"made": self.calls, "from_cache": self.cached}
        if self.stopped:
            out["stopped"] = self.stopped
        return out

    def _rows(self):
        rows = []
        for m in self.matchups.values():
            w, r = m.win_stat, m.reward_stat
            rows.append((m.focal, m.opponent, w, r, w.n))
        return rows

    def table(self) -> str:
        n = self.num_players
        head = (f"{self.game} ({n} players, config {self.config or 'default'}): {self.deals} duplicate deals, "
                f"seed {self.seed}; fair share of wins {self.fair_share:.3f}")
        lines = [head, "", "matchups (agent in each seat in turn, copies of the opponent elsewhere):"]
        nw = max([22] + [len(a) + 1 for a in self.agents])
        fmt = f"{{:<{nw}}} {{:<{nw}}} {{:>7}} {{:>17}} {{:>9}} {{:>21}} {{:>7}}"
        lines.append(fmt.format("agent", "opponent", "win", "95% CI", "reward", "95% CI", "deals"))
        for f, o, w, r, d in self._rows():
            lines.append(fmt.format(f, o, f"{w.mean:.3f}", f"[{w.lo:.3f}, {w.hi:.3f}]", f"{r.mean:+.2f}",
                                    f"[{r.lo:+.2f}, {r.hi:+.2f}]", d))
        lines += ["", "per agent (pooled over its matchups):"]
        fmt2 = f"{{:<{nw}}} {{:>7}} {{:>17}} {{:>9}} {{:>21}} {{:>7}}"
        lines.append(fmt2.format("agent", "win", "95% CI", "reward", "95% CI", "deals"))
        for a, s in self.summary().items():
            w, r = s["win"], s["reward"]
            lines.append(fmt2.format(a, f"{w.mean:.3f}", f"[{w.lo:.3f}, {w.hi:.3f}]", f"{r.mean:+.2f}",
                                     f"[{r.lo:+.2f}, {r.hi:+.2f}]", s["deals"]))
        matrix = self.matrix_lines(markdown=False)
        if matrix:
            lines += ["", "head-to-head win rate (row agent vs a table of column agents):"] + matrix
        lines += self.llm_lines()
        return "\n".join(lines)

    def llm_lines(self) -> list[str]:
        """The language-model section of the table: replies by category, fallbacks, the failed-reply rate
        with its interval over deals, tokens and cost (see llm_summary); [] where no agent made a call."""
        rows = [(m.focal, m.opponent, m.llm_json()) for m in self.matchups.values() if m.llm is not None]
        if not rows:
            return []
        nw = max([14] + [len(f) + 1 for f, _, _ in rows] + [len(o) + 1 for _, o, _ in rows])
        cols = ("decisions", "replies", *CATEGORIES, "random", "forfeit")
        fmt = f"{{:<{nw}}} {{:<{nw}}}" + " {:>9}" * len(cols) + " {:>7} {:>15} {:>10} {:>11}"
        lines = ["", "language-model agents (replies by category; failed = replies not ok over replies, "
                     "95% CI over deals; tokens in+out a decision; cost a hand):",
                 fmt.format("agent", "opponent", *cols, "failed", "95% CI", "tok/dec", "cost/hand")]
        for f, o, j in rows:
            r = j["illegal_reply_rate"]
            t = j["tokens_per_decision"]
            counts = [j["decisions"], j["replies"], *j["categories"].values(), *j["fallbacks"].values()]
            lines.append(fmt.format(f, o, *counts, f"{r['mean']:.3f}", f"[{r['lo']:.3f}, {r['hi']:.3f}]",
                                    f"{t['in'] + t['out']:.0f}", f"{j['cost_per_hand']:.5f}"))
        lines.append(f"calls made {self.calls}, replies from the cache {self.cached}")
        if self.stopped:
            lines.append(f"stopped early: {self.stopped}")
        return lines

    def matrix_lines(self, markdown: bool) -> list[str]:
        return matrix_lines(self.to_json(), markdown)

    def markdown(self) -> str:
        return report_markdown(self.to_json())


def matrix_lines(report: dict, markdown: bool) -> list[str]:
    """The head-to-head table of a report's JSON (`Report.to_json`): row agent's win rate against a
    table of the column agent."""
    cell = {(m["agent"], m["opponent"]): f"{m['win_rate']['mean']:.3f}" for m in report["matchups"]}
    names = [a for a in report["agents"] if any(a in k for k in cell)]
    if len(names) < 2:
        return []
    if markdown:
        out = ["| agent \\ opponent | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
        for a in names:
            out.append(f"| {a} | " + " | ".join(cell.get((a, b), "-") for b in names) + " |")
        return out
    w = max(12, max(len(x) for x in names) + 2)
    out = [" " * w + "".join(f"{b:>{w}}" for b in names)]
    for a in names:
        out.append(f"{a:<{w}}" + "".join(f"{cell.get((a, b), '-'):>{w}}" for b in names))
    return out


def report_markdown(report: dict) -> str:
    """A report's Markdown section from its JSON (`Report.to_json`), so a page can be written again from
    the JSON committed beside it (training/scripts/pages.py)."""
    n = report["num_players"]
    lines = [f"### {report['game']}", "",
             f"{n} players, config {report['config'] or 'default'}, {report['deals']} duplicate deals per matchup, "
             f"seed {report['seed']}. Fair share of wins: {report['fair_share']:.3f}. Intervals: 95%, normal over deals.",
             "",
             "| agent | opponent(s) | win rate | 95% CI | reward / hand | 95% CI | deals |",
             "|---|---|---|---|---|---|---|"]
    for m in report["matchups"]:
        w, r = m["win_rate"], m["reward"]
        lines.append(f"| {m['agent']} | {m['opponent']} | {w['mean']:.3f} | [{w['lo']:.3f}, {w['hi']:.3f}] | "
                     f"{r['mean']:+.2f} | [{r['lo']:+.2f}, {r['hi']:+.2f}] | {m['deals']} |")
    matrix = matrix_lines(report, markdown=True)
    if matrix:
        lines += ["", "Head-to-head win rate (row agent vs a table of column agents):", ""] + matrix
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ runs
@dataclass
class _Hand:
    """What one hand (deal d, focal agent in seat k) gave: every seat's win share and return, the language-model
    sums (LLM_SUMS) of the focal seat and of the others, and its replay line."""

    shares: np.ndarray
    totals: np.ndarray
    llm: np.ndarray
    ollm: np.ndarray
    line: str | None


def _build(spec: str, game, n: int, meter: CallMeter | None) -> list:
    agents = [make_agent(spec, game) for _ in range(n)]
    for a in agents:
        if meter is not None and hasattr(a, "meter"):
            a.meter = meter  # a language model's calls counted against --max-calls / --budget
    return agents


def _play_rotation(game, state, focal, opp, focal_spec: str, opp_spec: str, d: int, k: int, deals: int, seed: int,
                   matchup_index: int, keep_replays: bool) -> _Hand:
    """Deal d with the focal agent in seat k and copies of the opponent elsewhere."""
    n = game.num_players
    seats = [focal[j] if j == k else opp[j] for j in range(n)]
    base = ((matchup_index * deals + d) * n + k) * n
    agent_seeds = [mix_seed(seed ^ _AGENT_STREAM, base + j) for j in range(n)]
    recorder = None
    if keep_replays:
        specs = [focal_spec if j == k else opp_spec for j in range(n)]
        where = {"evaluation": {"seed": seed, "deal": d, "focal_seat": k}}
        recorder = Recorder(game, agents=specs, extra=where)
    infos: list = []
    engine_seed = mix_seed(seed, d)
    totals = play_hand(game, state, seats, engine_seed, agent_seeds, recorder=recorder, infos=infos)
    forfeit = [j for j, a in enumerate(seats) if getattr(a, "forfeited", False)]
    line = None
    if recorder is not None:
        if forfeit:
            recorder.extra["forfeit"] = forfeit  # scored as a loss for these seats (scored_shares)
        line = recorder.finish(state).to_line() + "\n"
    mine, others = np.zeros(len(LLM_SUMS)), np.zeros(len(LLM_SUMS))
    if infos:
        mine += _llm_sums([i for j, i in infos if j == k])
        others += _llm_sums([i for j, i in infos if j != k])
    mine[0] = others[0] = 1  # a hand played by each side
    return _Hand(scored_shares(totals, forfeit), totals, mine, others, line)


def run_matchup(game, focal_spec: str, opp_spec: str, deals: int, seed: int, matchup_index: int,
                progress=None, replay_file=None, first: int = 0, stop: int | None = None,
                concurrency: int = 1, meter: CallMeter | None = None) -> tuple[Matchup, Matchup | None]:
    """Duplicate-deal matchup focal vs copies of opp. With 2 players also returns opp's view.
    With `replay_file` (an open text file) every hand is appended to it as a replay line, with the
    agent spec of each seat, the deal index and the evaluation seed. `first`/`stop` play only deals
    first..stop-1 of the `deals` (a shard: every deal and agent seed depends on the deal's own index,
    so the shards of a matchup together give exactly the whole).

    concurrency: hands played at once in threads (a language model is waited on, not computed): the n
    rotations of a deal are independent hands, so N deals at once are N x n hands; each thread keeps agents
    of its own (every agent is reseeded before every hand). The results and replay lines are those of one
    hand at a time, in order. meter: counts language-model calls; when it stops the run (BudgetExhausted)
    the matchup keeps the deals finished before the first unfinished one and says so in its `stopped`."""
    n = game.num_players
    stop = deals if stop is None else stop
    keep = replay_file is not None
    t0 = time.perf_counter()
    jobs = [(d, k) for d in range(first, stop) for k in range(n)]
    hands: list[_Hand] = []
    stopped = None

    def write_finished_deal() -> None:
        """A deal's replay lines as soon as its last rotation is in (in deal order, whole deals only), so a run
        stopped by Ctrl-C, --max-calls or --budget keeps every deal finished before it."""
        if replay_file is not None and len(hands) % n == 0:
            replay_file.writelines(h.line for h in hands[-n:])
            replay_file.flush()

    if concurrency <= 1:
        focal, opp = _build(focal_spec, game, n, meter), _build(opp_spec, game, n, meter)
        state = game.new_state()
        for d, k in jobs:
            try:
                hands.append(_play_rotation(game, state, focal, opp, focal_spec, opp_spec, d, k, deals, seed,
                                            matchup_index, keep))
            except BudgetExhausted as why:
                stopped = str(why)
                break
            write_finished_deal()
            if progress is not None:
                progress.update(1)
    else:
        import threading
        from concurrent.futures import ThreadPoolExecutor

        local = threading.local()

        def one(d: int, k: int) -> _Hand:
            if not hasattr(local, "focal"):
                local.focal, local.opp = _build(focal_spec, game, n, meter), _build(opp_spec, game, n, meter)
                local.state = game.new_state()
            hand = _play_rotation(game, local.state, local.focal, local.opp, focal_spec, opp_spec, d, k, deals, seed,
                                  matchup_index, keep)
            if progress is not None:
                progress.update(1)
            return hand

        with ThreadPoolExecutor(max_workers=concurrency * n, thread_name_prefix="hand") as pool:
            futures = [pool.submit(one, d, k) for d, k in jobs]
            for fut in futures:
                if stopped is not None:
                    fut.cancel()
                    continue
                try:
                    hands.append(fut.result())
                except BudgetExhausted as why:
                    stopped = str(why)
                    continue
                write_finished_deal()
    kept = len(hands) // n  # whole deals only
    hands = hands[:kept * n]
    secs = time.perf_counter() - t0

    def side(seat_of_hand, llm_of) -> tuple[np.ndarray, np.ndarray, dict | None]:
        win, rew, llm = np.zeros(kept), np.zeros(kept), np.zeros((kept, len(LLM_SUMS)))
        for i, h in enumerate(hands):
            d, k = divmod(i, n)
            win[d] += h.shares[seat_of_hand(k)] / n
            rew[d] += h.totals[seat_of_hand(k)] / n
            llm[d] += llm_of(h)
        sums = {key: llm[:, j] for j, key in enumerate(LLM_SUMS)} if llm[:, 1].any() else None
        return win, rew, sums

    w, r, sums = side(lambda k: k, lambda h: h.llm)
    mine = Matchup(focal_spec, opp_spec, w, r, secs, sums, stopped)
    theirs = None
    if n == 2:
        w, r, sums = side(lambda k: 1 - k, lambda h: h.ollm)
        theirs = Matchup(opp_spec, focal_spec, w, r, secs, sums, stopped)
    return mine, theirs


def evaluate(game_name: str, agents: list[str], deals: int, seed: int = 0, config: dict | None = None,
             pairs: list[tuple[str, str]] | None = None, progress: bool | None = None,
             replay_path: str | None = None, workers: int = 1, address: str | None = None,
             imports: list[str] | None = None, concurrency: int = 1, max_calls: int | None = None,
             budget: float | None = None) -> Report:
    """Run duplicate-deal matchups and return a Report (see module doc).

    replay_path: append every hand played to this file as a replay line (domino_envs/replay.py), but for the
    hands of this evaluation the file holds already (a rerun of a stopped run adds only what it lacks).

    workers: processes that play the deals (1: this process). With more, each matchup's deals are
    cut into shards played in worker processes (one torch and one BLAS thread each); agents travel
    as their specs and are built in the worker. The report and the replay file are identical for
    every number of workers (replays are written in deal order); the report's `shard_workers` says where
    each shard ran (training/parallel.py's WorkerInfo: process, threads, Ray node and task).

    address: run the shards as Ray tasks on the cluster there ("auto" or HOST:PORT; training/parallel.py
    says what each node needs), about four shards per worker.

    pairs: (focal, opponent) agent specs to play; default every ordered pair of `agents` (with 2
    players each unordered pair is played once and read both ways).

    imports: modules or .py files (`domino evaluate --import`) that register agents: each worker
    imports them before building its agents; this process must have imported them already.

    concurrency: deals of a matchup played at once in threads (for language models, which are waited on);
    the report and replays are those of concurrency 1.

    max_calls / budget: stop before the language-model call past `max_calls` calls or `budget` spent (in the
    agents' price units); the report keeps every deal finished before that (`stopped` says why), the replay
    file those deals' hands. Run the same command again with an agent's cache=FILE to go on: the calls
    already made come from the cache at no cost, and a larger limit plays further.
    """
    config = dict(config or {})
    if game_name not in game_names():
        raise ValueError(f"unknown game {game_name!r}; registered games: {game_names()}")
    if isinstance(deals, bool) or not isinstance(deals, (int, np.integer)) or deals < 1:
        raise ValueError(f"deals={deals!r} must be a positive integer")
    check_workers(workers)
    check_address(address)
    if isinstance(concurrency, bool) or not isinstance(concurrency, (int, np.integer)) or concurrency < 1:
        raise ValueError(f"concurrency={concurrency!r} must be a positive integer")
    if max_calls is not None and (isinstance(max_calls, bool) or not isinstance(max_calls, (int, np.integer))
                                  or max_calls < 0):
        raise ValueError(f"max_calls={max_calls!r} must be a whole number >= 0")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float)) or not budget >= 0):
        raise ValueError(f"budget={budget!r} must be a number >= 0 (in the agents' price units)")
    if (max_calls is not None or budget is not None) and (workers > 1 or address is not None):
        raise ValueError("--max-calls and --budget count the calls of this process: use them without --workers "
                         "or --address (--concurrency plays deals at once in threads)")
    if len(agents) != len(set(agents)):
        raise ValueError(f"agents {agents} name the same spec twice; give each agent spec once")
    game = make_game(game_name, **config)
    for spec in agents:
        make_agent(spec, game)  # fail fast on a bad spec, before any hand is played
    if pairs is None:
        pairs = [(a, b) for i, a in enumerate(agents) for b in agents[i + 1:]]
        if game.num_players > 2:
            pairs += [(b, a) for a, b in pairs]
    else:
        for f, o in pairs:
            for x in (f, o):
                if x not in agents:
                    raise ValueError(f"pair ({f!r}, {o!r}): {x!r} is not one of the agents {agents}")
            if f == o:
                raise ValueError(f"pair ({f!r}, {o!r}) pits an agent against itself; pick two different agents")
    n = game.num_players
    report = Report(game_name, config, n, int(deals), int(seed), list(agents))
    total = len(pairs) * deals * n
    bar = None
    if progress is None:
        progress = total > PROGRESS_MIN_HANDS and sys.stderr.isatty()
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, unit="hand", desc=f"{game_name}", file=sys.stderr, leave=False)
    if replay_path is not None:
        Path(replay_path).parent.mkdir(parents=True, exist_ok=True)
    replay_file = None if replay_path is None else _NewHands(replay_path)
    meter = CallMeter(max_calls, budget)
    try:
        if workers > 1 or address is not None:
            _run_sharded(report, game_name, config, pairs, workers, bar, replay_file, address, imports)
        for i, (f, o) in enumerate(pairs):
            if (f, o) in report.matchups:
                continue
            mine, theirs = run_matchup(game, f, o, deals, seed, i, bar, replay_file, concurrency=concurrency,
                                       meter=meter)
            report.matchups[(f, o)] = mine
            if theirs is not None and (o, f) not in report.matchups:
                report.matchups[(o, f)] = theirs
            if mine.stopped:
                report.stopped = (f"{mine.stopped}: {f} vs {o} kept {mine.win.size} of {deals} deals; the matchups "
                                  f"after it were not played")
                break
        report.calls, report.cached = meter.calls, meter.cached
    finally:
        if bar is not None:
            bar.close()
        if replay_file is not None:
            replay_file.close()
    return report


# ------------------------------------------------------------------------------ workers (training/parallel.py)
def shard_bounds(deals: int, workers: int) -> list[tuple[int, int]]:
    """Contiguous deal ranges, about four per worker (so a slow shard does not hold the rest back)."""
    pieces = min(deals, 4 * workers)
    edges = [deals * j // pieces for j in range(pieces + 1)]
    return [(a, b) for a, b in zip(edges, edges[1:]) if b > a]


def _hand_key(obj: dict) -> tuple | None:
    """What names an evaluation's hand in a replay line: game, config, agents, evaluation seed, deal, focal seat
    (None for a line no evaluation wrote)."""
    where = obj.get("evaluation")
    if not isinstance(where, dict):
        return None
    return (obj.get("game"), json.dumps(obj.get("config"), sort_keys=True), tuple(obj.get("agents") or ()),
            where.get("seed"), where.get("deal"), where.get("focal_seat"))


class _NewHands:
    """The --save-replays file, appended to with the hands it does not hold yet: a rerun of a stopped run
    (--max-calls, --budget, Ctrl-C) adds the hands it lacks instead of writing the kept ones twice."""

    def __init__(self, path):
        self._seen = set()
        if Path(path).is_file():
            with open(path, encoding="utf-8") as fh:
                for text in fh:
                    try:
                        key = _hand_key(json.loads(text))
                    except (json.JSONDecodeError, AttributeError):
                        continue
                    if key is not None:
                        self._seen.add(key)
        self._fh = open(path, "a", encoding="utf-8")

    def write(self, text: str) -> None:
        key = _hand_key(json.loads(text))
        if key is None or key not in self._seen:
            self._fh.write(text)
            if key is not None:
                self._seen.add(key)

    def writelines(self, lines) -> None:
        for text in lines:
            self.write(text)

    def flush(self) -> None:
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


class _Lines:
    """A file-like sink that keeps the replay lines a shard writes, for the parent to write in order."""

    def __init__(self):
        self.lines: list[str] = []

    def write(self, text: str) -> None:
        self.lines.append(text)

    def writelines(self, lines) -> None:
        self.lines.extend(lines)

    def flush(self) -> None:
        """Nothing to flush: the parent writes the lines."""


def _play_shard(game_name: str, config: dict, f: str, o: str, deals: int, seed: int, index: int, first: int,
                stop: int, keep_replays: bool) -> tuple:
    """One shard in a worker: build the game and the agents from their specs, play the deal range."""
    game = make_game(game_name, **config)
    sink = _Lines() if keep_replays else None
    mine, theirs = run_matchup(game, f, o, deals, seed, index, None, sink, first, stop)
    return mine, theirs, (sink.lines if sink else [])


def _run_sharded(report: Report, game_name: str, config: dict, pairs: list[tuple[str, str]], workers: int,
                 bar, replay_file, address: str | None = None, imports: list[str] | None = None) -> None:
    """Play every matchup of `pairs` in shards over `workers` processes (or the Ray cluster at
    `address`), each importing `imports` first, and put the joined matchups into the report (the
    serial loop then finds them all there)."""
    n, deals, seed = report.num_players, report.deals, report.seed
    jobs, covered = [], set()
    for i, (f, o) in enumerate(pairs):
        if (f, o) in covered:
            continue
        covered.add((f, o))
        if n == 2:
            covered.add((o, f))
        jobs += [(game_name, config, f, o, deals, seed, i, a, b, replay_file is not None)
                 for a, b in shard_bounds(deals, workers)]
    done: dict[int, tuple] = {}
    where: dict[int, WorkerInfo] = {}

    def describe(j: int) -> str:
        _, _, f, o, _, _, _, a, b, _ = jobs[j]
        return f"the shard playing {f} vs {o}, deals {a}-{b - 1},"

    init = import_all if imports else None
    for j, result in run_jobs(_play_shard, jobs, workers, address, init, (list(imports or []),), describe=describe,
                              witness=where):
        done[j] = result
        if bar is not None:
            bar.update((jobs[j][8] - jobs[j][7]) * n)
    report.shard_workers = [where[j] for j in range(len(jobs))]
    by_pair: dict[tuple[str, str], list[int]] = {}
    for j, job in enumerate(jobs):
        by_pair.setdefault((job[2], job[3]), []).append(j)
    for (f, o), js in by_pair.items():
        shards = [done[j] for j in sorted(js, key=lambda j: jobs[j][7])]
        for _, _, lines in shards:
            if replay_file is not None:
                replay_file.writelines(lines)
        report.matchups[(f, o)] = _joined([s[0] for s in shards])
        if n == 2 and (o, f) not in report.matchups:
            report.matchups[(o, f)] = _joined([s[1] for s in shards])


def _joined(parts: list[Matchup]) -> Matchup:
    """A matchup from its shards, in deal order (seconds: the sum of the shards' playing time)."""
    llm = None
    if any(m.llm is not None for m in parts):
        llm = {k: np.concatenate([m.llm[k] if m.llm else np.zeros(m.win.size) for m in parts])
               for k in LLM_SUMS}
    return Matchup(parts[0].focal, parts[0].opponent, np.concatenate([m.win for m in parts]),
                   np.concatenate([m.reward for m in parts]), float(sum(m.seconds for m in parts)), llm)


# ------------------------------------------------------------------------------ CLI
class _OneLineErrors(argparse.ArgumentParser):
    """argparse that reports a bad argument in one line (no usage dump), exit status 2."""

    def error(self, message):
        _fail(message)


def _fail(message: str):
    print(f"domino evaluate: error: {message} (see domino evaluate --help)", file=sys.stderr)
    raise SystemExit(2)


EXAMPLES = """examples:
  domino evaluate --game block_v0 --agents trained heuristic pimc:n=64,rollout=random --deals 500 --workers 2
  domino evaluate --game sum7_v0 --set num_players=3 --agents heuristic greedy --json sum7.json
"""  # shown by --help; tests/fronts/test_command_help.py parses them


def build_parser() -> argparse.ArgumentParser:
    p = _OneLineErrors(
        epilog=EXAMPLES, formatter_class=HelpFormatter,
        prog="domino evaluate",
        description="Pit agents on duplicate deals (same seeded deals, seats rotated) and report win rates "
                    "and mean rewards with 95% intervals.")
    p.add_argument("--game", default="draw_v0", help=f"one of {game_names()}")
    p.add_argument("--agents", nargs="+", default=["random", "greedy", "heuristic"],
                   help=f"agent specs NAME[:key=value,...], NAME in {agent_names()} or one that --import registers")
    p.add_argument("--pairs", nargs="+", default=None, metavar="FOCAL@OPPONENT",
                   help="matchups to play, each two specs of --agents joined by @ (or /, or : where neither spec "
                        "has a colon of its own) (default: every pair)")
    p.add_argument("--deals", type=int, default=200, help="duplicate deals per matchup")
    add_seed(p, "the deals")
    add_set(p)
    p.add_argument("--config", nargs="*", default=[], metavar="KEY=VALUE", help=argparse.SUPPRESS)  # before --set
    p.add_argument("--markdown", default=None, metavar="FILE", help="also write the Markdown table here")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the JSON report here")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_workers(p, "play the deals")
    add_address(p, "play the shards (--workers x 4 a matchup)")
    p.add_argument("--save-replays", default=None, metavar="FILE",
                   help="append every hand played to FILE as a replay line (see `domino replay`); hands of this "
                        "evaluation FILE holds already are not written again, so a rerun of a stopped run completes it")
    p.add_argument("--concurrency", type=int, default=1, metavar="N",
                   help="deals played at once in threads (language models are waited on); the report is the same")
    p.add_argument("--max-calls", type=int, default=None, metavar="N",
                   help="stop before the language-model call past N, keeping the deals finished (rerun to go on)")
    p.add_argument("--budget", type=float, default=None, metavar="COST",
                   help="stop once the language models' cost (their price_in/price_out) reaches COST")
    add_import(p)
    return p


def _parse_pair(text: str, agents: list[str]) -> tuple[str, str]:
    for sep in ("@", "/"):
        if sep in text:
            f, o = text.split(sep, 1)
            return f, o
    # agent specs may contain ':' themselves; accept 'a:b' when both halves are agent specs
    for i, ch in enumerate(text):
        if ch == ":" and text[:i] in agents and text[i + 1:] in agents:
            return text[:i], text[i + 1:]
    raise ValueError(f"--pairs {text!r}: write FOCAL@OPPONENT (or FOCAL:OPPONENT) with both in --agents {agents}")


def main(argv: list[str] | None = None) -> Report:
    """`domino evaluate`: a user's bad --game, --agents, --deals, --pairs, --config or --import is one
    line on stderr and exit status 2 (argument errors are ValueErrors, DominoErrors among them), no traceback;
    Ctrl-C is one line saying what was kept, exit status 130."""
    args = build_parser().parse_args(argv)
    try:
        import_all(args.imports)
        if args.config:
            print("domino evaluate: note: --config KEY=VALUE ... is now --set KEY=VALUE (once per key)", file=sys.stderr)
        config = config_from_pairs(args.config + args.set, "--set")
        for spec in args.agents:
            parse_spec(spec)
        pairs = None if args.pairs is None else [_parse_pair(t, args.agents) for t in args.pairs]
        report = evaluate(args.game, args.agents, args.deals, args.seed, config, pairs,
                          progress=False if args.no_progress else None, replay_path=args.save_replays,
                          workers=args.workers, address=args.address, imports=args.imports,
                          concurrency=args.concurrency, max_calls=args.max_calls, budget=args.budget)
    except (ValueError, OSError) as err:
        _fail(str(err))
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback; an evaluation keeps no partial table to resume
        kept = (f"; {args.save_replays} keeps the hands played so far, and a rerun adds the hands it lacks"
                if args.save_replays and Path(args.save_replays).is_file() else "")
        print(f"domino evaluate: interrupted: no table written, nothing to resume (run the command again){kept}",
              file=sys.stderr)
        raise SystemExit(130) from None
    print(report.table())
    if report.stopped:
        print(f"domino evaluate: stopped early: {report.stopped}; the table and files keep the deals finished; "
              f"run again with a larger limit (and the agent's cache=FILE) to go on", file=sys.stderr)
    if report.shard_workers:  # where the shards ran, so a run says it was parallel (tests read it)
        print(f"domino evaluate: {ran_in(report.shard_workers, 'shards')}", file=sys.stderr)
    for out in (args.markdown, args.json):
        if out:
            Path(out).parent.mkdir(parents=True, exist_ok=True)  # the folder the flag names, made if new
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(report.markdown())
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report.to_json(), fh, indent=2)
    return report


if __name__ == "__main__":
    main()
