"""`domino train <game>`: one training run of any learner in one folder, through the one driver
(`train_learner`, training/learners/interface.py), with logs, evaluation during training and resume.

    domino train draw_v0                                  # configs/draw.yaml's train section, our PPO
    domino train sum7_v0 --set ppo.lr=1e-4 --set budget.env_steps=2000000
    domino train draw_v0 --run-dir runs/d1 --resume       # continue an interrupted run
    domino train draw_v0 --learner sb3                    # MaskablePPO on SingleSeatEnv
    domino train draw_v0 --learner dmc --set dmc.epsilon=0.05
    domino train draw_v0 --learner my_learner --import my_learner.py

The config file (the game's shipped one, or --config) gives the game, its rule keys and the run's
settings: ``seed``, ``budget.env_steps`` (every decision trained on, an imitation warm start's
included), ``budget.minutes`` (a time budget, 0: none; a resumed run gets it afresh) and ``eval``
(every ``eval.every_env_steps`` env steps, or ``eval.every_updates`` PPO updates' worth, a policy is
saved and played against ``eval.opponents``; the last against ``eval.final_opponents``). The learners ``ppo``,
``ppo_bc`` and ``sb3`` take the rest of its train section as their params (imitation and distillation
included: the file's recipe is what runs); any other learner takes its params from ``--set`` (keys
outside seed, budget and eval), checked by the learner.

The run folder is the driver's (run_folder.py): points.json, config.yaml, policy_<mark>.npz and
policy.npz (the agent: ``mlp:checkpoint=...``), log.csv and tb/ (TensorBoard), eval.csv and curve.png,
final_eval.md / final_eval.json, and the learner's own checkpoint; this command adds train.yaml, the
run's resolved config (a config file: ``--config runs/d1/train.yaml`` takes it).
``--resume`` continues a killed run from the learner's last checkpoint (``ppo`` and ``dmc`` exactly as
if it had not stopped) with the run's own settings: train.yaml's config, points.json's learner and
params, so no flag needs repeating; a ``--set`` on top may change what is not the run (its device,
``budget.minutes``, the evaluation's opponents and deals), and one that changes the run is refused in
one line naming each such key and its value in the folder. Without --resume a folder that already
holds a run is refused, so a finished run is never overwritten by accident. Ctrl-C ends with one line
giving the command that resumes (exit status 130).
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from domino_envs.core import DominoError
from domino_envs.errors import CheckpointError
from domino_training.commands import HelpFormatter, add_import, add_set
from domino_training.configs import RunConfig
from domino_training.learners import interface
from domino_training.learners.interface import RUN_SET, learner_names, train_learner
from domino_training.learners.run_folder import POINTS_FILE, AnotherRunError, Evaluation, LearnerRun, describe_values
from domino_training.settings import keys

if TYPE_CHECKING:
    from domino_training.learners.ppo import TrainConfig

RUN_LEVEL = {key.split(".")[0] for key in RUN_SET}  # train keys the command reads itself; the rest are the learner's
CHECKPOINTS = (POINTS_FILE, "checkpoint.pt", "sb3_model.zip")  # a folder holding one of these holds a run
SETTINGS_FILE = "train.yaml"  # the run's resolved config, written by this command into its folder: what --resume reads


def takes_config(learner: str | None) -> bool:
    """Whether the learner's params are keys of the config's train section (ppo, ppo_bc, sb3: their
    settings are a TrainConfig)."""
    from domino_training.learners.ppo import TrainConfig  # here: importing this command imports no torch

    entry = interface.LEARNERS.get(learner) if learner else None
    return entry is not None and entry.settings is not None and isinstance(entry.settings(), TrainConfig)


def learner_params(learner: str, train: TrainConfig) -> dict:
    """The learner's params from a resolved train section: the values of every key it takes (ppo, ppo_bc,
    sb3); none for the others."""
    if not takes_config(learner):
        return {}
    return {key: value for key, (value, _) in keys(train, interface.LEARNERS[learner].sections).items()}


def eval_marks(train: TrainConfig) -> list[int]:
    """Where policies are saved and evaluated: every eval.every_env_steps env steps, else every
    eval.every_updates PPO updates' worth (0 and 0: at the budget only), and at the budget."""
    budget, ev = train.budget.env_steps, train.eval
    every = ev.every_env_steps or ev.every_updates * train.ppo.num_envs * train.ppo.rollout_steps
    return [*range(every, budget, every), budget] if every else [budget]


def learner_run(run: RunConfig, run_dir: str | Path, learner: str, params: dict | None = None) -> LearnerRun:
    """The LearnerRun `domino train` gives the one driver: the config's game, rules, seed and budget, the
    marks of its eval section, the learner's params from the config and `params`."""
    cfg = run.train
    return LearnerRun(run.game, dict(run.config), cfg.seed, cfg.budget.env_steps, eval_marks(cfg), Path(run_dir),
                      {**learner_params(learner, cfg), **(params or {})})


