"""The strength ladder (issue 46): `python -m domino_training.scripts.ladder`, writes docs/ladder.md (+ .json).

    python -m domino_training.scripts.ladder --deals N --workers 2            # every env; resumable
    python -m domino_training.scripts.ladder block_v0 --deals N --workers 2   # one section (the rest kept)

Per env (default config), a round robin of the ladder's agents (`LADDER`: the baselines, PIMC at
three sample counts, PIMC with the shipped policy's rollouts, and the shipped policy) on the
benchmark suite's frozen duplicate deals, rated by `domino rate`'s `rate`: Bradley-Terry on the Elo
scale for two sides, Plackett-Luce on finishing orders (by rank-breaking, on the same scale) for more players, random at 0, 95% bootstrap
intervals over deals; a summary table up front names each env's strongest agent, those its
interval cannot tell apart from it, and the shipped policy's place. Each unit of play (a pair of agents, or a chunk of deals) is kept in
runs/ladder/<env>/ when it finishes, so a killed run resumes; --workers N plays N units at a time,
with the same ratings. Then each agent's time per decision is measured in this process alone
(`decision_seconds`: hands against random after an untimed one) and kept beside the units. The
page has a section per env; sections rated earlier are kept from the JSON beside it.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from domino_envs.registry import game_names
from domino_training.benchmark import read_suite_file
from domino_training.benchmark.ratings import Ratings, decision_seconds, rate
from domino_training.benchmark.report import hardware_line
from domino_training.commands import add_address, add_seed, add_workers
from domino_training.scripts import CHECKOUT, DOCS

LADDER = ["random", "greedy", "heuristic", "pimc:n=16", "pimc:n=64", "pimc:n=256",
          "pimc:n=64,rollout=policy,policy=trained", "trained"]
PROG = "python -m domino_training.scripts.ladder"


def frozen_seed() -> int:
    """The benchmark suite's deal seed: deal d is engine seed mix_seed(seed, d), the frozen deals."""
    return int(read_suite_file()["protocol"]["deal_seed"])


def costs_of(env: str, agents: list[str], hands: int, folder: Path, echo=print) -> dict[str, dict]:
    """Each agent's time per decision in `env` ({"seconds", "decisions", "hands", "hardware"}), measured
    once per (agent, hands) and kept in folder/costs.json, so a rerun of the page does not measure again."""
    path = folder / "costs.json"
    kept = json.loads(path.read_text()) if path.is_file() else {}
    for spec in agents:
        key = f"{spec} hands={hands}"
        if key not in kept:
            kept[key] = {**decision_seconds(env, spec, hands=hands), "hardware": hardware_line()}
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(kept, indent=1))
            echo(f"{env} {spec}: {kept[key]['seconds']:.3g} s a decision ({kept[key]['decisions']} decisions)")
    return {spec: kept[f"{spec} hands={hands}"] for spec in agents}


def command(env: str, args, defaults: dict) -> str:
    """The command that regenerates one env's section (flags left at their defaults are left out)."""
    words = [PROG, env, "--deals", str(args.deals), "--workers", str(args.workers)]
    if args.agents != LADDER:
        words += ["--agents", *args.agents]
    for flag in ("seed", "bootstrap", "cost_hands"):
        if getattr(args, flag) != defaults[flag]:
            words += ["--" + flag.replace("_", "-"), str(getattr(args, flag))]
    return " ".join([PROG, *(shlex.quote(w) for w in words[1:])])


def outside_interval(r: Ratings) -> list[str]:
    """The agents whose rating lies outside its own bootstrap interval (a percentile interval of a skewed
    resampling distribution can miss its own estimate): the section then says so."""
    return [n for n, x, lo, hi in zip(r.names, r.rating, r.lo, r.hi) if not lo <= x <= hi]


def section(env: str, entry: dict) -> str:
    r = Ratings.from_json(entry["ratings"])
    odd = outside_interval(r)
    caveat = ([f"Read this section's order with care: the rating of {', '.join(f'`{n}`' for n in odd)} lies outside "
               "its own 95% interval: the resampled fits are skewed around it, so the interval says less than its "
               "width suggests.", ""] if odd else [])
    return "\n".join([
        f"## {env}", "",
        f"{r.model}, random = 0; {r.deals} duplicate deals (seed {entry['seed']}), {r.hands} hands; 95% bootstrap "
        f"intervals over deals ({entry['bootstrap']} resamples). Time per decision: the agent's own moves in "
        f"{entry['cost_hands']} hands against random, in one process ({entry['hardware']}).", "",
        f"Regenerate: `{entry['command']}` (from a checkout)", "",
        r.markdown({a: f"`{a}`" for a in r.names}, entry["costs"], digits=0 if "elo scale" in r.model else 1),
        "", *caveat])


