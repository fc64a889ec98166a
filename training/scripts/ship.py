"""Regenerate the shipped agents and their results table: `python -m domino_training.scripts.ship`.

For each env (all six by default, or those named): train each stage of its recipe (configs/*.yaml:
the training section with each entry of `stages` in turn, a stage after the first from the actor of
the one before; no `stages`: the section as it is) into runs/ship/<env>, runs/ship/<env>.stage2, ...
(an interrupted recipe resumes from its checkpoint when the command is run again), copy the last
policy to agents/checkpoints/<env>.npz (what ``make_agent("trained", game)`` loads), then evaluate
it on duplicate deals against random, greedy and the heuristic (``--deals``, 2,000 by default) and
against PIMC-64 (``--pimc-deals``, 2,000), and write the table to docs/trained.md and
docs/trained.json (the README's results table is copied from there).

    python -m domino_training.scripts.ship                       # every env's recipe (docs/training.md: minutes each)
    python -m domino_training.scripts.ship draw_v0 sum7_v0 --deals 2000 --pimc-deals 500
    python -m domino_training.scripts.ship --evaluate-only       # re-evaluate the shipped files, no training
    python -m domino_training.scripts.ship --workers 2           # two envs at a time

``--workers N`` trains N envs at a time, each in a process of its own (training/parallel.py), and
plays each evaluation in N processes; this process alone copies the policies, prints and writes the
pages, env by env in the serial order (an env is evaluated once it and every env before it are
trained, while the later ones go on training), so the files are the serial run's. Each training keeps
its stages' ``ppo.torch_threads`` (the recipes use 2, for one env on 2 idle cores: give N trainings
2N cores, or ``--set ppo.torch_threads=1`` to share 2 cores between two, which changes the files'
last bits). The recipes' stages are given in env steps, so they repeat exactly; a budget in minutes
stops where the machine does.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import domino_envs
from domino_agents.trained import shipped_path
from domino_training.commands import add_seed, add_set, add_workers
from domino_training.configs import default_path, read_stages, stage_overrides
from domino_training.evaluate import evaluate
from domino_training.learners.train import load, load_settings, train
from domino_training.parallel import in_order, run_jobs
from domino_training.scripts import DOCS

BASELINES = ["random", "greedy", "heuristic"]
PIMC = "pimc:n=64,rollout=random"  # the search the shipped agents are measured against (issue 24)


def load_stages(game: str, path: str | Path | None = None) -> list[list[str]]:
    """The game file's stages (configs.read_stages), each checked as its run's settings (`load_settings`)."""
    stages = read_stages(game, path)
    for k, stage in enumerate(stages):
        try:
            load_settings(path, game, stage)
        except ValueError as err:
            raise type(err)(f"{path or default_path(game)}: stages[{k}]: {err}") from None
    return stages


def stage_dirs(game: str, run_root: Path) -> list[Path]:
    """The run folder of each stage of the game's recipe: run_root/<env>, then run_root/<env>.stage2, ..."""
    return [run_root / (game if k == 0 else f"{game}.stage{k + 1}") for k in range(len(load_stages(game)))]


def train_game(game: str, run_root: Path, overrides: list[str], progress: bool = False) -> tuple[list[str], float]:
    """Train (or resume) each stage of the env's recipe (its config's `stages`) in turn, a job
    (training/parallel.py); returns the lines the training said, for the driver to print, and its
    seconds this session. A finished stage resumes as done, so an interrupted recipe goes on where it was."""
    said: list[str] = []
    t0 = time.perf_counter()
    previous = None
    for stage, run_dir in zip(load_stages(game), stage_dirs(game, run_root)):
        run = load(game=game, overrides=stage_overrides(stage, previous) + overrides + ["eval.final_deals=0"])
        said.append(f"{game}: stage {run_dir.name} ({' '.join(stage) or 'the train section'})")
        train(run, run_dir, resume=True, progress=progress, echo=lambda *a, **k: said.append(" ".join(map(str, a))))
        previous = run_dir / "policy.npz"
    return said, time.perf_counter() - t0


def ship_trained(game: str, run_dir: Path, said: list[str], seconds: float, echo=print) -> Path:
    """Print what a training said and copy its policy into agents/checkpoints/ (the command's own
    process does, in the order of the games, whatever process trained it)."""
    for line in said:
        echo(line)
    path = shipped_path(game)
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(run_dir / "policy.npz", path)
    echo(f"{game}: shipped {path} ({seconds:.0f} s this session)")
    return path


def evaluate_shipped(game: str, deals: int, pimc_deals: int, seed: int, workers: int = 1) -> dict:
    """Win rate and reward of the shipped agent against each baseline (and PIMC), with intervals."""
    from domino_agents.trained import load_policy

    _, meta = load_policy(shipped_path(game))
    rows = []
    for opponents, n_deals in ((BASELINES, deals), ([PIMC], pimc_deals)):
        if not n_deals:
            continue
        t0 = time.perf_counter()
        report = evaluate(game, ["trained", *opponents], n_deals, seed, pairs=[("trained", o) for o in opponents],
                          progress=sys.stderr.isatty(), workers=workers)
        secs = time.perf_counter() - t0
        for o in opponents:
            m = report.matchups[("trained", o)]
            w, r = m.win_stat, m.reward_stat
            rows.append({"opponent": o, "deals": n_deals, "win": w.mean, "win_lo": w.lo, "win_hi": w.hi,
                         "reward": r.mean, "reward_lo": r.lo, "reward_hi": r.hi, "seconds": round(secs, 1)})
    n = domino_envs.make_game(game).num_players
    return {"game": game, "num_players": n, "fair_share": 1.0 / n, "env_steps": meta["env_steps"],
            "train": meta["train"], "seed": seed, "rows": rows}


