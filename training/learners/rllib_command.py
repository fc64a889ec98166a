"""`python -m domino_training.learners.rllib_command`: RLlib PPO on a domino game from flags, a thin alias of
``domino train GAME --learner rllib`` (its flags become the rllib learner's params; it runs through the
one driver, so ``--out DIR`` is a run folder that plays as ``rllib:checkpoint=DIR``). The learner
itself is training/learners/rllib.py (which this module cannot be: the learner registry imports it).

    python -m domino_training.learners.rllib_command --game draw_v0 --iterations 20 --out runs/rllib_draw
    python -m domino_training.learners.rllib_command --game draw_v0 --address auto --env-runners 8
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import domino_envs
from domino_envs.errors import ConfigError, DominoError
from domino_training.commands import HelpFormatter, add_address, add_seed, add_set


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m domino_training.learners.rllib_command", description=__doc__.split("\n")[0],
                                formatter_class=HelpFormatter)
    p.add_argument("--game", default="draw_v0", help=f"one of {domino_envs.game_names()}")
    add_set(p)
    p.add_argument("--iterations", type=int, default=10, help="training iterations")
    p.add_argument("--env-runners", type=int, default=0, help="remote env runners (0: sample in the driver)")
    p.add_argument("--envs-per-runner", type=int, default=8, help="games each runner steps side by side")
    add_address(p, "train", "default: a local Ray")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray (default: all cores)")
    add_seed(p, "the training")
    p.add_argument("--train-batch", type=int, default=2000, help="env steps per training iteration")
    p.add_argument("--minibatch", type=int, default=250)
    p.add_argument("--epochs", type=int, default=4, help="passes over each training batch")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--entropy-coeff", type=float, default=0.01)
    p.add_argument("--hidden", type=int, nargs="+", default=[128, 128], help="MLP widths")
    p.add_argument("--gpus-per-learner", type=float, default=0, help="GPUs for the (one, local) learner")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="the run folder (default runs/<game>-rllib-s<seed>); plays as rllib:checkpoint=DIR")
    p.add_argument("--restore", default=None, metavar="DIR", help="start from this checkpoint or run folder")
    args = p.parse_args(argv)
    for name in ("iterations", "train_batch", "minibatch", "epochs", "envs_per_runner"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.env_runners < 0:
        p.error(f"--env-runners must be >= 0, got {args.env_runners}")
    if args.minibatch > args.train_batch:
        p.error(f"--minibatch ({args.minibatch}) must not exceed --train-batch ({args.train_batch})")
    return args


def game_config_of(game: str, overrides: list[str]) -> dict:
    """The --set pairs as a game config, checked by building the env once here, so a bad name or
    value fails with our ConfigError before Ray starts."""
    from domino_training.configs import parse_override

    config = dict(parse_override(text) for text in overrides)
    if game not in domino_envs.game_names():
        raise ConfigError(f"unknown game {game!r}; allowed: {domino_envs.game_names()}")
    domino_envs.make(game, **config).close()
    return config


def main(argv=None) -> int:
    """The flags as a run of the rllib learner through the one driver (training/learners/interface.py):
    --iterations x --train-batch env steps, saved at the end into the run folder --out (default
    runs/<game>-rllib-s<seed>), which plays as rllib:checkpoint=OUT."""
    from domino_training.learners import LearnerRun, train_learner

    args = parse_args(argv)
    params = {"rllib.train_batch": args.train_batch, "rllib.minibatch": args.minibatch, "rllib.epochs": args.epochs,
              "rllib.lr": args.lr, "rllib.entropy_coeff": args.entropy_coeff, "rllib.env_runners": args.env_runners,
              "rllib.envs_per_runner": args.envs_per_runner, "rllib.num_cpus": args.num_cpus or 0,
              "rllib.address": args.address or "", "rllib.gpus_per_learner": float(args.gpus_per_learner),
              "rllib.restore": str(Path(args.restore).resolve()) if args.restore else "",
              "network.hidden": list(args.hidden)}
    try:
        game_config = game_config_of(args.game, args.set)
        budget = args.iterations * args.train_batch
        out = Path(args.out or f"runs/{args.game}-rllib-s{args.seed}")
        points = train_learner("rllib", LearnerRun(args.game, game_config, args.seed, budget, [budget], out, params),
                               echo=lambda text: print(text, flush=True))
    except DominoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"checkpoint: {points[-1].spec.split('=', 1)[1]}  (an agent: rllib:checkpoint={out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
