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
from domino_training.benchmark.cost import core_seconds, run_costs
from domino_training.benchmark.ratings import Ratings
from domino_training.benchmark.runner import ScoreFile
from domino_training.benchmark.suite import Suite, load_suite


# ------------------------------------------------------------------------------ report
def _band_panels(plt, panels: dict, path: Path, title: str, xlabel: str, ylabel: str, marker, vertical: bool,
                 legend: str) -> Path:
    """One panel per opponent (`panels`: opponent -> learner -> (x, y, lo, hi)), each learner a line
    with its interval as a band, and the line of a score of 1 (as good as the table); saved at `path`."""
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False)
    for ax, (opp, lines) in zip(axes[0], panels.items()):
        for lr, (x, y, lo, hi) in lines.items():
            ax.plot(x, y, label=lr, **({"marker": marker, "ms": 3} if marker else {}))
            ax.fill_between(x, lo, hi, alpha=0.2)
        (ax.axvline if vertical else ax.axhline)(1.0, color="grey", ls="--", lw=1)
        ax.set_title(f"vs {opp}: {title}")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    axes[0][0].legend(loc=legend, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _plots(suite: Suite, agg: dict, folder: Path, stem: str, scores: ScoreFile) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    curves = agg["curves"].get("own", {})
    opps = [o for o in suite.ladder if curves.get(o)]
    if opps:  # IQM with its interval at every mark, per learner
        panels = {opp: {lr: ([r["env_steps"] for r in rows], [r["iqm"] for r in rows], [r["iqm_lo"] for r in rows],
                             [r["iqm_hi"] for r in rows]) for lr, rows in curves[opp].items()} for opp in opps}
        paths.append(_band_panels(plt, panels, folder / f"{stem}_iqm.png", "IQM over runs x games", "env steps",
                                  "win share / fair share", marker="o", vertical=False, legend="lower right"))
    profiles = agg.get("profiles") or {}
    if profiles:  # share of runs x games above each score tau, per learner
        panels = {opp: {lr: (prof["taus"], p["p"], p["lo"], p["hi"]) for lr, p in prof.items() if lr != "taus"}
                  for opp, prof in profiles.items()}
        paths.append(_band_panels(plt, panels, folder / f"{stem}_profiles.png", "performance profile", "score tau",
                                  "share of runs x games above tau", marker=None, vertical=True, legend="lower left"))
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
                       imports: list[str] | None = None, reps: int = 2000, stage: str | None = None,
                       compare: Path | None = None) -> str:
    """The `domino benchmark` line that writes a page again, as it was asked for: the profile, the part
    of it the page holds (games, learners, fewer seeds), the suite, lock and --import files, the
    bootstrap resamples, and the run folder and page where they are not the defaults (a part always
    names both)."""
    command = ["domino", "benchmark", "--profile", profile]
    subset = [[f"--{flag}", *map(str, value if isinstance(value, list) else [value])]
              for flag, value in (("stage", stage), ("only", only), ("learners", learners), ("seeds", seeds)) if value]
    files = [[f"--{flag}", str(value)] for flag, value in (("suite", suite_path), ("lock", lock_path)) if value]
    files += [["--import", str(item)] for item in imports or []]
    files += [["--compare", str(compare)]] if compare else []
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
             coverage: str | None = None, command: str | None = None, per_game: dict | None = None,
             extra: list[str] | None = None) -> str:
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
    lines += extra or []
    if cross:
        lines += ["", "## Cross-play and ratings", "",
                  f"Every final policy (learner/seed) and the ladder, round robin on {suite.crossplay_deals} frozen "
                  "deals; two sides: Bradley-Terry on the Elo scale; 3+ players: Plackett-Luce (the model each heading names) on "
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
    finals = per_game_finals(suite, scores)
    extra = (efficiency_lines(suite, data["aggregate"]) + profile_lines(data["aggregate"]) + cost_lines(suite, data)
             + stage_lines(data, load_suite(data["profile"], facts["suite"] and Path(facts["suite"])))
             + compare_lines(data.get("compare"), finals))
    return markdown(suite, data["aggregate"], summarize_strength(data["time_to_strength"], suite), data["crossplay"],
                    [where.parent / p for p in facts["plots"]], where, facts["hardware"], facts["minutes"], done,
                    coverage, facts["command"], finals, extra)


# ------------------------------------------------------------------------------ the sections a long profile adds
def efficiency_lines(suite: Suite, agg: dict, opponent: str = "heuristic") -> list[str]:
    """Sample efficiency: each learner's IQM [95% CI] against `opponent` at every mark (the curve as numbers)."""
    curves = agg["curves"].get("own", {}).get(opponent, {})
    if not curves:
        return []
    marks = sorted({r["env_steps"] for rows in curves.values() for r in rows})
    lines = ["", "## Sample efficiency", "",
             f"IQM [95% CI] of the score against {opponent} over runs x games (each learner on its games) at every "
             "mark: the curves below as numbers.", "",
             "| learner | " + " | ".join(f"{m:,}" for m in marks) + " |", "|---" * (len(marks) + 1) + "|"]
    for lr, rows in curves.items():
        at = {r["env_steps"]: r for r in rows}
        lines.append(f"| {lr} | " + " | ".join(_cell(at.get(m)) for m in marks) + " |")
    return lines


def profile_lines(agg: dict, taus: tuple[float, ...] = (0.75, 1.0, 1.25)) -> list[str]:
    """Performance profiles (rliable) read at a few thresholds: the share of runs x games scoring above tau."""
    profiles = agg.get("profiles") or {}
    if not profiles:
        return []
    lines = ["", "## Performance profiles", "",
             f"Share of runs x games (the games every learner ran: {', '.join(agg['common_games'])}) whose final score "
             "is above tau [95% CI]; the whole profiles are plotted under Curves.", "",
             "| opponent | learner | " + " | ".join(f"tau = {t:g}" for t in taus) + " |", "|---" * (len(taus) + 2) + "|"]
    for opp, prof in profiles.items():
        grid = prof["taus"]
        cols = [min(range(len(grid)), key=lambda i: abs(grid[i] - t)) for t in taus]
        for lr, p in prof.items():
            if lr == "taus":
                continue
            lines.append(f"| {opp} | {lr} | " + " | ".join(f"{p['p'][i]:.2f} [{p['lo'][i]:.2f}, {p['hi'][i]:.2f}]"
                                                          for i in cols) + " |")
    return lines


def cost_lines(suite: Suite, data: dict) -> list[str]:
    """Core-minutes per learner and game, from each run's own clocks, and the cross-play's minutes per game."""
    costs = run_costs(suite, ScoreFile.of_rows(data["scores"]))
    if not costs:
        return []
    lines = ["", "## What it cost", "",
             "Per learner and game, and per learner over its games: each run's clocks (wall minutes in its own "
             "process, training without numba's compiling, and its evaluations) and, where every sitting recorded it, "
             "its CPU; a run is one process on one core, so its core-minutes are its CPU minutes (its clocks where "
             "there are none: more than its share when other work shared the cores). The cost of the whole profile on "
             "N cores or a Ray cluster: [scaling.md](scaling.md).",
             "", "| learner | game | runs | training clock (min) | evaluation clock (min) | CPU (core-min) | "
             "core-minutes a run |", "|---|---|---|---|---|---|---|"]

    def row(lr, g, c):
        cpu = "-" if c["cpu"] is None else f"{c['cpu'] / 60:.1f}"
        return (f"| {lr} | {g} | {c['runs']} | {c['train'] / 60:.1f} | {c['evaluate'] / 60:.1f} | {cpu} | "
                f"{core_seconds(c) / 60 / c['runs']:.1f} |")

    for lr, per in costs.items():
        lines += [row(lr, g, c) for g, c in per.items()]
        if len(per) > 1:
            total = {k: sum(c[k] for c in per.values()) for k in ("runs", "train", "evaluate")}
            cpus = [c["cpu"] for c in per.values()]
            lines.append(row(f"**{lr}**", "all", {**total, "cpu": None if None in cpus else sum(cpus)}))
    timed = {g: e for g, e in data["crossplay"].items() if "seconds" in e}
    if timed:
        lines += ["", "Cross-play (the round robin of a game's final policies): "
                  + ", ".join(f"{g} {e['seconds'] / 60:.1f} min on {e['workers']} worker(s)" for g, e in timed.items())
                  + "."]
    return lines


def stage_lines(data: dict, profile_suite: Suite) -> list[str]:
    """The stages run so far (each a game: wall clock, CPU, workers) and the games still to run."""
    stages = data.get("stages")
    if not stages:
        return []
    games = [g for g in profile_suite.games if any(g in gs for _, gs in profile_suite.runs.values())]
    done = [g for g in games if any(s["game"] == g for s in stages)]
    lines = ["", "## Stages", "",
             f"The profile runs one game a stage (`--stage GAME`), each committed when it finishes: {len(done)} of "
             f"{len(games)} games so far. A stage resumes from the committed scores. Each sitting that ends writes a "
             "line with the runs it trained; a sitting stopped before its end (a session's time up) writes none, and "
             "the runs it finished are counted by the next sitting's scores, not its runs or clocks. CPU is the stage "
             "process's and its workers' user and system seconds.", "",
             "| game | date | runs trained | workers | wall clock (h) | CPU (core-h) | hardware |", "|---|---|---|---|---|---|---|"]
    notes = []
    for st in stages:
        if st.get("measured_by"):  # a sitting whose clocks were read from outside the command
            notes.append(st["measured_by"])
        mark = f" ({len(notes)})" if st.get("measured_by") else ""
        lines.append(f"| {st['game']}{mark} | {st['date']} | {st['runs']} | {st['workers']}"
                     f"{' (Ray)' if st['ray'] else ''} | {st['wall_seconds'] / 3600:.2f} | {st['cpu_seconds'] / 3600:.2f} | "
                     f"{st['hardware']} |")
    lines += [""] + [f"({i}) {note}" for i, note in enumerate(notes, 1)] if notes else []
    todo = [g for g in games if g not in done]
    if todo:
        lines += ["", f"Still to run: {', '.join(todo)}: `{data['page']['command'].replace('GAME', todo[0])}`, "
                  "and so on, one game a stage."]
    return lines


def compared_profile(path: Path, suite_path: Path | None = None) -> dict:
    """What another profile's published JSON (of this suite's version) says of each learner's final policies,
    kept in this profile's JSON so its page sets the two side by side from its own data."""
    other = json.loads(Path(path).read_text())
    facts = other["page"]
    suite = load_suite(other["profile"], facts["suite"] and Path(facts["suite"]), facts["only"], facts["learners"],
                       facts["seeds"])
    return {"source": Path(path).as_posix(), "profile": other["profile"], "version": other["version"],
            "budget": suite.budget, "command": facts["command"],
            "finals": per_game_finals(suite, ScoreFile.of_rows(other["scores"]))}


def _ranks(means: dict[str, float]) -> dict[str, int]:
    order = sorted(means, key=lambda k: -means[k])
    return {k: order.index(k) + 1 for k in means}


def compare_lines(compare: dict | None, finals: dict, opponent: str = "heuristic") -> list[str]:
    """Each learner's mean final score against `opponent` in the compared profile and in this one, per game
    finished here, with the learners' ranks in each: where the order changes with the budget."""
    if not compare:
        return []
    theirs = compare["finals"]
    games = sorted({g for per in finals.values() for g in per})
    lines = ["", f"## {compare['profile'].capitalize()} profile against this one", "",
             f"Mean final score over seeds against {opponent} at the `{compare['profile']}` profile's "
             f"{compare['budget']:,} env steps ({compare['source']}, `{compare['command']}`) and at this profile's, "
             "on the games finished here; rank among the learners that ran the game in both.", "",
             f"| game | learner | {compare['profile']} | this profile | rank {compare['profile']} | rank here |",
             "|---|---|---|---|---|---|"]
    changed = []
    for g in games:
        both = {lr for lr in finals if opponent in finals[lr].get(g, {}) and opponent in theirs.get(lr, {}).get(g, {})}
        if not both:
            continue
        here = {lr: float(np.mean(finals[lr][g][opponent])) for lr in both}
        there = {lr: float(np.mean(theirs[lr][g][opponent])) for lr in both}
        r_here, r_there = _ranks(here), _ranks(there)
        for lr in sorted(both, key=lambda k: r_here[k]):
            lines.append(f"| {g} | {lr} | {there[lr]:.2f} | {here[lr]:.2f} | {r_there[lr]} | {r_here[lr]} |")
        if r_here != r_there:
            changed.append(g)
    lines += ["", ("The ranking changes with the budget in " + ", ".join(changed) + ".") if changed else
              "The ranking is the same at both budgets on every game finished here."]
    return lines


def hardware_line() -> str:
    import os
    import platform

    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def portable_json(data, root: Path, **dumps) -> str:
    """JSON text of `data` with the absolute folder `root` cut from every path in it: policy specs then
    name their files relative to `root`, and a published file names no machine's folders."""
    prefix = str(Path(root).resolve()) + "/"
    return json.dumps(data, **dumps).replace(prefix, "")
