"""The policy-guided search page: `python -m domino_training.scripts.search`, writes docs/search.md (+ .json).

    python -m domino_training.scripts.search draw_v0 --deals 2000 --workers 2   # one game's row (the rest kept)
    python -m domino_training.scripts.search --costs                            # the cost table only

`pimc:n=64,rollout=policy,policy=trained` (PIMC whose rollouts the shipped policy plays) against a table
of `pimc:n=64,rollout=random` on duplicate deals, one row per game, with the shipped policy's env steps
recorded in the row (tests/docs/test_pages.py checks that every row used the policy shipped now). Seven-
Toed Pete's row plays its rollouts at `temperature=3` (a 300-deal screen chose it: SCREENS below). The
costs are each agent's seconds a decision measured as the ladder measures them (`decision_seconds`: hands
against random in this process alone). The page is rendered from docs/search.json by `page`.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import domino_envs
from domino_agents.trained import load_policy, shipped_path
from domino_envs.registry import game_names
from domino_training.benchmark.ratings import decision_seconds
from domino_training.benchmark.report import hardware_line
from domino_training.commands import add_seed, add_workers
from domino_training.evaluate import evaluate
from domino_training.scripts import DOCS

PROG = "python -m domino_training.scripts.search"
PIMC = "pimc:n=64,rollout=random"
GUIDED = "pimc:n=64,rollout=policy,policy=trained"
TEMPERATURE = {"seven_toed_pete_v0": 3}  # the rollouts' softmax temperature where 1 loses to PIMC-64
COST_HANDS = 10  # the ladder's


def guided_spec(game: str) -> str:
    t = TEMPERATURE.get(game)
    return GUIDED if t is None else f"{GUIDED},temperature={t}"


def shipped_env_steps(game: str) -> int:
    return int(load_policy(shipped_path(game))[1]["env_steps"])


def measure(game: str, deals: int, seed: int, workers: int) -> dict:
    """The game's row: the guided search against a table of PIMC-64, with the policy it used."""
    spec = guided_spec(game)
    t0 = time.perf_counter()
    report = evaluate(game, [spec, PIMC], deals, seed, pairs=[(spec, PIMC)], workers=workers,
                      progress=sys.stderr.isatty())
    m = report.matchups[(spec, PIMC)]
    return {"game": game, "agent": spec, "policy_env_steps": shipped_env_steps(game), "deals": deals, "seed": seed,
            "fair_share": report.fair_share, "win": m.win_stat.as_dict(), "reward": m.reward_stat.as_dict(),
            "minutes": round((time.perf_counter() - t0) / 60, 1), "workers": workers, "hardware": hardware_line()}


def costs(game: str, hands: int = COST_HANDS) -> dict[str, float]:
    """Seconds a decision of PIMC-64, the guided search and the shipped policy, the ladder's way."""
    return {spec: decision_seconds(game, spec, hands=hands)["seconds"] for spec in (PIMC, guided_spec(game), "trained")}


def _interval(s: dict, signed: bool = False) -> str:
    f = "+.2f" if signed else ".3f"
    return f"{s['mean']:{f}} [{s['lo']:{f}}, {s['hi']:{f}}]"


def _beats(row: dict) -> bool:
    return row["win"]["lo"] > row["fair_share"]


def _steps(n: int) -> str:
    return f"{n / 1e6:.1f}M"


