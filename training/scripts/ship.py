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
    python -m domino_training.scripts.ship racehorse_v0 --recipe-seeds 1 2   # the recipe again on seeds 1 and 2

``--recipe-seeds K ...`` runs each env's recipe again with ``seed=K`` (the shipped file's recipe ran seed 0)
into runs/ship/seed<K>/<env>..., ships nothing, and evaluates each rerun's last policy against PIMC-64 on the
shipped file's deals (``--pimc-deals``, the same ``--seed``); docs/recipe_seeds.json keeps a row per (env,
seed) and trained.md sets the three side by side with their spread: is the shipped file an outlier of its
own recipe, or what the recipe gives on any seed?

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
from domino_training.commands import add_seed, add_set, add_workers, seed_value
from domino_training.configs import default_path, read_stages, stage_overrides
from domino_training.evaluate import evaluate
from domino_training.learners.train import load, load_settings, train
from domino_training.parallel import in_order, run_jobs
from domino_training.scripts import DOCS

BASELINES = ["random", "greedy", "heuristic"]
PIMC = "pimc:n=64,rollout=random"  # the search the shipped agents are measured against (issue 24)
RECIPE_SEEDS = "recipe_seeds.json"  # docs/: each recipe rerun on another seed, against PIMC
PROG = "python -m domino_training.scripts.ship"


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


def recipe_root(run_root: Path, recipe_seed: int | None) -> Path:
    """Where a recipe's stages run: run_root for the shipped file's, run_root/seed<K> for a rerun on seed K."""
    return run_root if recipe_seed is None else run_root / f"seed{recipe_seed}"


def evaluate_rerun(game: str, recipe_seed: int, run_root: Path, deals: int, seed: int, workers: int = 1) -> dict:
    """A rerun's last policy against PIMC-64 on `deals` deals of `seed` (the shipped file's, for a paired look):
    a row of docs/recipe_seeds.json."""
    from domino_agents.trained import load_policy

    policy = stage_dirs(game, recipe_root(run_root, recipe_seed))[-1] / "policy.npz"
    if not policy.is_file():
        raise ValueError(f"{game}: no rerun on seed {recipe_seed} at {policy}: train it first (without --evaluate-only)")
    _, meta = load_policy(policy)
    spec = f"mlp:checkpoint={policy}"
    t0 = time.perf_counter()
    report = evaluate(game, [spec, PIMC], deals, seed, pairs=[(spec, PIMC)], progress=sys.stderr.isatty(), workers=workers)
    w = report.matchups[(spec, PIMC)].win_stat
    return {"game": game, "recipe_seed": recipe_seed, "env_steps": meta["env_steps"], "opponent": PIMC, "deals": deals,
            "seed": seed, "win": w.mean, "win_lo": w.lo, "win_hi": w.hi, "seconds": round(time.perf_counter() - t0, 1)}


def _shipped_vs_reruns(shipped: dict, reruns: list[dict]) -> str:
    """Whether the shipped file is an outlier of its recipe: its interval wholly above (below) every rerun's."""
    if not reruns:
        return "-"
    if shipped["win_lo"] > max(r["win_hi"] for r in reruns):
        return "above every rerun (an outlier)"
    if shipped["win_hi"] < min(r["win_lo"] for r in reruns):
        return "below every rerun"
    return "within the reruns"


def recipe_section(trained: list[dict], reruns: list[dict]) -> str:
    """trained.md's second table: each env's recipe on the shipped seed and each rerun's, against PIMC-64 on the
    same deals, their spread (highest mean less lowest), how many are above the fair share and whether the shipped
    file is an outlier of its own recipe."""
    head = ["", "## Each recipe on three seeds", "",
            f"The recipe of each shipped file run again end to end on other seeds (`{PROG} block_v0 "
            "--recipe-seeds 1 2` from a checkout, for each env; into runs/ship/seed<K>/, nothing shipped), each last "
            "policy against a table of "
            f"`{PIMC}` on the shipped file's deals. An outlier: the shipped file's interval wholly above (or below) "
            "every rerun's."]
    if not reruns:
        return "\n".join(head + ["", "No rerun measured yet."]) + "\n"
    seeds = sorted({r["recipe_seed"] for r in reruns})
    lines = head + ["", "| env | fair share | seed 0 (shipped) | " + " | ".join(f"seed {k}" for k in seeds)
                    + " | spread | above the fair share | shipped file |", "|---" * (len(seeds) + 6) + "|"]
    by_game = {}
    for r in reruns:
        by_game.setdefault(r["game"], {})[r["recipe_seed"]] = r
    for res in trained:
        shipped = next((r for r in res["rows"] if r["opponent"] == PIMC), None)
        runs = by_game.get(res["game"], {})
        if shipped is None or not runs:
            continue
        cell = lambda r: "-" if r is None else f"{r['win']:.3f} [{r['win_lo']:.3f}, {r['win_hi']:.3f}]"  # noqa: E731
        every = [shipped, *runs.values()]
        above = sum(r["win_lo"] > res["fair_share"] for r in every)
        lines.append(f"| {res['game']} | {res['fair_share']:.2f} | {cell(shipped)} | "
                     + " | ".join(cell(runs.get(k)) for k in seeds)
                     + f" | {max(r['win'] for r in every) - min(r['win'] for r in every):.3f} | {above} of {len(every)} | "
                     + f"{_shipped_vs_reruns(shipped, list(runs.values()))} |")
    deals = sorted({r["deals"] for r in reruns})
    lines += ["", "Deals per rerun: " + "/".join(f"{d:,}" for d in deals) + "; evaluation seed "
              + "/".join(str(s) for s in sorted({r["seed"] for r in reruns})) + "."]
    return "\n".join(lines) + "\n"


