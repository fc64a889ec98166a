"""Ray RLlib PPO on any domino game: one shared, action-masked policy for every seat (needs the `rllib` extra).

    pip install -e ".[rllib]"
    python -m domino_training.learners.rllib_command --game draw_v0 --iterations 20                 # this machine
    python -m domino_training.learners.rllib_command --game block_v0 --set num_players=4 --env-runners 2
    ray start --head                                                              # on the head node
    python -m domino_training.learners.rllib_command --game draw_v0 --address auto --env-runners 8  # on that cluster

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

import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import domino_envs
from domino_agents.rllib_agent import META_FILE, META_FORMAT, POLICY_FILE
from domino_agents.trained import CheckpointError, check_meta, policy_meta, save_policy
from domino_training.learners.interface import learner_settings, register_learner
from domino_training.learners.run_folder import LearnerError, LearnerRun, PointLog
from domino_training.settings import HIDDEN, bounded

POLICY = "shared"  # the one module every seat plays with (agents/rllib_module.py's POLICY, which needs Ray)
RE_EXPORTED = ("MaskedActorCritic", "greedy_actions", "load_module")  # from agents/rllib_module.py, on first use


def __getattr__(name: str):
    """agents/rllib_module.py's module and helpers, imported (with Ray and torch) when first asked for."""
    if name in RE_EXPORTED:
        from domino_agents import rllib_module
        return getattr(rllib_module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def need_ray():
    """Ray (imported here, not at the top: the learner is registered without the extra); LearnerError
    naming the extra where it is missing."""
    try:
        import ray
        import ray.rllib  # noqa: F401
    except ImportError as err:
        raise LearnerError(f"the rllib learner needs Ray RLlib, the optional `rllib` extra "
                           f"(pip install -e '.[rllib]', or make test-rllib's venv): {err}") from None
    return ray


ENV_NAME = "domino_pettingzoo"  # the name our env creator is registered under


# ------------------------------------------------------------------------------------ env
def env_creator(env_config: dict):
    """RLlib's PettingZoo wrapper over ``domino_envs.make(game, **config)``; env_config holds
    ``{"game": name, "config": {game config}}``."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

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
    import torch

    from domino_agents.rllib_module import load_module

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
                 gpus_per_learner: float = 0):
    """PPO (RLlib's new API stack) with one shared MaskedActorCritic for every seat of `game`.

    Two sampling settings are for speed only (block_v0, one core, 2,000-step iterations):
    ``envs_per_runner`` games step side by side, one module forward for all of them (8: 2.8x the
    env steps a second of 1); ``episodes_to_numpy=False`` because RLlib 2.60's multi-agent runner
    converts every episode finished so far in a sample call again at each env step, quadratic in
    the episodes of an iteration, while the learner's connectors take list episodes alike (same
    seed, same losses either way: tests/learners/test_rllib.py). Both together: ~10x."""
    need_ray()
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from domino_agents.rllib_module import MaskedActorCritic

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
    ray = need_ray()
    from ray.tune.registry import register_env

    if address:
        ray.init(address=address)
    else:
        ray.init(num_cpus=num_cpus or os.cpu_count(), include_dashboard=False)
    register_env(ENV_NAME, env_creator)



# ------------------------------------------------------------------------------------ the rllib learner
@dataclass
class RLlibParams:
    train_batch: int = bounded(2000, min=1)  # env steps per training iteration
    minibatch: int = bounded(250, min=1)  # env steps per gradient step
    epochs: int = bounded(4, min=1)  # passes over each training batch
    lr: float = bounded(3e-4, gt=0)  # Adam's learning rate
    entropy_coeff: float = bounded(0.01, min=0)  # entropy bonus
    env_runners: int = bounded(0, min=0)  # remote env runners (0: sample in the driver)
    envs_per_runner: int = bounded(8, min=1)  # games a runner steps side by side (one forward for all)
    num_cpus: int = bounded(0, min=0)  # CPUs of the local Ray (0: every core)
    address: str = ""        # an existing Ray cluster to join (auto, ray://host:10001); "": a local Ray
    gpus_per_learner: float = bounded(0.0, min=0)  # GPUs for the (one, local) learner
    restore: str = ""        # start from this checkpoint or rllib run folder (same game and config, checked)


@dataclass
class RLlibNetwork:
    hidden: list = bounded([128, 128], rule=HIDDEN)  # MLP widths of the policy and value networks


@dataclass
class RLlibSettings:
    rllib: RLlibParams = field(default_factory=RLlibParams)
    network: RLlibNetwork = field(default_factory=RLlibNetwork)


def rllib_settings(run: LearnerRun) -> RLlibSettings:
    """The rllib learner's settings from params (ConfigError naming an unknown or bad key)."""
    s = learner_settings("rllib", run, RLlibSettings())
    if s.rllib.restore and not (Path(run.run_dir) / "points.json").is_file():  # checked before anything is written
        check_restore(checkpoint_folder(s.rllib.restore), run.game, run.config)
    return s


def train_rllib(run: LearnerRun, log: PointLog, progress: bool) -> None:
    """RLlib PPO through the marks; a checkpoint folder per mark, resumed
    from the last one (RLlib's own restore: weights and optimizer, not the envs' games)."""
    s = log.settings  # rllib_settings(run), built by the driver's check
    ray = need_ray()
    r = s.rllib
    done = log.points[-1] if log.points else None  # resume from the last mark's checkpoint, its counts
    start = None if done or not r.restore else checkpoint_folder(r.restore)  # checked by rllib_settings
    start_ray(r.address or None, r.num_cpus or None)
    try:
        algo = build_config(run.game, run.config, env_runners=r.env_runners, envs_per_runner=r.envs_per_runner,
                            seed=run.seed, train_batch=r.train_batch, minibatch=r.minibatch, epochs=r.epochs, lr=r.lr,
                            entropy_coeff=r.entropy_coeff, hidden=tuple(s.network.hidden),
                            gpus_per_learner=r.gpus_per_learner).build_algo()
        if done is not None:
            algo.restore_from_path(str(Path(done.spec.split("=", 1)[1])))
            log.resumed_at(done.env_steps)
        elif start is not None:
            algo.restore_from_path(str(start.resolve()))
        seconds, steps = (done.seconds, done.env_steps) if done else (0.0, 0)
        log.say(f"{run.game} {run.config}: {r.env_runners} env runners x {r.envs_per_runner} games, "
                f"{r.train_batch} env steps per iteration")
        it = 0
        while log.pending():
            t0 = time.perf_counter()
            result = iteration_summary(algo.train())
            seconds += time.perf_counter() - t0
            steps += result["env_steps"]  # sampled this iteration (counted here: a restore may not keep RLlib's total)
            it += 1
            log.record({**{k: v for k, v in result.items() if k != "seat_returns"}, "env_steps": steps,
                        "seconds": round(seconds, 3)})
            log.say(describe_iteration(it, result, time.perf_counter() - t0))
            for mark in log.due(steps):
                folder = log.policy_path(mark, suffix="")
                path = algo.save_to_path(str(folder))
                write_policy_meta(path, run.game, run.config, tuple(s.network.hidden), steps)
                log.save(mark, steps, seconds, f"rllib:checkpoint={path}")
        algo.stop()
    finally:
        ray.shutdown()


register_learner("rllib", train_rllib, "Ray RLlib PPO, one shared masked policy (the rllib extra)", optional=True,
                 check=rllib_settings, settings=RLlibSettings)


if __name__ == "__main__":
    sys.exit("the RLlib command is python -m domino_training.learners.rllib_command (or domino train GAME --learner rllib)")