def page(data: dict) -> str:
    """docs/search.md from docs/search.json."""
    rows, earlier, screens, cost = data["rows"], data["earlier"], data["screens"], data["costs"]
    order = [g for g in game_names() if any(r["game"] == g for r in rows)]
    by_game = {r["game"]: r for r in rows}
    beats = [g for g in order if _beats(by_game[g])]
    level = [g for g in order if not _beats(by_game[g]) and by_game[g]["win"]["hi"] >= by_game[g]["fair_share"]]
    below = [g for g in order if g not in beats and g not in level]
    seeds = sorted({r["seed"] for r in rows})
    lines = [
        "# Policy-guided search", "",
        f"`{GUIDED}` is PIMC (agents/pimc.py) whose rollouts are played by a trained actor instead of random moves: "
        "every seat of every rollout draws its moves from the actor's masked softmax (`policy=trained` is the policy "
        "shipped for the game, `policy=PATH` any `ppo` policy file; `temperature=T` divides its logits by T). All 64 x "
        "(legal actions) rollouts of a decision advance in lockstep, one compiled step call and one numpy forward pass "
        "of the actor a step, with common random numbers per sample as in plain PIMC.", "",
        "This page is generated from [search.json](search.json) by "
        f"`{PROG}` (training/scripts/search.py, from a checkout), which measured it.", "",
        "## Against plain PIMC-64", "",
        f"The search with the shipped policy against a table of `{PIMC}` on duplicate deals (seats rotated), win share "
        "(ties shared) and reward per hand with their 95% intervals; the fair share is 0.5 with 2 players, 0.25 with 4. "
        "*Policy* is the env steps of the shipped policy the rollouts used (every row uses the file shipped now). "
        "Minutes: the evaluation's wall clock with its workers, as run.", "",
        "| game | agent | policy | deals (seed) | win share | reward per hand | minutes (workers) |",
        "|---|---|---|---|---|---|---|"]
    for g in order:
        r = by_game[g]
        win = _interval(r["win"])
        lines.append(f"| {g} | `{r['agent']}` | {_steps(r['policy_env_steps'])} | {r['deals']:,} ({r['seed']}) | "
                     f"{f'**{win}**' if _beats(r) else win} | {_interval(r['reward'], True)} | "
                     f"{r['minutes'] if r['minutes'] is not None else '-'} ({r['workers']}) |")
    said = [f"above the fair share in {len(beats)} of {len(order)} games ({', '.join(beats) or 'none'})"]
    if level:
        said.append(f"level with it in {', '.join(level)} (the interval holds the fair share)")
    if below:
        said.append(f"below it in {', '.join(below)}")
    lines += ["", "In bold, an interval above the fair share: the search is " + "; ".join(said) + ".", "",
              "```bash",
              f"{PROG} draw_v0 --deals 2000 --seed {seeds[0]} --workers 2   # from a checkout: one row again",
              f"domino evaluate --game draw_v0 --agents {GUIDED} {PIMC} --pairs {GUIDED}@{PIMC} --deals 2000 "
              f"--seed {seeds[0]}",
              "```", ""]
    if screens:
        lines += ["## Choosing Seven-Toed Pete's temperature", "",
                  "With the actor's own softmax the search's rollouts judged Pete's moves worse than uniform random "
                  "rollouts; a temperature moves the rollouts between the actor (1) and uniform random play (large). "
                  "Screens on other deals than the table's, with the policy shipped now:", "",
                  "| game | agent | policy | deals (seed) | win share |", "|---|---|---|---|---|"]
        for r in screens:
            lines.append(f"| {r['game']} | `{r['agent']}` | {_steps(r['policy_env_steps'])} | {r['deals']:,} "
                         f"({r['seed']}) | {_interval(r['win'])} |")
        lines.append("")
    if earlier:
        lines += ["## With earlier policies", "",
                  "Rows measured before a game's later training stages were shipped (kept for the record; the table "
                  "above supersedes them). The policy column is the env steps of the policy used then.", "",
                  "| game | agent | policy | deals (seed) | win share | reward per hand |", "|---|---|---|---|---|---|"]
        for r in earlier:
            lines.append(f"| {r['game']} | `{r['agent']}` | {_steps(r['policy_env_steps'])} | {r['deals']:,} "
                         f"({r['seed']}) | {_interval(r['win'])} | {_interval(r['reward'], True)} |")
        lines.append("")
    if cost is None:
        return "\n".join(lines + ["## What it costs", "", f"Not measured yet: `{PROG} --costs` (from a checkout) on an idle machine.", ""])
    games = [g for g in game_names() if g in cost["games"]]
    ratio = [cost["games"][g][guided_spec(g)] / cost["games"][g][PIMC] for g in games]
    lines += ["## What it costs", "",
              f"Milliseconds a decision, measured as the [ladder](ladder.md) measures its agents: {cost['hands']} hands "
              "against random in one process after an untimed hand, the agent's own decisions timed "
              f"(`{PROG} --costs`, from a checkout; {cost['hardware']}, {cost['load']}).", "",
              f"| game | `{PIMC}` | the guided search | `trained` |", "|---|---|---|---|"]
    for g in games:
        c = cost["games"][g]
        lines.append(f"| {g} | {c[PIMC] * 1e3:.1f} | {c[guided_spec(g)] * 1e3:.1f} (`{guided_spec(g)}`) | "
                     f"{c['trained'] * 1e3:.2f} |")
    lines += ["", f"The policy's rollouts cost {min(ratio):.1f}-{max(ratio):.1f}x the random ones a decision: nearly "
              "all of it is the actor's forward pass. Keep BLAS to one thread (`OPENBLAS_NUM_THREADS=1`) when other "
              "work shares the cores; `--workers N` gives each worker one.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("games", nargs="*", metavar="GAME", help="games whose row to measure (default none: with "
                                                              "--costs only the costs)")
    ap.add_argument("--deals", type=int, default=2000, help="duplicate deals a row (default 2000)")
    add_seed(ap, "the deals", default=24024, note="every row's")
    add_workers(ap, "play")
    ap.add_argument("--costs", action="store_true", help="measure every game's costs a decision again")
    ap.add_argument("--load", default="idle machine", help="what else ran beside the cost measurement, for the page")
    ap.add_argument("--out-page", default=str(DOCS / "search.md"), help="the page (its .json beside it)")
    args = ap.parse_args(argv)
    unknown = [g for g in args.games if g not in game_names()]
    if unknown:
        ap.error(f"unknown game(s) {unknown}: one of {game_names()}")
    out_page = Path(args.out_page)
    out_json = out_page.with_suffix(".json")
    data = json.loads(out_json.read_text())

    def write():
        out_json.write_text(json.dumps(data, indent=1) + "\n")
        out_page.write_text(page(data))

    for g in args.games:
        row = measure(g, args.deals, args.seed, args.workers)
        data["rows"] = [r for r in data["rows"] if r["game"] != g] + [row]
        write()
        print(f"{g}: {_interval(row['win'])} in {row['minutes']} min; wrote {out_page}")
    if args.costs:
        data["costs"] = {"hands": COST_HANDS, "hardware": hardware_line(), "load": args.load,
                         "games": {g: costs(g) for g in domino_envs.game_names()}}
        write()
        print(f"costs: wrote {out_page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
