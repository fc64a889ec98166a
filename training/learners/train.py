"""`domino train <game>`: one training run of any learner in one folder, through the one driver
(`train_learner`, training/learners/interface.py), with logs, evaluation during training and resume.

    domino train draw_v0                                  # configs/draw.yaml's run: its learner, ppo_bc
    domino train sum7_v0 --set ppo.lr=1e-4 --set budget.env_steps=2000000
    domino train draw_v0 --run-dir runs/d1 --resume       # continue an interrupted run
    domino train draw_v0 --learner sb3                    # MaskablePPO on SingleSeatEnv
    domino train draw_v0 --learner dmc --set dmc.epsilon=0.05
    domino train draw_v0 --learner my_learner --import my_learner.py

The config file (the game's shipped one, or --config) gives the game, its rule keys and the run:
``learner`` (--learner over it), ``seed``, ``budget.env_steps`` (every decision trained on, an
imitation warm start's included), ``budget.minutes`` (a time budget, 0: none; a resumed run gets it
afresh), ``eval`` (every ``eval.every_env_steps`` env steps, or ``eval.every_updates`` PPO updates'
worth, a policy is saved and played against ``eval.opponents``; the last against
``eval.final_opponents``) and ``params``: each learner's params on this game. Every learner takes its
params the same way: the file's ``params.<learner>`` with the dotted ``--set`` keys on top are the
run's params (`LearnerRun.params`), over the learner's defaults and the shipped game file's
(interface.learner_settings), checked by the learner.

The run folder is the driver's (run_folder.py): points.json, config.yaml, policy_<mark>.npz and
policy.npz (the agent: ``mlp:checkpoint=...``), log.csv and tb/ (TensorBoard), eval.csv and curve.png,
final_eval.md / final_eval.json, and the learner's own checkpoint; this command adds train.yaml, the
run's resolved config (a config file: ``--config runs/d1/train.yaml`` takes it).
``--resume`` continues a killed run from the learner's last checkpoint (``ppo`` and ``dmc`` exactly as
if it had not stopped) with the run's own settings: train.yaml's config, learner and params, so no
flag needs repeating; a ``--set`` on top may change what is not the run (its device,
``budget.minutes``, the evaluation's opponents and deals), and one that changes the run is refused in
one line naming each such key and its value in the folder. Without --resume a folder that already
holds a run is refused, so a finished run is never overwritten by accident. Ctrl-C ends with one line
giving the command that resumes (exit status 130).
"""
from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import yaml

from domino_envs.core import DominoError
from domino_envs.errors import CheckpointError
from domino_training.commands import HelpFormatter, add_import, add_set
from domino_training.configs import GameRun, default_path, game_params, read_run
from domino_training.learners import interface
from domino_training.learners.interface import learner_names, train_learner
from domino_training.learners.run_folder import (
    POINTS_FILE,
    AnotherRunError,
    Evaluation,
    LearnerRun,
    RunSettings,
    describe_values,
)

CHECKPOINTS = (POINTS_FILE, "checkpoint.pt", "sb3_model.zip")  # a folder holding one of these holds a run
SETTINGS_FILE = "train.yaml"  # the run's resolved config, written by this command into its folder: what --resume reads


def load(path: str | Path | None = None, game: str | None = None, overrides: list[str] | tuple = (),
         demo: bool = False, learner: str | None = None) -> GameRun:
    """A game file's run (configs.read_run into a RunSettings): what `domino train`, the ship and demo
    scripts and `domino warm` train."""
    return read_run(RunSettings(), path, game, overrides, demo, learner)


def load_settings(path: str | Path | None = None, game: str | None = None, overrides: list[str] | tuple = (),
                  demo: bool = False, learner: str | None = None):
    """The settings a game file's run (`load`) trains with: its learner's check of the run (ppo, ppo_bc,
    sb3: a RunConfig, what their trainers take); the tests, the speed script and the ship script's
    checks build from it; None for a learner that declares no check. ConfigError naming a bad key or
    value, DominoError naming a learner nobody registered."""
    run = load(path, game, overrides, demo, learner)
    check_learners(run, path or default_path(run.game))
    check = interface.LEARNERS[run.learner].check
    return check(learner_run(run, ".")) if check is not None else None


