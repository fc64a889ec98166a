"""The benchmark's Markdown page and plots: tables of the aggregates, coverage (which runs are missing), the
command that regenerates the page, the curves.
"""
from __future__ import annotations

import json
import math
import shlex
from pathlib import Path

import numpy as np

from domino_training.benchmark.aggregate import (
    finished_only,
    finished_seeds,
    per_game_finals,
    score_of,
    summarize_strength,
)
from domino_training.benchmark.ratings import Ratings
from domino_training.benchmark.runner import ScoreFile
from domino_training.benchmark.suite import Suite, load_suite


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


def default_report(profile: str) -> str:
    """The report's file name in the current folder (the checkout's pages pass docs/... explicitly)."""
    return "benchmark.md" if profile == "quick" else f"benchmark_{profile}.md"


def default_out(profile: str) -> str:
    """The runs' folder, under the current folder."""
    return f"runs/benchmark/{profile}"


def regenerate_command(profile: str, only: list[str] | None = None, learners: list[str] | None = None,
                       seeds: int | None = None, out: Path | None = None, report: Path | None = None,
                       suite_path: Path | None = None, lock_path: Path | None = None,
                       imports: list[str] | None = None, reps: int = 2000) -> str:
    """The `domino benchmark` line that writes a page again, as it was asked for: the profile, the part
    of it the page holds (games, learners, fewer seeds), the suite, lock and --import files, the
    bootstrap resamples, and the run folder and page where they are not the defaults (a part always
    names both)."""
    command = ["domino", "benchmark", "--profile", profile]
    subset = [[f"--{flag}", *map(str, value if isinstance(value, list) else [value])]
              for flag, value in (("only", only), ("learners", learners), ("seeds", seeds)) if value]
    files = [[f"--{flag}", str(value)] for flag, value in (("suite", suite_path), ("lock", lock_path)) if value]
    files += [["--import", str(item)] for item in imports or []]
    files += [["--reps", str(reps)]] if reps != 2000 else []
    places = [[f"--{flag}", str(value)] for flag, value, default in
              (("out", out, default_out(profile)), ("report", report, default_report(profile)))
              if value is not None and (subset or Path(value) != Path(default))]
    return shlex.join(command + [word for part in subset + files + places for word in part])


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
        own = regenerate_command(suite.profile, learners=[lr], out=f"runs/benchmark/{suite.profile}-{lr}",
                                 report=f"{where.parent.name}/{page}")
        notes.append(f"- `{lr}` needs an optional extra and has a page of its own, [{page}]({page}) "
                     f"(`{own}`, from a venv with the extra).")
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
            lines += ["", f"### {g} ({e['ratings']['model']})", "", Ratings.from_json(e["ratings"]).markdown(e["labels"])]
            if e.get("partners"):
                lines += ["", "Beside partners it never trained with (the pair's win share against two heuristics):", "",
                          "| policy | partner | win share | 95% CI |", "|---|---|---|---|"]
                for pol, mates in e["partners"].items():
                    for mate, st in mates.items():
                        lines.append(f"| {pol} | {mate} | {st['mean']:.3f} | [{st['lo']:.3f}, {st['hi']:.3f}] |")
    if plots:
        lines += ["", "## Curves", ""] + [f"![{p.stem}]({p.relative_to(where.parent).as_posix()})" for p in plots]
    return "\n".join(lines) + "\n"


def page_facts(only: list[str] | None, learners: list[str] | None, seeds: int | None, suite_path: Path | None,
               report_only: bool, command: str, minutes: float, plots: list[Path], where: Path) -> dict:
    """What the page says beyond the scores, kept in the JSON beside it (its "page" entry) so that
    `page_from_data` writes the same page again from the JSON alone."""
    return {"only": only, "learners": learners, "seeds": seeds, "suite": suite_path and str(suite_path),
            "report_only": report_only, "command": command, "hardware": hardware_line(), "minutes": round(minutes, 2),
            "report": f"{where.parent.name}/{where.name}", "plots": [p.relative_to(where.parent).as_posix() for p in plots]}


def page_from_data(data: dict) -> str:
    """The benchmark's page from the JSON `domino benchmark` writes beside it: the suite as the run named it,
    the scores, the aggregates and ratings it computed, and its `page_facts`."""
    facts = data["page"]
    suite = load_suite(data["profile"], facts["suite"] and Path(facts["suite"]), facts["only"], facts["learners"],
                       facts["seeds"])
    scores = ScoreFile.of_rows(data["scores"])
    done = finished_seeds(suite, scores)
    coverage = coverage_line(suite, done, facts["command"])
    if facts["report_only"]:  # the page holds the runs whose seeds are all finished (run_benchmark's train=False)
        suite = finished_only(suite, done)
    where = Path(facts["report"])  # its folder's name and its own: what the page's links need
    return markdown(suite, data["aggregate"], summarize_strength(data["time_to_strength"], suite), data["crossplay"],
                    [where.parent / p for p in facts["plots"]], where, facts["hardware"], facts["minutes"], done,
                    coverage, facts["command"], per_game_finals(suite, scores))


def hardware_line() -> str:
    import os
    import platform

    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def portable_json(data, root: Path, **dumps) -> str:
    """JSON text of `data` with the absolute folder `root` cut from every path in it: policy specs then
    name their files relative to `root`, and a published file names no machine's folders."""
    prefix = str(Path(root).resolve()) + "/"
    return json.dumps(data, **dumps).replace(prefix, "")
