"""How much skill each game holds: `python -m domino_training.scripts.headroom`, writes docs/headroom.json and the
ladder page's headroom section.

    python -m domino_training.scripts.headroom block_v0 --agent sees_all --deals 2000 --workers 2   # one cell
    python -m domino_training.scripts.headroom --all --deals 500 --workers 2     # every cell not measured yet
    python -m domino_training.scripts.headroom --plot-only                          # docs/headroom.png again

Against a table of PIMC-64 (`pimc:n=64,rollout=random`, the bar the shipped policies are judged by), on
duplicate deals with seats rotated: PIMC-64 that searches the true state itself (`sees=all`: it sees every hand
and the stock, the ceiling of a search of this size with nothing hidden), and PIMC at 256 and 1,024 samples (what
more of the same search buys). The first bounds how far above the fair share any player of the hidden game can
get; if it is near the fair share, the game is mostly luck against this table. Each (game, agent) cell is measured
alone and kept as it lands (a long run in pieces), and the section sets the shipped policy's score against the
same table (docs/trained.json) beside the ceiling.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from domino_envs.registry import game_names, title
from domino_training.benchmark.report import hardware_line
from domino_training.commands import add_seed, add_workers
from domino_training.evaluate import evaluate
from domino_training.scripts import DOCS

PROG = "python -m domino_training.scripts.headroom"
TABLE = "pimc:n=64,rollout=random"
AGENTS = {"sees_all": "pimc:n=64,rollout=random,sees=all", "pimc256": "pimc:n=256,rollout=random",
          "pimc1024": "pimc:n=1024,rollout=random"}
LABELS = {"sees_all": "PIMC-64 seeing every hand", "pimc256": "PIMC-256", "pimc1024": "PIMC-1024"}
SEED = 24024  # the search page's deals


def measure(game: str, agent: str, deals: int, seed: int, workers: int) -> dict:
    """One cell: AGENTS[agent] against a table of TABLE on `deals` duplicate deals."""
    spec = AGENTS[agent]
    t0 = time.perf_counter()
    report = evaluate(game, [spec, TABLE], deals, seed, pairs=[(spec, TABLE)], workers=workers,
                      progress=sys.stderr.isatty())
    m = report.matchups[(spec, TABLE)]
    return {"game": game, "agent": agent, "spec": spec, "table": TABLE, "deals": deals, "seed": seed,
            "fair_share": report.fair_share, "win": m.win_stat.as_dict(), "minutes": round((time.perf_counter() - t0) / 60, 1),
            "workers": workers, "hardware": hardware_line()}


def _cell(row: dict | None) -> str:
    if row is None:
        return "-"
    w = row["win"]
    return f"{w['mean']:.3f} [{w['lo']:.3f}, {w['hi']:.3f}] ({row['deals']:,})"


def section(data: dict) -> str:
    """The ladder page's headroom section from docs/headroom.json and docs/trained.json."""
    cells = {(r["game"], r["agent"]): r for r in data["headroom.json"]["rows"]}  # data: {file name: its JSON}
    shipped = {t["game"]: next((r for r in t["rows"] if r["opponent"] == TABLE), None) for t in data["trained.json"]}
    lines = [f"Win share against a table of `{TABLE}` [95% interval] (duplicate deals, seats rotated): PIMC-64 "
             "searching the true state (`sees=all`: every hand and the stock, not a fair player), PIMC with more "
             "samples, and the shipped policy ([trained.md](trained.md)). The first is the ceiling of this search "
             "with nothing hidden: a game whose ceiling sits near the fair share leaves little for any player to "
             f"win against this table. Measured by `{PROG}` (from a checkout), which draws the plot below; a dash is a "
             "cell not measured yet.", "",
             "| game | fair share | " + " | ".join(LABELS[a] for a in AGENTS) + " | shipped policy |",
             "|---" * (len(AGENTS) + 3) + "|"]
    for game in game_names():
        fair = next((r["fair_share"] for (g, _a), r in cells.items() if g == game), None)
        ship = shipped.get(game)
        if fair is None and ship is not None:
            fair = next(t["fair_share"] for t in data["trained.json"] if t["game"] == game)
        ship_cell = "-" if ship is None else f"{ship['win']:.3f} [{ship['win_lo']:.3f}, {ship['win_hi']:.3f}] ({ship['deals']:,})"
        lines.append(f"| {title(game)} | {'-' if fair is None else f'{fair:.2f}'} | "
                     + " | ".join(_cell(cells.get((game, a))) for a in AGENTS) + f" | {ship_cell} |")
    lines += ["", "![Each game's shipped policy and larger searches against the table, with the fair share (dashed) "
              "and the ceiling (red, its interval shaded)](headroom.png)"]
    return "\n".join(lines) + "\n"