def eval_marks(run: GameRun) -> list[int]:
    """Where policies are saved and evaluated: every eval.every_env_steps env steps, else every
    eval.every_updates PPO updates' worth (the params' ppo.num_envs x ppo.rollout_steps, PPO's defaults
    where they do not say; 0 and 0: at the budget only), and at the budget."""
    from domino_training.learners.ppo import PPO  # here: importing this command imports no torch

    budget, ev, params = run.run.budget.env_steps, run.run.eval, {**game_params(run.game, run.learner)[1],
                                                                  **run.learner_params()}

    def count(key: str, default: int) -> int:  # a bad value is the learner's check's to refuse, naming it
        value = params.get(key, default)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default

    per_update = count("ppo.num_envs", PPO().num_envs) * count("ppo.rollout_steps", PPO().rollout_steps)
    every = ev.every_env_steps or ev.every_updates * per_update
    return [*range(every, budget, every), budget] if every else [budget]


def learner_run(run: GameRun, run_dir: str | Path) -> LearnerRun:
    """The LearnerRun `domino train` gives the one driver: the file's game, rules, seed and budget, the
    marks of its eval section and its learner's params (the --set ones on top)."""
    r = run.run
    return LearnerRun(run.game, dict(run.config), r.seed, r.budget.env_steps, eval_marks(run), Path(run_dir),
                      run.learner_params())


def check_learners(run: GameRun, where: str | Path) -> None:
    """DominoError unless the run's learner, and every learner the file gives params, is registered."""
    for name in dict.fromkeys([run.learner, *run.params]):
        if name not in interface.LEARNERS:
            raise DominoError(f"{where}: learner {name!r} is not registered (learners: {', '.join(learner_names())}); "
                              f"a learner of your own needs the --import that registers it")


def holds_settings(folder: Path) -> bool:
    """Whether `folder` holds a run and this command's train.yaml (a folder of another caller, or one
    written before train.yaml, resumes with its flags repeated)."""
    return (folder / POINTS_FILE).is_file() and (folder / SETTINGS_FILE).is_file()


def plan(args) -> GameRun:
    """The parsed command line as the run to train. With --resume (and no --config) on a folder holding a
    run and its train.yaml, that file is the base (the run's own settings and params); the --set flags
    and --learner go on top."""
    if args.algo:
        raise DominoError(f"--algo {args.algo}: the flag is now --learner {args.algo}")
    from_folder = args.resume and not args.config  # the run folder's train.yaml is the base
    folder = Path(args.run_dir) if args.run_dir else None
    if not (from_folder and folder is not None and holds_settings(folder)):
        run = load(args.config, args.game, args.set, demo=args.demo, learner=args.learner)
        folder = Path(default_run_dir(run)) if from_folder and folder is None else None
        if folder is None or not holds_settings(folder):
            check_learners(run, args.config or default_path(args.game))
            return run
    run = load(folder / SETTINGS_FILE, args.game, args.set, learner=args.learner)
    check_learners(run, folder)
    return run


def default_run_dir(run: GameRun) -> str:
    return f"runs/{run.game}-{run.learner}-s{run.run.seed}"


def refusal(run_dir: Path, stored: dict) -> str:
    """The one line refusing a run that differs from the one in `run_dir` (`stored`: each differing key
    and its value there, named as --set names it)."""
    named = {{"budget": "budget.env_steps", "marks": "eval marks"}.get(k, k): v for k, v in stored.items()}
    how = ("resume without those --set flags to continue it as it was" if (run_dir / SETTINGS_FILE).is_file()
           else "give those values with --set to resume it")
    return f"{run_dir} holds a run with {describe_values(named)}: {how}, or choose another --run-dir"