def page(data: dict) -> str:
    """docs/trained.md from docs/trained.json and docs/recipe_seeds.json: the shipped table, then the reruns."""
    return markdown(data["trained.json"]) + recipe_section(data["trained.json"], data[RECIPE_SEEDS])


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
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    p.add_argument("games", nargs="*", default=None, help=f"envs (default all: {domino_envs.game_names()})")
    p.add_argument("--deals", type=int, default=2000, help="duplicate deals per baseline matchup")
    p.add_argument("--pimc-deals", type=int, default=2000, help=f"duplicate deals against {PIMC} (0: skip)")
    add_seed(p, "the evaluation's deals", default=2026, note="deals unseen in training")
    p.add_argument("--run-root", default="runs/ship", help="where the training runs live")
    add_set(p, learner_params=True)
    p.add_argument("--evaluate-only", action="store_true", help="evaluate the shipped files; train nothing")
    p.add_argument("--recipe-seeds", type=seed_value, nargs="+", default=None, metavar="K",
                   help="run each env's recipe again with seed=K (runs/ship/seed<K>/; nothing shipped) and evaluate "
                        "each rerun against PIMC-64 only (--pimc-deals), into docs/recipe_seeds.json")
    add_workers(p, "train the envs, N at a time, and that play each evaluation",
                note="With a budget in env steps, the files too")
    args = p.parse_args(argv)
    games = args.games or domino_envs.game_names()
    reruns = args.recipe_seeds or []
    if reruns and not args.pimc_deals:
        p.error("--recipe-seeds evaluates each rerun against PIMC-64: give --pimc-deals N (N > 0)")
    for game in games:  # an unknown env or a bad --set fails here, before any training
        try:
            load_settings(game=game, overrides=list(args.set) + ["eval.final_deals=0"])
            load_stages(game)
        except (ValueError, OSError) as err:
            p.error(f"{game}: {err}")
    run_root = Path(args.run_root)
    # a job: (game, recipe seed or None for the shipped file's recipe)
    jobs = [(game, k) for game in games for k in reruns] if reruns else [(game, None) for game in games]
    results, rerun_rows = [], []

    def write_pages() -> dict:
        """docs/trained.json, recipe_seeds.json and trained.md with every job finished so far (kept as they land)."""
        data = {name: json.loads((DOCS / name).read_text()) if (DOCS / name).is_file() else []
                for name in ("trained.json", RECIPE_SEEDS)}
        merged = {r["game"]: r for r in data["trained.json"]}
        merged.update({r["game"]: r for r in results})
        data["trained.json"] = [merged[g] for g in domino_envs.game_names() if g in merged]
        kept = {(r["game"], r["recipe_seed"]): r for r in data[RECIPE_SEEDS]}
        kept.update({(r["game"], r["recipe_seed"]): r for r in rerun_rows})
        order = domino_envs.game_names()
        data[RECIPE_SEEDS] = [kept[key] for key in sorted(kept, key=lambda gk: (order.index(gk[0]), gk[1]))]
        for name in ("trained.json", RECIPE_SEEDS):
            (DOCS / name).write_text(json.dumps(data[name], indent=1))
        (DOCS / "trained.md").write_text(page(data))
        return data

    def finish(i: int, trained: tuple[list[str], float] | None) -> None:
        """The serial order: a job is shipped (or its rerun recorded) and evaluated once every job before it is;
        the pages are written after each."""
        game, k = jobs[i]
        if k is not None:
            for line in trained[0] if trained else []:
                print(line)
            row = evaluate_rerun(game, k, run_root, args.pimc_deals, args.seed, args.workers)
            print(json.dumps({key: row[key] for key in ("game", "recipe_seed", "win", "win_lo", "win_hi")}))
            rerun_rows.append(row)
        else:
            if trained is not None:
                ship_trained(game, stage_dirs(game, run_root)[-1], *trained)
            res = evaluate_shipped(game, args.deals, args.pimc_deals, args.seed, args.workers)
            print(json.dumps({"game": game, "rows": res["rows"]}))
            results.append(res)
        write_pages()

    try:
        if args.evaluate_only:
            for i in range(len(jobs)):
                finish(i, None)
        else:
            progress = sys.stderr.isatty() and args.workers == 1
            train_jobs = [(game, recipe_root(run_root, k), list(args.set) + ([] if k is None else [f"seed={k}"]), progress)
                          for game, k in jobs]
            describe = lambda i: f"the training of {jobs[i][0]}" + ("" if jobs[i][1] is None else f" on seed {jobs[i][1]}")  # noqa: E731
            for i, trained in in_order(run_jobs(train_game, train_jobs, args.workers, describe=describe)):
                finish(i, trained)
    except ValueError as err:  # a training that failed in its worker (JobError), a policy file refused: one line
        print(f"{p.prog}: error: {err}", file=sys.stderr)
        return 2
    print(page(write_pages()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