def markdown(results: list[dict]) -> str:
    """docs/trained.md from docs/trained.json: a row per env, a column per baseline and per PIMC spec any
    env was evaluated against ("-" where that env was not)."""
    seed = "/".join(str(s) for s in sorted({res["seed"] for res in results}))
    searches = list(dict.fromkeys(r["opponent"] for res in results for r in res["rows"] if r["opponent"] not in BASELINES))
    columns = BASELINES + searches
    lines = ["# Shipped trained agents", "",
             "Generated from a checkout by `python -m domino_training.scripts.ship` (evaluation seed "
             f"{seed}): the shipped policy (`make_agent(\"trained\", game)`) against a table of each "
             "opponent on duplicate deals, win rate (ties shared) with its 95% interval; the fair share is "
             "0.5 with 2 players, 1/n with n. A policy trained in stages counts the env steps of its last "
             "stage (docs/training.md lists the stages).", "",
             "| env (players) | env steps | " + " | ".join(f"vs {o}" for o in columns) + " |",
             "|---|---|" + "---|" * len(columns)]
    for res in results:
        cells = {r["opponent"]: f"{r['win']:.3f} [{r['win_lo']:.3f}, {r['win_hi']:.3f}]"
                 + ("" if r["win_lo"] > res["fair_share"] else " (not above fair share)") for r in res["rows"]}
        lines.append(f"| {res['game']} ({res['num_players']}) | {res['env_steps'] / 1e6:.1f}M | "
                     + " | ".join(cells.get(o, "-") for o in columns) + " |")
    deals = {}
    for res in results:
        for r in res["rows"]:
            deals.setdefault("baselines" if r["opponent"] in BASELINES else f"`{r['opponent']}`", set()).add(r["deals"])
    lines += ["", "Deals per matchup: " + ", ".join(f"{k} {'/'.join(map(str, sorted(v)))}" for k, v in deals.items())
              + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m domino_training.scripts.ship", description=__doc__.splitlines()[0])
    p.add_argument("games", nargs="*", default=None, help=f"envs (default all: {domino_envs.game_names()})")
    p.add_argument("--deals", type=int, default=2000, help="duplicate deals per baseline matchup")
    p.add_argument("--pimc-deals", type=int, default=2000, help=f"duplicate deals against {PIMC} (0: skip)")
    add_seed(p, "the evaluation's deals", default=2026, note="deals unseen in training")
    p.add_argument("--run-root", default="runs/ship", help="where the training runs live")
    add_set(p, learner_params=True)
    p.add_argument("--evaluate-only", action="store_true", help="evaluate the shipped files; train nothing")
    add_workers(p, "train the envs, N at a time, and that play each evaluation",
                note="With a budget in env steps, the files too")
    args = p.parse_args(argv)
    games = args.games or domino_envs.game_names()
    for game in games:  # an unknown env or a bad --set fails here, before any training
        try:
            load_settings(game=game, overrides=list(args.set) + ["eval.final_deals=0"])
            load_stages(game)
        except (ValueError, OSError) as err:
            p.error(f"{game}: {err}")
    run_root = Path(args.run_root)
    results = []

    def finish(i: int, trained: tuple[list[str], float] | None) -> None:
        """The serial order: a game is shipped and evaluated once every game before it is."""
        if trained is not None:
            ship_trained(games[i], stage_dirs(games[i], run_root)[-1], *trained)
        res = evaluate_shipped(games[i], args.deals, args.pimc_deals, args.seed, args.workers)
        print(json.dumps({"game": games[i], "rows": res["rows"]}))
        results.append(res)

    try:
        if args.evaluate_only:
            for i in range(len(games)):
                finish(i, None)
        else:
            progress = sys.stderr.isatty() and args.workers == 1
            jobs = [(game, run_root, list(args.set), progress) for game in games]
            for i, trained in in_order(run_jobs(train_game, jobs, args.workers,
                                                describe=lambda i: f"the training of {games[i]}")):
                finish(i, trained)
    except ValueError as err:  # a training that failed in its worker (JobError), a policy file refused: one line
        print(f"{p.prog}: error: {err}", file=sys.stderr)
        return 2
    old = DOCS / "trained.json"
    merged = {r["game"]: r for r in (json.loads(old.read_text()) if old.is_file() else [])}
    merged.update({r["game"]: r for r in results})
    ordered = [merged[g] for g in domino_envs.game_names() if g in merged]
    old.write_text(json.dumps(ordered, indent=1))
    (DOCS / "trained.md").write_text(markdown(ordered))
    print(markdown(ordered))
    return 0


if __name__ == "__main__":
    sys.exit(main())
