"""Our agents against OpenSpiel's ISMCTS on our OpenSpiel game: `python -m domino_training.scripts.ismcts`.

    python -m domino_training.scripts.ismcts block_v0 --deals 1000 --sims 200 --workers 2   # trained vs ISMCTS-200
    python -m domino_training.scripts.ismcts block_v0 --deals 20                            # a pilot (its own row)

Each deal is played once with the agent in each seat (duplicate deals) through domino_envs.openspiel: the
chance nodes take the deal the engine deals from the deal's seed, and OpenSpiel's own `ISMCTSBot` plays every
other seat (UCT constant 2, `--sims` simulations a decision, one random rollout a leaf, the most visited
action, unlimited worlds drawn by our `resample`, seeded from the deal). The agent sees what the PettingZoo env shows
its seat (the seat's observation and legal actions). A deal's value is the agent's win share (ties shared,
domino_envs.outcome) averaged over its seatings; the interval is over deals. The deals land in
docs/ismcts.json a chunk (`--chunk` deals) at a time, so a run cut short goes on where it was when the same
command runs again; the page, docs/ismcts.md, is rendered from that file.

Our `resample_from_infostate` rebuilds a history only where no tile has been drawn (domino_envs.openspiel
`resample`): the Block Game, which is what issue 60 asks of this script (Block's shipped policy above
ISMCTS-200). Other games are refused before any deal is played.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from domino_envs import DominoError, openspiel
from domino_envs.outcome import win_shares
from domino_training.benchmark.report import hardware_line
from domino_training.commands import add_seed, add_workers
from domino_training.parallel import run_jobs
from domino_training.scripts import DOCS
from domino_training.stats import Stat

PROG = "python -m domino_training.scripts.ismcts"
DATA = "ismcts.json"
GAMES = ("block_v0",)  # where `resample` rebuilds every history (module doc)
UCT_C = 2.0


def opponent_name(sims: int) -> str:
    return f"OpenSpiel ISMCTS-{sims} (UCT c={UCT_C:g}, random rollouts)"


def deal_seed(seed: int, index: int) -> int:
    """Deal `index`'s seed: the same deal whatever the chunks and workers."""
    return int(np.random.SeedSequence([seed, index]).generate_state(1, np.uint64)[0] >> np.uint64(1))


def play_deals(game_name: str, agent_spec: str, sims: int, seed: int, indices: list[int]) -> list[list]:
    """[index, the agent's win share in seat 0, in seat 1, ...] for each deal index (a job)."""
    from open_spiel.python.algorithms import ismcts, mcts

    from domino_agents.registry import make_agent

    game = openspiel.load_game(game_name)
    engine = game.engine
    rows = []
    for index in indices:
        s = deal_seed(seed, index)
        row = engine.new_state()
        engine.reset(row, s)
        outcome = openspiel.deal_outcomes(game.spec, engine.deal_of(row))
        shares = []
        for agent_seat in range(engine.num_players):
            bot_rng = np.random.RandomState((s + agent_seat) % 2**32)
            bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, bot_rng), UCT_C, sims, random_state=bot_rng)
            worlds = np.random.default_rng([s, agent_seat])  # its worlds seeded too (OpenSpiel's sampler is not)
            bot.set_resampler(lambda st, player, worlds=worlds: openspiel.resample(st, player, worlds))
            agent = make_agent(agent_spec, engine, seed=(s + agent_seat) % 2**63)
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(outcome(state.node))
                elif state.current_player() == agent_seat:
                    node = state.node
                    mask = np.zeros(engine.num_actions, dtype=np.int8)
                    mask[node.legal_actions()] = 1
                    if getattr(agent, "searches", False):
                        agent.observe_state(node.rows[0].copy(), agent_seat, [float(x) for x in node.returns])
                    state.apply_action(int(agent.act(node.obs[agent_seat], mask)))
                else:
                    state.apply_action(int(bot.step(state)))
            shares.append(float(win_shares(state.returns())[agent_seat]))
        rows.append([index, *shares])
    return rows


def _run_key(r: dict) -> tuple:
    return r["game"], r["agent"], r["sims"], r["seed"]


def summary(run: dict) -> Stat:
    """The agent's win share over the run's deals (each deal: the mean over its seatings)."""
    return Stat.of([float(np.mean(d[1:])) for d in run["deals"]], clip=(0.0, 1.0))