def train(run: GameRun, run_dir: str | Path, resume: bool = False, progress: bool | None = None, echo=print):
    """`domino train` as a function: `run` (a game file's run, `load`) trained by its learner into run_dir
    through the one driver. Returns the final evaluation's Report, or None without one."""
    run_dir = Path(run_dir)
    held = [name for name in CHECKPOINTS if (run_dir / name).is_file()]
    if held and not resume:
        raise DominoError(f"{run_dir} already holds a run ({held[0]}): pass --resume to continue it, "
                          f"or choose another --run-dir")
    ev = run.run.eval
    evaluation = Evaluation(ev.opponents, ev.deals if ev.every_updates or ev.every_env_steps else 0,
                            ev.final_opponents, ev.final_deals, ev.seed, label=run.learner)
    job = learner_run(run, run_dir)

    def keep_settings():  # once the folder is this run's: what --resume reads (the latest session's settings)
        (run_dir / SETTINGS_FILE).write_text(yaml.safe_dump(run.to_dict(), sort_keys=False))

    try:
        points = train_learner(run.learner, job, progress=sys.stderr.isatty() if progress is None else progress,
                               minutes=run.run.budget.minutes, evaluation=evaluation, tensorboard=True, echo=echo,
                               on_start=keep_settings)
    except AnotherRunError as err:
        raise CheckpointError(refusal(run_dir, err.stored)) from None
    last = points[-1]
    echo(f"{last.env_steps:,} env steps in {last.seconds:.0f} s of training "
         f"({last.env_steps / max(last.seconds, 1e-9):,.0f} steps/s); policy: {last.spec}")
    return evaluation.report


EXAMPLES = """examples:
  domino train draw_v0                     # the config's budget, into runs/draw_v0-ppo-s0
  domino train draw_v0 --demo              # a few minutes
  domino train sum7_v0 --set num_players=3 --set budget.minutes=20 --run-dir runs/sum7-3p
  domino train block_v0 --learner dmc --set budget.env_steps=500000
"""  # shown by --help; tests/fronts/test_command_help.py parses them


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(epilog=EXAMPLES, formatter_class=HelpFormatter,
        prog="domino train", description="Train an agent for one game with any learner into a run folder: "
                                "config.yaml, checkpoints, logs, evaluations during training and the final table.")
    p.add_argument("game", help="registered env name, e.g. draw_v0")
    p.add_argument("--config", default=None, metavar="FILE", help="config file (default: the game's config shipped with the package)")
    add_set(p, learner_params=True)
    p.add_argument("--learner", default=None, metavar="NAME",
                   help=f"the learner: {', '.join(learner_names())}, or one that --import registers (default: the "
                        f"config's train.learner)")
    p.add_argument("--algo", default=None, help=argparse.SUPPRESS)  # the old spelling of --learner: refused
    add_import(p, "a learner of your own: its register_learner call")
    p.add_argument("--run-dir", default=None, help="run folder (default runs/<game>-<learner>-s<seed>)")
    p.add_argument("--resume", action="store_true", help="continue the run in --run-dir from its checkpoint")
    p.add_argument("--demo", action="store_true", help="apply the config file's demo overrides")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def resume_line(args, run_dir: Path) -> str:
    """What to say after Ctrl-C: the command that continues the run in `run_dir`, or that there is none."""
    if not (run_dir / POINTS_FILE).is_file():
        return f"interrupted before {run_dir} held a run: nothing to resume (run the command again)"
    line = ["domino", "train", args.game, "--run-dir", str(run_dir), "--resume"]
    line += [x for name in args.imports for x in ("--import", name)]
    if not (run_dir / SETTINGS_FILE).is_file():  # a folder without train.yaml resumes with its flags repeated
        line += (["--config", args.config] if args.config else []) + (["--demo"] if args.demo else [])
        line += [x for name in [args.learner] if name for x in ("--learner", name)]
        line += [x for pair in args.set for x in ("--set", pair)]
    return f"interrupted; continue with: {shlex.join(line)}"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run_dir = None
    try:
        from domino_training.user_code import import_all

        import_all(args.imports)
        run = plan(args)
        run_dir = Path(args.run_dir or default_run_dir(run))
        report = train(run, run_dir, resume=args.resume, progress=False if args.no_progress else None)
    except DominoError as err:
        print(f"domino train: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"domino train: {resume_line(args, run_dir) if run_dir else 'interrupted before training began'}",
              file=sys.stderr)
        return 130
    if report is not None:
        print(report.table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