def plan(args) -> tuple[RunConfig, str, dict]:
    """The parsed command line as (resolved config, learner, the learner's own params from --set). With
    --resume (and no --config) on a folder holding a run and its train.yaml, the run's own settings are
    the base: train.yaml's config, points.json's learner and (for a learner whose params are not config
    keys) its params; the --set flags go on top."""
    from domino_training.learners.ppo import load_run  # the game file's train section, a TrainConfig

    if args.learner and args.algo and args.learner != args.algo:
        raise DominoError(f"--learner {args.learner} and --algo {args.algo} disagree: give --learner only")
    learner = args.learner or args.algo
    from_folder = args.resume and not args.config
    stored = stored_run(Path(args.run_dir)) if from_folder and args.run_dir else None
    if stored is None:
        overrides, params = split_overrides(learner, args.set)
        run = load_run(args.config, args.game, overrides, demo=args.demo)
        learner = learner or run.train.algo
        if from_folder and not args.run_dir:  # the default folder: of the config's seed and learner
            stored = stored_run(Path(default_run_dir(run, learner)))
        if stored is None:
            return run, learner, params
    folder, desc = stored
    learner = args.learner or args.algo or str(desc.get("learner"))
    if learner not in interface.LEARNERS:
        raise DominoError(f"{folder} holds a run of learner {learner!r}, which no --import registered: give the "
                          f"--import that registers it (learners: {', '.join(learner_names())})")
    overrides, params = split_overrides(learner, args.set)
    run = load_run(folder / SETTINGS_FILE, args.game, overrides)
    if not takes_config(learner) and isinstance(desc.get("params"), dict):
        params = {**desc["params"], **params}
    return run, learner, params


def default_run_dir(run: RunConfig, learner: str) -> str:
    return f"runs/{run.game}-{learner}-s{run.train.seed}"


def stored_run(folder: Path) -> tuple[Path, dict] | None:
    """(folder, points.json's run description) where `folder` holds a run and this command's train.yaml;
    None otherwise (a folder of another caller, or one written before train.yaml: its flags are repeated)."""
    if not ((folder / POINTS_FILE).is_file() and (folder / SETTINGS_FILE).is_file()):
        return None
    try:
        desc = json.loads((folder / POINTS_FILE).read_text())["run"]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # the driver says what is wrong with it
    return (folder, desc) if isinstance(desc, dict) else None


def refusal(run_dir: Path, stored: dict) -> str:
    """The one line refusing a run that differs from the one in `run_dir` (`stored`: each differing key
    and its value there, named as --set names it)."""
    named = {{"budget": "budget.env_steps", "marks": "eval marks"}.get(k, k): v for k, v in stored.items()}
    how = ("resume without those --set flags to continue it as it was" if (run_dir / SETTINGS_FILE).is_file()
           else "give those values with --set to resume it")
    return f"{run_dir} holds a run with {describe_values(named)}: {how}, or choose another --run-dir"


def train(run: RunConfig, run_dir: str | Path, learner: str | None = None, resume: bool = False,
          progress: bool | None = None, echo=print, params: dict | None = None):
    """`domino train` as a function: `run` (a resolved config) trained by `learner` (default: the config's
    algo) into run_dir through the one driver; `params` adds a learner's own keys. Returns the final
    evaluation's Report, or None without one."""
    learner = learner or run.train.algo
    run_dir = Path(run_dir)
    held = [name for name in CHECKPOINTS if (run_dir / name).is_file()]
    if held and not resume:
        raise DominoError(f"{run_dir} already holds a run ({held[0]}): pass --resume to continue it, "
                          f"or choose another --run-dir")
    cfg = run.train
    ev = cfg.eval
    evaluation = Evaluation(ev.opponents, ev.deals if ev.every_updates or ev.every_env_steps else 0,
                            ev.final_opponents, ev.final_deals, ev.seed, label=learner)
    job = learner_run(run, run_dir, learner, params)

    def keep_settings():  # once the folder is this run's: what --resume reads (the latest session's settings)
        (run_dir / SETTINGS_FILE).write_text(yaml.safe_dump(run.to_dict(), sort_keys=False))

    try:
        points = train_learner(learner, job, progress=sys.stderr.isatty() if progress is None else progress,
                               minutes=cfg.budget.minutes, evaluation=evaluation, tensorboard=True, echo=echo,
                               on_start=keep_settings)
    except AnotherRunError as err:
        raise CheckpointError(refusal(run_dir, err.stored)) from None
    last = points[-1]
    echo(f"{last.env_steps:,} env steps in {last.seconds:.0f} s of training "
         f"({last.env_steps / max(last.seconds, 1e-9):,.0f} steps/s); policy: {last.spec}")
    return evaluation.report


def split_overrides(learner: str | None, overrides: list[str]) -> tuple[list[str], dict]:
    """--set pairs for the config (rule keys, run-level keys, and every key for ppo, ppo_bc and sb3) and a
    learner's own params (the other learners' dotted keys)."""
    from domino_training.configs import parse_override

    if learner is None or takes_config(learner) or learner not in interface.LEARNERS:
        return list(overrides), {}
    config, params = [], {}
    for text in overrides:
        key = text.partition("=")[0].strip()
        if "." in key and key.split(".")[0] not in RUN_LEVEL:
            params.update([parse_override(text)])
        else:
            config.append(text)
    return config, params


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
                        f"config's algo, ppo)")
    p.add_argument("--algo", default=None, help=argparse.SUPPRESS)  # the old spelling of --learner
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
        line += [x for name in [args.learner or args.algo] if name for x in ("--learner", name)]
        line += [x for pair in args.set for x in ("--set", pair)]
    return f"interrupted; continue with: {shlex.join(line)}"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    run_dir = None
    try:
        from domino_training.user_code import import_all

        import_all(args.imports)
        run, learner, params = plan(args)
        run_dir = Path(args.run_dir or default_run_dir(run, learner))
        report = train(run, run_dir, learner, resume=args.resume, progress=False if args.no_progress else None,
                       params=params)
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
