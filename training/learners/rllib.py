"""Ray RLlib PPO on any domino game: one shared, action-masked policy for every seat (needs the `rllib` extra).

    pip install -e ".[rllib]"
    python -m domino_training.learners.rllib --game draw_v0 --iterations 20                 # this machine
    python -m domino_training.learners.rllib --game block_v0 --set num_players=4 --env-runners 2
    ray start --head                                                              # on the head node
    python -m domino_training.learners.rllib --game draw_v0 --address auto --env-runners 8  # on that cluster

The env is RLlib's own PettingZoo wrapper (``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv``)
over our AEC env, unchanged: turn-based, so each step hands back the observation of the seat to
act only, and at the end of a hand every seat gets its final observation and reward. Every seat maps
to the one module ``shared``. RLlib's new API stack masks actions in the RLModule, so
`MaskedActorCritic` reads our observation dict ({"observation", "action_mask"}) as it is and sets
the logits of illegal actions to `MASKED_LOGIT`: a sampled or greedy action is always legal (and
the env raises IllegalActionError if one ever is not).

Each iteration prints env steps sampled, the mean episode return (the sum over seats) and each
seat's mean return (RLlib's running means over windows of episodes: every episode sums to zero in
these zero-sum games, the windowed means need not), the policy entropy and the time. The command is
a thin alias of ``domino train GAME --learner rllib``: its flags become the learner's params and it
runs through the one driver, so ``--out DIR`` is a run folder (points.json, log.csv, the checkpoint
of the last mark with ``domino_policy.json`` and ``.npz``, the latest in DIR/policy/; the same flags
on a finished DIR do nothing more); ``--restore DIR`` starts from a checkpoint or run folder (same
game and config, checked); ``load_module(DIR)`` (agents/rllib_module.py) gives its trained module
without Ray, and ``rllib:checkpoint=DIR`` is an agent for ``domino evaluate`` and ``domino play``
(agents/rllib_agent.py).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

try:
    import ray
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.tune.registry import register_env
except ImportError as exc:  # the module is only useful with the extra; say how to get it
    raise ImportError(
        f"domino_training.learners.rllib needs the `rllib` extra ({exc}); install it with: pip install -e '.[rllib]'"
    ) from exc

import domino_envs
from domino_agents.rllib_agent import META_FILE, META_FORMAT, POLICY_FILE
from domino_agents.rllib_module import POLICY, MaskedActorCritic, greedy_actions, load_module  # noqa: F401 - re-exported
from domino_agents.trained import CheckpointError, check_meta, policy_meta, save_policy
from domino_envs.errors import ConfigError, DominoError
from domino_training.commands import HelpFormatter

ENV_NAME = "domino_pettingzoo"  # the name our env creator is registered under


# ------------------------------------------------------------------------------------ env
def env_creator(env_config: dict) -> PettingZooEnv:
    """RLlib's PettingZoo wrapper over ``domino_envs.make(game, **config)``; env_config holds
    ``{"game": name, "config": {game config}}``."""
    return PettingZooEnv(domino_envs.make(env_config["game"], **env_config.get("config", {})))


def shared_policy(agent_id, episode, **kwargs) -> str:
    """Policy mapping: every seat plays the one shared module."""
    return POLICY


def write_policy_meta(folder: str | Path, game: str, game_config: dict, hidden: tuple[int, ...],
                      env_steps: int) -> None:
    """Beside RLlib's files in a checkpoint this process just saved: ``domino_policy.json`` (the game,
    its full config and the sizes, which ``--restore`` checks) and ``domino_policy.npz``, the shared
    module's policy network as plain arrays, which is all the ``rllib:checkpoint=DIR`` agent reads (so
    loading a checkpoint from elsewhere never unpickles RLlib's files)."""
    meta = policy_meta(domino_envs.make_game(game, **game_config), hidden, "rllib", env_steps)
    linears = [m for m in load_module(folder).policy_net if isinstance(m, torch.nn.Linear)]  # our own files
    layers = [(m.weight.detach().cpu().numpy(), m.bias.detach().cpu().numpy()) for m in linears]
    save_policy(Path(folder) / POLICY_FILE, layers, {**meta, "activation": "tanh"})
    meta["format"] = META_FORMAT
    (Path(folder) / META_FILE).write_text(json.dumps(meta, indent=1))


def checkpoint_folder(path: str | Path) -> Path:
    """The checkpoint a path names: the folder itself, or a run folder's latest (``policy/``)."""
    path = Path(path)
    return path / "policy" if not (path / META_FILE).is_file() and (path / "policy" / META_FILE).is_file() else path


def describe_iteration(it: int, s: dict, seconds: float) -> str:
    """The line printed for training iteration `it` (an `iteration_summary`)."""
    seats = " ".join(f"{a}={r:+.3f}" for a, r in s["seat_returns"].items())
    return (f"iter {it:3d}  env steps {s['env_steps']:6d} (total {s['env_steps_total']})  episodes {s['episodes']:4d}  "
            f"return mean {s['return_mean']:+.3f}  [{seats}]  entropy {s['entropy']:.3f}  {seconds:.1f}s")