def summary(order: list[str], entries: dict[str, dict]) -> list[str]:
    """A row per env: the strongest agent, the agents whose intervals reach its rating (not told apart
    from it on these deals), and the shipped policy's place."""
    lines = ["| env | strongest | rating [95%] | not told apart from it | `trained` (place) |", "|---|---|---|---|---|"]
    for env in order:
        r = Ratings.from_json(entries[env]["ratings"])
        ranked = r.order()
        top = ranked[0]
        digits = 0 if "elo scale" in r.model else 1
        close = [f"`{r.names[i]}`" for i in ranked[1:] if r.hi[i] >= r.rating[top]]
        shipped = (f"{r.rating[r.names.index('trained')]:+.{digits}f} ({ranked.index(r.names.index('trained')) + 1} of "
                   f"{len(ranked)})" if "trained" in r.names else "-")
        lines.append(f"| {env} | `{r.names[top]}` | {r.rating[top]:+.{digits}f} [{r.lo[top]:+.{digits}f}, "
                     f"{r.hi[top]:+.{digits}f}] | {', '.join(close) or '-'} | {shipped} |")
    return lines


def page(entries: dict[str, dict]) -> str:
    order = [g for g in game_names() if g in entries] + sorted(g for g in entries if g not in game_names())
    head = ["# The strength ladder", "",
            "Every agent of the ladder against every other on the same duplicate deals (seats rotated), per env "
            "in its default config: two sides rated by Bradley-Terry on the Elo scale (100 points is about 64% "
            "wins), more players by Plackett-Luce on finishing orders, fitted by breaking each hand into its pairs "
            "(the same scale: 100 points is about 64% to finish above the other), random at 0. The "
            "row-vs-column table is the row's win share (two sides) or how often it finished above the column. "
            "`pimc:n=K` plays its rollouts greedily (PIMC's default); the shipped policies are measured against "
            "`pimc:n=64,rollout=random` in [trained.md](trained.md) and [search.md](search.md). "
            "Each section's Regenerate line reruns it with a maintainer script, from a checkout "
            "(`domino_training.scripts` is not in the wheel; resumable, `--workers W` plays in W processes). With "
            "the package alone, `domino rate --game ENV --deals N --seed S AGENT...` (a section's deals and seed) "
            "rates agents of your choice the same way.", ""]
    return "\n".join(head + summary(order, entries) + [""] + [section(g, entries[g]) for g in order])


def page_with_headroom(data: dict[str, dict]) -> str:
    """docs/ladder.md: the ladder from ladder.json, then each game's headroom (training/scripts/headroom.py) from
    headroom.json beside the shipped policies of trained.json."""
    from domino_training.scripts.headroom import section as headroom

    return page(data["ladder.json"]) + "\n## Headroom: how much skill each game holds\n\n" + headroom(data)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("envs", nargs="*", metavar="ENV", help="envs to rate (default every registered env)")
    ap.add_argument("--agents", nargs="+", default=list(LADDER), metavar="SPEC", help="agent specs (default LADDER)")
    ap.add_argument("--deals", type=int, required=True, help="duplicate deals per pair (two sides) or table plays")
    add_seed(ap, "the deals", default=frozen_seed(), note="default: the benchmark's frozen deals")
    add_workers(ap, "play")
    add_address(ap, "play")
    ap.add_argument("--bootstrap", type=int, default=1000, help="resamples of the deals for the intervals")
    ap.add_argument("--cost-hands", type=int, default=10, help="hands each agent plays to time its decisions")
    ap.add_argument("--runs", default=str(CHECKOUT / "runs" / "ladder"), help="the units and costs, a folder per env")
    ap.add_argument("--out-page", default=str(DOCS / "ladder.md"), help="the page (its .json beside it)")
    args = ap.parse_args(argv)
    defaults = {k: ap.get_default(k) for k in ("seed", "bootstrap", "cost_hands")}
    envs = args.envs or game_names()
    out_page = Path(args.out_page)
    out_json = out_page.with_suffix(".json")
    entries = json.loads(out_json.read_text()) if out_json.is_file() else {}
    for env in envs:
        folder = Path(args.runs) / env
        r = rate(env, args.agents, args.deals, args.seed, bootstrap=args.bootstrap, workers=args.workers,
                 address=args.address, cache=folder, echo=print)
        costs = costs_of(env, args.agents, args.cost_hands, folder)
        entries[env] = {"ratings": r.to_json(), "costs": {a: c["seconds"] for a, c in costs.items()},
                        "seed": args.seed, "bootstrap": args.bootstrap, "cost_hands": args.cost_hands,
                        "hardware": "; ".join(sorted({c["hardware"] for c in costs.values()})),
                        "command": command(env, args, defaults)}
        out_page.parent.mkdir(parents=True, exist_ok=True)
        out_json.write_text(json.dumps(entries, indent=1))
        if out_page.resolve() == (DOCS / "ladder.md").resolve():  # the checkout's page holds the headroom too
            from domino_training.scripts.pages import write_page

            write_page("ladder.md")
        else:
            out_page.write_text(page(entries))
        print(f"{env}: wrote {out_page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