def page(data: dict) -> str:
    """docs/ismcts.md from docs/ismcts.json."""
    lines = ["# Against OpenSpiel's ISMCTS", "",
             "Our agents against OpenSpiel's own information-set MCTS (`open_spiel.python.algorithms.ismcts`, "
             f"UCT constant {UCT_C:g}, one random rollout a leaf, the most visited action) on our OpenSpiel game "
             "(domino_envs.openspiel, whose `resample_from_infostate` gives the bot its worlds), each deal played "
             "with the agent in every seat. Win share (ties shared) with its 95% interval over deals; the fair "
             f"share is 0.5. Measured by the command in each row (from a checkout), which goes on where a run "
             "stopped.", "",
             "| game | agent | opponent | deals | win share [95%] | above the fair share | hours | command |",
             "|---|---|---|---|---|---|---|---|"]
    for run in data["runs"]:
        st = summary(run)
        command = (f"`{PROG} {run['game']} --agent {run['agent']} --sims {run['sims']} --deals {run['asked']} "
                   f"--seed {run['seed']}`")
        lines.append(f"| {run['game']} | `{run['agent']}` | {opponent_name(run['sims'])} | {len(run['deals']):,} | "
                     f"{st.mean:.3f} [{st.lo:.3f}, {st.hi:.3f}] | {'yes' if st.lo > 0.5 else 'no'} | "
                     f"{run['seconds'] / 3600:.2f} | {command} |")
    hardware = sorted({run["hardware"] for run in data["runs"]})
    lines += ["", "Hours: the wall clock of the chunks kept (a chunk cut short counts nothing), on " + "; ".join(hardware) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    p.add_argument("game", choices=GAMES, help="the game (where our resampling rebuilds every history)")
    p.add_argument("--agent", default="trained", help="our agent's spec (default: the shipped policy)")
    p.add_argument("--sims", type=int, default=200, help="ISMCTS simulations a decision (default 200)")
    p.add_argument("--deals", type=int, default=1000, help="duplicate deals in all, those kept counted (default 1000)")
    p.add_argument("--chunk", type=int, default=25, help="deals a job, written as each job ends (default 25)")
    add_seed(p, "the deals", default=60)
    add_workers(p, "play the chunks")
    args = p.parse_args(argv)
    for flag in ("sims", "deals", "chunk"):
        if getattr(args, flag) < 1:
            p.error(f"--{flag} must be at least 1; got {getattr(args, flag)}")
    try:
        from domino_agents.registry import make_agent
        from domino_envs import make_game

        make_agent(args.agent, make_game(args.game))  # a bad spec fails here, before any deal
    except (ValueError, DominoError) as err:
        p.error(f"--agent {args.agent!r}: {err}")
    path = DOCS / DATA
    data = json.loads(path.read_text()) if path.is_file() else {"runs": []}
    key = (args.game, args.agent, args.sims, args.seed)
    run = next((r for r in data["runs"] if _run_key(r) == key), None)
    if run is None:
        run = {"game": args.game, "agent": args.agent, "sims": args.sims, "seed": args.seed, "asked": args.deals,
               "deals": [], "seconds": 0.0, "hardware": hardware_line()}
        data["runs"].append(run)
    run["asked"] = max(args.deals, len(run["deals"]))  # the deals the row's command plays
    done = {d[0] for d in run["deals"]}
    todo = [i for i in range(args.deals) if i not in done]
    chunks = [todo[k:k + args.chunk] for k in range(0, len(todo), args.chunk)]
    print(f"{args.game}: {len(done)} deals kept, {len(todo)} to play in {len(chunks)} chunks", file=sys.stderr)
    t0 = time.perf_counter()
    try:
        for _i, rows in run_jobs(play_deals, [(args.game, args.agent, args.sims, args.seed, c) for c in chunks],
                                 args.workers, describe=lambda i: f"deals {chunks[i][0]}-{chunks[i][-1]}"):
            run["deals"] = sorted(run["deals"] + rows)
            run["seconds"] = round(run["seconds"] + time.perf_counter() - t0, 1)
            t0 = time.perf_counter()
            path.write_text(json.dumps(data, indent=1))
            (DOCS / "ismcts.md").write_text(page(data))
            st = summary(run)
            print(f"{len(run['deals'])} deals: {st.mean:.3f} [{st.lo:.3f}, {st.hi:.3f}]", file=sys.stderr)
    except ValueError as err:  # a chunk that failed in its worker (JobError): one line
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    print(page(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