def check_restore(folder: str | Path, game: str, game_config: dict) -> None:
    """CheckpointError unless `folder` is a checkpoint of this script for the same game and config."""
    info = Path(folder) / META_FILE
    if not info.is_file():
        raise CheckpointError(f"--restore {str(folder)!r}: no {META_FILE}, not a checkpoint of domino_training.learners.rllib --out")
    try:
        meta = json.loads(info.read_text())
    except (OSError, ValueError) as err:
        raise CheckpointError(f"--restore {str(folder)!r}: {META_FILE} is unreadable ({err})") from None
    check_meta(meta, domino_envs.make_game(game, **game_config), f"--restore {str(folder)!r}")


# ------------------------------------------------------------------------------------ config
def build_config(game: str, game_config: dict, *, env_runners: int = 0, envs_per_runner: int = 8, seed: int = 0,
                 train_batch: int = 2000, minibatch: int = 250, epochs: int = 4, lr: float = 3e-4,
                 entropy_coeff: float = 0.01, hidden: tuple[int, ...] = (128, 128),
                 gpus_per_learner: float = 0) -> PPOConfig:
    """PPO (RLlib's new API stack) with one shared MaskedActorCritic for every seat of `game`.

    Two sampling settings are for speed only (block_v0, one core, 2,000-step iterations):
    ``envs_per_runner`` games step side by side, one module forward for all of them (8: 2.8x the
    env steps a second of 1); ``episodes_to_numpy=False`` because RLlib 2.60's multi-agent runner
    converts every episode finished so far in a sample call again at each env step, quadratic in
    the episodes of an iteration, while the learner's connectors take list episodes alike (same
    seed, same losses either way: tests/learners/test_rllib.py). Both together: ~10x."""
    return (
        PPOConfig()
        # RLlib's env pre-check steps random actions, which our env (rightly) refuses as illegal
        .environment(ENV_NAME, env_config={"game": game, "config": dict(game_config)}, disable_env_checking=True)
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=envs_per_runner, episodes_to_numpy=False)
        .multi_agent(policies={POLICY}, policy_mapping_fn=shared_policy)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            POLICY: RLModuleSpec(module_class=MaskedActorCritic, model_config={"hidden": list(hidden)}),
        }))
        .training(train_batch_size_per_learner=train_batch, minibatch_size=minibatch, num_epochs=epochs, lr=lr,
                  entropy_coeff=entropy_coeff)
        .learners(num_learners=0, num_gpus_per_learner=gpus_per_learner)
        .debugging(seed=seed)
    )


def iteration_summary(result: dict) -> dict:
    """The numbers printed per iteration, from an RLlib result dict (NaN where RLlib reported none,
    e.g. no episode finished yet)."""
    runners = result.get("env_runners", {})
    learner = result.get("learners", {}).get(POLICY, {})
    return {
        "env_steps": int(runners.get("num_env_steps_sampled", 0)),
        "env_steps_total": int(result.get("num_env_steps_sampled_lifetime",
                                          runners.get("num_env_steps_sampled_lifetime", 0))),
        "episodes": int(runners.get("num_episodes", 0)),
        "return_mean": runners.get("episode_return_mean", math.nan),
        "seat_returns": dict(sorted(runners.get("agent_episode_returns_mean", {}).items())),
        "entropy": learner.get("entropy", math.nan),
        "policy_loss": learner.get("policy_loss", math.nan),
        "vf_loss": learner.get("vf_loss", math.nan),
    }


def start_ray(address: str | None, num_cpus: int | None) -> None:
    """Join the cluster at `address`, or start a local Ray (no dashboard) with `num_cpus` cores."""
    if address:
        ray.init(address=address)
    else:
        ray.init(num_cpus=num_cpus or os.cpu_count(), include_dashboard=False)
    register_env(ENV_NAME, env_creator)


# ------------------------------------------------------------------------------------ CLI
def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m domino_training.learners.rllib", description=__doc__.split("\n")[0],
                                formatter_class=HelpFormatter)
    p.add_argument("--game", default="draw_v0", help=f"one of {domino_envs.game_names()}")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="game config key (repeatable)")
    p.add_argument("--iterations", type=int, default=10, help="training iterations")
    p.add_argument("--env-runners", type=int, default=0, help="remote env runners (0: sample in the driver)")
    p.add_argument("--envs-per-runner", type=int, default=8, help="games each runner steps side by side")
    p.add_argument("--address", default=None,
                   help="an existing Ray cluster (e.g. auto, ray://host:10001); default: a local Ray")
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local Ray (default: all cores)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train-batch", type=int, default=2000, help="env steps per training iteration")
    p.add_argument("--minibatch", type=int, default=250)
    p.add_argument("--epochs", type=int, default=4, help="passes over each training batch")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--entropy-coeff", type=float, default=0.01)
    p.add_argument("--hidden", type=int, nargs="+", default=[128, 128], help="MLP widths")
    p.add_argument("--gpus-per-learner", type=float, default=0, help="GPUs for the (one, local) learner")
    p.add_argument("--out", default=None, metavar="DIR", help="save an RLlib checkpoint here at the end")
    p.add_argument("--restore", default=None, metavar="DIR", help="start from this checkpoint")
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