def plot(data: dict, path) -> None:
    """docs/headroom.png: a panel per game, each measured player's win share against the table with its
    interval (the shipped policy's, the larger searches'), the fair share (dashed) and the ceiling
    (PIMC-64 seeing every hand: solid, its interval shaded), so how far a policy is from each shows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cells = {(r["game"], r["agent"]): r for r in data["headroom.json"]["rows"]}
    trained = {t["game"]: t for t in data["trained.json"]}
    games = game_names()
    fig, axes = plt.subplots(1, len(games), figsize=(2.4 * len(games), 3.2), sharey=False, squeeze=False)
    for ax, game in zip(axes[0], games):
        t = trained.get(game)
        ship = next((r for r in t["rows"] if r["opponent"] == TABLE), None) if t else None
        points = [("shipped", ship["win"], ship["win_lo"], ship["win_hi"])] if ship else []
        points += [(LABELS[a].replace("PIMC-", "n="), c["win"]["mean"], c["win"]["lo"], c["win"]["hi"])
                   for a in AGENTS if a != "sees_all" and (c := cells.get((game, a)))]
        for k, (_label, mean, lo, hi) in enumerate(points):
            ax.errorbar([k], [mean], yerr=[[mean - lo], [hi - mean]], fmt="o", ms=4, capsize=3)
        fair = t["fair_share"] if t else next((c["fair_share"] for (g, _), c in cells.items() if g == game), None)
        if fair is not None:
            ax.axhline(fair, color="grey", ls="--", lw=1, label="fair share")
        top = cells.get((game, "sees_all"))
        if top:
            w = top["win"]
            ax.axhline(w["mean"], color="tab:red", lw=1, label="ceiling")
            ax.axhspan(w["lo"], w["hi"], color="tab:red", alpha=0.15)
        ax.set_xticks(range(len(points)), [p[0] for p in points], fontsize=7)
        ax.set_xlim(-0.7, max(len(points), 1) - 0.3)
        ax.set_title(title(game), fontsize=9)
        ax.grid(alpha=0.3, axis="y")
    axes[0][0].set_ylabel(f"win share vs {TABLE.split(',')[0]}")
    axes[0][0].legend(loc="lower left", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    ap.add_argument("games", nargs="*", metavar="GAME", help="games whose cells to measure")
    ap.add_argument("--agent", action="append", choices=list(AGENTS), help="which cells (default all three)")
    ap.add_argument("--all", action="store_true", help="every game's cells that docs/headroom.json lacks")
    ap.add_argument("--deals", type=int, default=2000, help="duplicate deals a cell (default 2000)")
    ap.add_argument("--plot-only", action="store_true", help="draw docs/headroom.png from the data; measure nothing")
    add_seed(ap, "the deals", default=SEED, note="the search page's")
    add_workers(ap, "play a cell's deals")
    args = ap.parse_args(argv)
    unknown = [g for g in args.games if g not in game_names()]
    if unknown:
        ap.error(f"unknown game(s) {unknown}: one of {game_names()}")
    if args.deals < 2:
        ap.error(f"--deals {args.deals} must be >= 2")
    out = DOCS / "headroom.json"
    data = json.loads(out.read_text()) if out.is_file() else {"rows": []}
    if args.plot_only:
        plot({"headroom.json": data, "trained.json": json.loads((DOCS / "trained.json").read_text())},
             DOCS / "headroom.png")
        print(f"wrote {DOCS / 'headroom.png'}")
        return 0
    have = {(r["game"], r["agent"]) for r in data["rows"]}
    agents = args.agent or list(AGENTS)
    todo = [(g, a) for a in agents for g in (game_names() if args.all else args.games)  # the ceilings first
            if not (args.all and (g, a) in have)]
    from domino_training.scripts.pages import write_page

    for g, a in todo:
        row = measure(g, a, args.deals, args.seed, args.workers)
        data["rows"] = [r for r in data["rows"] if (r["game"], r["agent"]) != (g, a)] + [row]
        out.write_text(json.dumps(data, indent=1) + "\n")
        write_page("ladder.md")
        plot({"headroom.json": data, "trained.json": json.loads((DOCS / "trained.json").read_text())},
             DOCS / "headroom.png")
        print(f"{g} {a}: {_cell(row)} in {row['minutes']} min; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
