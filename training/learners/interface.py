"""Learners on one interface: a run description in, policy files that `make_agent` loads out.

    from domino_training.learners import LearnerRun, train_learner
    run = LearnerRun(game="draw_v0", config={}, seed=0, budget=200_000, marks=[50_000, 100_000, 200_000],
                     run_dir=Path("runs/dmc-draw-s0"), params={"dmc.epsilon": 0.1})
    points = train_learner("dmc", run)        # [PolicyPoint(env_steps, seconds, spec, mark), ...]

- **Budget** in env steps: decisions stepped in the environments the learner trains on, every
  seat's (an opponent's move inside a `SingleSeatEnv` step counts too), so learners on the vector
  env and on single-seat envs spend the same. ``ppo_bc`` counts its teacher's demonstration
  decisions too (they are decisions it trains on).
- **Marks**: env-step counts (increasing, the last == the budget) at which a policy is saved. A
  learner steps in its own units (an update, a rollout), so it saves at the first unit boundary at
  or past each mark: `PolicyPoint.env_steps` is the real count, `PolicyPoint.mark` the mark.
- **Seconds**: wall-clock seconds of training (collection and updates; not evaluation, not file
  writes), summed over resumed sessions.
- **Resumable**: the run folder holds points.json (the run description and every point saved)
  and the learner's own checkpoint; calling `train_learner` again on it (after a kill) continues
  from the last checkpoint and returns every point, marks already saved are not trained again. A
  folder of another run (learner, game, config, seed, budget, marks or params differ) is refused,
  in one line naming each key that differs and its value there. Where it trains (a ``device``
  param: ``ppo.device``, ``dmc.device``) is not part of a run: a run resumes on another device.
  ``ppo`` and ``dmc`` resume exactly (the same files as a run never stopped); ``sb3`` from its
  last mark with fresh deals (SB3 keeps no RNG state).
- **Params**: the learner's own settings as dotted keys; an unknown key is a ConfigError naming it.

The learners (`LEARNERS`; `register_learner` adds one, see docs/examples/my_learner.py):

- ``ppo``: our PPO (training/learners/ppo.py). Base settings: the game's configs/<game>.yaml train
  section without its stages (imitation and distillation off); params are its keys (``ppo.ent_coef``,
  ``network.hidden``, ``opponents.greedy``, ``budget.checkpoint_every``...) except those the run sets
  (seed, budget.env_steps, budget.minutes, algo, eval), and may turn the stages on: ``imitation.*``
  (a warm start whose decisions count in the budget) and ``distill.*`` (search distillation rounds
  alternating with PPO: the suite's strongest recipe, benchmarked through its params alone). Policy
  spec ``mlp:checkpoint=PATH``.
- ``ppo_bc``: the same with the imitation warm start on by default (the config's, or 200k decisions
  of the heuristic where the config has none).
- ``dmc``: deep Monte-Carlo (training/learners/dmc.py); params ``dmc.*``, ``network.hidden``,
  ``opponents.*`` (dmc.py's `DMCSettings`). Spec ``dmc:checkpoint=PATH``.
- ``sb3``: sb3_contrib's MaskablePPO on SingleSeatEnv (training/learners/sb3.py); params ``sb3.*``,
  ``network.hidden``, ``opponents.*``; base the same config section. Spec ``mlp:checkpoint=PATH``
  (its actor exported in the policy format).
- ``rllib`` (optional: the `rllib` extra, not in CI): RLlib's PPO through training/learners/rllib.py;
  params ``rllib.*`` (train_batch, minibatch, epochs, lr, entropy_coeff, env_runners, envs_per_runner, num_cpus),
  ``network.hidden``. Spec ``rllib:checkpoint=DIR``; resumes from its last mark.

A learner is a function ``train(run: LearnerRun, log: PointLog, progress: bool) -> None`` that
trains until every mark in ``log.pending()`` is saved with ``log.save(...)``, logging its rows with
``log.record`` (training/learners/run_folder.py). `train_learner` is the one driver: it checks the
run, owns the run folder (points.json, config.yaml, log.csv, tb/, evaluation during training and the
final table), calls the function and returns the points. `domino train --learner NAME`
(training/learners/train.py), the benchmark and the learned best responses all go through it.
"""
from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import domino_envs
from domino_envs.errors import ConfigError
from domino_training.learners.run_folder import (
    CsvLog,
    Evaluation,
    LearnerError,
    LearnerRun,
    PointLog,
    PolicyPoint,
    drive,
)
from domino_training.settings import HIDDEN, apply, bounded, check, table


@dataclass
class LearnerEntry:
    fn: Callable            # train(run, log, progress) -> None
    doc: str                # one line
    optional: bool = False  # needs an optional extra (not run in CI)
    check: Callable | None = None  # check(run): ConfigError for bad params, before anything is written
    settings: Callable | None = None  # settings(): its params' dataclass with the defaults (the docs table)
    sections: tuple | None = None  # the sections (or dotted keys) of it that are params (None: all)


# ------------------------------------------------------------------------------ checks
def check_run(run: LearnerRun) -> None:
    """ConfigError naming what is wrong with the run's game, config, seed, budget or marks."""
    if run.game not in domino_envs.game_names():
        raise ConfigError(f"unknown game {run.game!r}; allowed: {domino_envs.game_names()}")
    if not isinstance(run.config, dict):
        raise ConfigError(f"config={run.config!r} must be a dict of the game's rule keys")
    domino_envs.make_game(run.game, **run.config)  # bad rule keys fail here
    if isinstance(run.seed, bool) or not isinstance(run.seed, int) or run.seed < 0:
        raise ConfigError(f"seed={run.seed!r} must be an int >= 0")
    if isinstance(run.budget, bool) or not isinstance(run.budget, int) or run.budget < 1:
        raise ConfigError(f"budget={run.budget!r} must be an int >= 1 (env steps)")
    m = run.marks
    if (not isinstance(m, (list, tuple)) or not m or any(isinstance(x, bool) or not isinstance(x, int) for x in m)
            or any(b <= a for a, b in zip(m, m[1:])) or m[0] < 1 or m[-1] != run.budget):
        raise ConfigError(f"marks={m!r} must be increasing positive ints ending at the budget {run.budget}")
    if not isinstance(run.params, dict) or not all(isinstance(k, str) for k in run.params):
        raise ConfigError(f"params={run.params!r} must be a dict of dotted keys (e.g. {{'ppo.ent_coef': 0.1}})")


# ------------------------------------------------------------------------------ ppo, ppo_bc, dmc
RUN_SET = {"seed": "LearnerRun.seed", "algo": "the learner's name", "budget.env_steps": "LearnerRun.budget and marks",
           "budget.minutes": "the time budget (train_learner's minutes)",
           "eval": "the run's Evaluation (domino train's eval section; learners do not evaluate)"}
PPO_SECTIONS = ("ppo", "network", "opponents", "imitation", "distill", "budget.checkpoint_every")
SB3_SECTIONS = ("sb3", "network", "opponents", "budget.checkpoint_every")


def ppo_run_config(run: LearnerRun, learner: str):
    """The RunConfig ppo/ppo_bc/sb3 train with: the game's config file's train section without its stages
    (imitation off for ppo, 200k heuristic decisions for ppo_bc where the file has none; distillation
    off), then the params (which may turn the stages on: `domino train` passes its config's)."""
    from domino_training.configs import RunConfig, game_train_config, validate

    train = game_train_config(run.game)
    train.algo = "sb3" if learner == "sb3" else "ppo"
    train.seed = int(run.seed)
    train.budget.env_steps, train.budget.minutes = int(run.budget), 0.0
    train.eval.every_updates, train.eval.final_deals = 0, 0
    train.distill.rounds = train.distill.every_updates = 0
    if learner == "ppo":
        train.imitation.decisions = 0
    elif learner == "ppo_bc" and train.imitation.decisions == 0:
        train.imitation.decisions = 200_000
    apply(train, run.params, learner, SB3_SECTIONS if learner == "sb3" else PPO_SECTIONS, RUN_SET)
    validate(train)
    return RunConfig(run.game, dict(run.config), train)


def _imitation_steps(decisions: int) -> int:
    """Env steps imitate.demonstrations plays for `decisions` (it steps 64 games at a time)."""
    return math.ceil(decisions / 64) * 64 if decisions else 0


class PPOWithRounds:
    """Our PPO Trainer with its distillation rounds (distill.*, training/learners/distill.py): the
    rounds due before PPO first, then one after every ``distill.every_updates`` updates, each logged in
    distill.csv and counted in the checkpoint, so a resumed run does each round once."""

    def __init__(self, trainer, extra: dict, log: PointLog):
        from domino_training.learners.distill import rounds_done

        self.trainer, self.log = trainer, log
        d = trainer.cfg.distill
        self.on = bool(d.rounds or d.every_updates)
        self.done = rounds_done(trainer, extra) if self.on else 0
        if self.on:
            self.csv = CsvLog(trainer.dir / "distill.csv")
            self.csv.truncate_after(trainer.env_steps if self.done else -1)
            self.catch_up()

    def catch_up(self) -> None:
        """Run (and log) the rounds due by this update that are not done yet."""
        from domino_training.learners.distill import rounds_due, run_round

        t = self.trainer
        while self.done < rounds_due(t.cfg.distill, t.update):
            self.save_checkpoint()  # a round interrupted resumes here, after the PPO update before it
            row = run_round(t, self.done, lambda *a, **k: self.log.say(" ".join(map(str, a))))
            self.csv.write({"round": row["round"], "update": row["update"], "env_steps": t.env_steps, **row})
            self.done += 1

    def iterate(self) -> dict:
        row = self.trainer.iterate()
        if self.on:
            self.catch_up()
        return row

    def save_checkpoint(self):
        return self.trainer.save_checkpoint({"distill_rounds": self.done} if self.on else None)

    def export_policy(self, path=None):
        return self.trainer.export_policy(path)

    @property
    def env_steps(self) -> int:
        return self.trainer.env_steps

    @property
    def seconds(self) -> float:
        return self.trainer.seconds


def train_ppo(run: LearnerRun, log: PointLog, progress: bool, learner: str = "ppo") -> None:
    """Our PPO (ppo.py Trainer) through the marks: the imitation warm start first when imitation.decisions
    asks (its decisions count in the budget), distillation rounds where distill.* asks."""
    from domino_training.learners.ppo import Trainer

    cfg = ppo_run_config(run, learner)
    offset = _imitation_steps(cfg.train.imitation.decisions)
    if offset >= run.budget:
        raise ConfigError(f"{learner}: imitation.decisions={cfg.train.imitation.decisions} leaves nothing of the "
                          f"budget {run.budget} for PPO")
    cfg.train.budget.env_steps = run.budget - offset  # the lr schedule spans the PPO part
    trainer = Trainer(cfg, run.run_dir)
    extra = {}
    if trainer.checkpoint_path.is_file():
        extra = trainer.load_checkpoint()
        log.resumed_at(offset + trainer.env_steps)
    elif offset:
        t0 = time.perf_counter()
        with log.uncounted():  # the time budget caps PPO (docs/training.md): the warm start comes on top
            stats = trainer.warm_start()
        trainer.seconds += time.perf_counter() - t0
        log.say(f"imitation of {cfg.train.imitation.teacher}: {cfg.train.imitation.decisions:,} decisions, "
                f"agreement {stats['bc_agreement']:.3f}, {time.perf_counter() - t0:.0f} s")
        trainer.save_checkpoint()
    if trainer.device.type == "cpu":
        log.say(f"torch: {cfg.train.ppo.torch_threads} CPU thread(s) for the update (ppo.torch_threads; 2 pays on an "
                f"idle 2-core machine, costs several times over beside other jobs), 1 for collection")
    drive(PPOWithRounds(trainer, extra, log), log, run.budget, "mlp", cfg.train.budget.checkpoint_every, progress,
          offset)


def train_ppo_bc(run: LearnerRun, log: PointLog, progress: bool) -> None:
    """Imitation warm start, then our PPO."""
    train_ppo(run, log, progress, learner="ppo_bc")


def dmc_settings(run: LearnerRun):
    """The DMCSettings of `run`'s params (ConfigError naming an unknown or bad key)."""
    from domino_training.learners.dmc import DMCSettings, validate_settings

    settings = apply(DMCSettings(), run.params, "dmc", run_sets=RUN_SET)
    validate_settings(settings)
    return settings


def train_dmc(run: LearnerRun, log: PointLog, progress: bool) -> None:
    """Deep Monte-Carlo (training/learners/dmc.py) through the marks."""
    from domino_training.learners.dmc import DMCTrainer

    settings = dmc_settings(run)
    trainer = DMCTrainer(run.game, run.config, settings, run.seed, run.run_dir)
    if trainer.checkpoint_path.is_file():
        trainer.load_checkpoint()
        log.resumed_at(trainer.env_steps)
    drive(trainer, log, run.budget, "dmc", settings.dmc.checkpoint_every, progress)


# ------------------------------------------------------------------------------ sb3, rllib
def train_sb3(run: LearnerRun, log: PointLog, progress: bool) -> None:
    """MaskablePPO on SingleSeatEnv (training/learners/sb3.py `train_sb3_points`)."""
    try:
        from domino_training.learners.sb3 import train_sb3_points
    except ImportError as err:
        raise LearnerError(f"the sb3 learner needs stable-baselines3 and sb3-contrib (the train extra: "
                           f"pip install -e '.[train]'): {err}") from None
    train_sb3_points(ppo_run_config(run, "sb3"), log, progress)


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
    s = apply(RLlibSettings(), run.params, "rllib", run_sets=RUN_SET)
    check(s)
    if s.rllib.restore and not (Path(run.run_dir) / "points.json").is_file():  # checked before anything is written
        try:
            from domino_training.learners import rllib as rllib_train
        except ImportError as err:
            raise LearnerError(f"the rllib learner needs Ray RLlib, the optional `rllib` extra: {err}") from None
        rllib_train.check_restore(rllib_train.checkpoint_folder(s.rllib.restore), run.game, run.config)
    return s


def train_rllib(run: LearnerRun, log: PointLog, progress: bool) -> None:
    """RLlib PPO (training/learners/rllib.py) through the marks; a checkpoint folder per mark, resumed
    from the last one (RLlib's own restore: weights and optimizer, not the envs' games)."""
    s = rllib_settings(run)
    try:
        from domino_training.learners import rllib as rllib_train
    except ImportError as err:
        raise LearnerError(f"the rllib learner needs Ray RLlib, the optional `rllib` extra "
                           f"(pip install -e '.[rllib]', or make test-rllib's venv): {err}") from None
    r = s.rllib
    done = log.points[-1] if log.points else None  # resume from the last mark's checkpoint, its counts
    start = None if done or not r.restore else rllib_train.checkpoint_folder(r.restore)  # checked by rllib_settings
    rllib_train.start_ray(r.address or None, r.num_cpus or None)
    try:
        algo = rllib_train.build_config(run.game, run.config, env_runners=r.env_runners,
                                        envs_per_runner=r.envs_per_runner, seed=run.seed,
                                        train_batch=r.train_batch, minibatch=r.minibatch, epochs=r.epochs, lr=r.lr,
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
            result = rllib_train.iteration_summary(algo.train())
            seconds += time.perf_counter() - t0
            steps += result["env_steps"]  # sampled this iteration (counted here: a restore may not keep RLlib's total)
            it += 1
            log.record({**{k: v for k, v in result.items() if k != "seat_returns"}, "env_steps": steps,
                        "seconds": round(seconds, 3)})
            log.say(rllib_train.describe_iteration(it, result, time.perf_counter() - t0))
            for mark in log.due(steps):
                folder = log.policy_path(mark, suffix="")
                path = algo.save_to_path(str(folder))
                rllib_train.write_policy_meta(path, run.game, run.config, tuple(s.network.hidden), steps)
                log.save(mark, steps, seconds, f"rllib:checkpoint={path}")
        algo.stop()
    finally:
        rllib_train.ray.shutdown()


# ------------------------------------------------------------------------------ registry
def _train_config():
    from domino_training.configs import TrainConfig

    return TrainConfig()


def _dmc_settings():
    from domino_training.learners.dmc import DMCSettings

    return DMCSettings()


LEARNERS: dict[str, LearnerEntry] = {
    "ppo": LearnerEntry(train_ppo, "our PPO on the vector env, from scratch (configs/<game>.yaml's train section)",
                        check=lambda run: ppo_run_config(run, "ppo"), settings=_train_config, sections=PPO_SECTIONS),
    "ppo_bc": LearnerEntry(train_ppo_bc, "imitation warm start (the heuristic by default), then our PPO",
                           check=lambda run: ppo_run_config(run, "ppo_bc"), settings=_train_config,
                           sections=PPO_SECTIONS),
    "dmc": LearnerEntry(train_dmc, "deep Monte-Carlo: a masked Q-network regressing episode returns, epsilon-greedy",
                        check=dmc_settings, settings=_dmc_settings),
    "sb3": LearnerEntry(train_sb3, "sb3_contrib MaskablePPO on SingleSeatEnv", check=lambda run: ppo_run_config(run, "sb3"),
                        settings=_train_config, sections=SB3_SECTIONS),
    "rllib": LearnerEntry(train_rllib, "Ray RLlib PPO, one shared masked policy (the rllib extra)", optional=True,
                          check=rllib_settings, settings=RLlibSettings),
}


def register_learner(name: str, fn: Callable, doc: str, optional: bool = False, check: Callable | None = None,
                     settings: Callable | None = None, sections: tuple | None = None) -> None:
    """Add a learner: ``fn(run: LearnerRun, log: PointLog, progress: bool) -> None`` trains until
    every mark of ``log.pending()`` is saved with ``log.save`` (see docs/examples/my_learner.py);
    ``check(run)``, optional, raises ConfigError for bad params before anything is written;
    ``settings()``, optional, gives the dataclass of its params with their defaults (training/settings.py:
    read them with ``apply``), whose comments are the docs table `params_table` prints."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ConfigError(f"learner name {name!r} must be an identifier such as 'my_learner'")
    if not callable(fn):
        raise ConfigError(f"learner {name!r}: {fn!r} is not callable")
    if settings is not None and not callable(settings):
        raise ConfigError(f"learner {name!r}: settings={settings!r} is not callable (a dataclass, or a function "
                          f"returning its default instance)")
    LEARNERS[name] = LearnerEntry(fn, str(doc), bool(optional), check, settings, sections)


def params_table(name: str) -> str:
    """The Markdown table of learner `name`'s params (key, default, meaning) from its settings dataclass."""
    entry = LEARNERS.get(name)
    if entry is None:
        raise LearnerError(f"unknown learner {name!r}; learners: {learner_names()}")
    if entry.settings is None:
        return f"(learner {name!r} declares no settings dataclass)"
    return table(entry.settings(), entry.sections)


def learner_names(optional: bool = True) -> list[str]:
    return [k for k, e in LEARNERS.items() if optional or not e.optional]


def train_learner(name: str, run: LearnerRun, progress: bool = False, minutes: float = 0.0,
                  evaluation: Evaluation | None = None, tensorboard: bool = False, echo=None,
                  on_start: Callable[[], None] | None = None) -> list[PolicyPoint]:
    """The one driver: train learner `name` through `run` into its run folder (see module doc and
    run_folder.py); every point, resumed ones included. `minutes` > 0 ends the run early (the last
    mark saved then, the ones between skipped; numba's compiling not counted); `evaluation` evaluates
    each point and the last one against the final opponents; `tensorboard` adds tb/; `echo(text)` gets
    the learner's lines; `on_start()` is called once the folder is accepted as this run's, before
    training (`domino train` writes its settings there then). `domino train`, the benchmark and the
    learned best responses all call this."""
    if name not in LEARNERS:
        raise LearnerError(f"unknown learner {name!r}; learners: {learner_names()}")
    run = dataclasses.replace(run, run_dir=Path(run.run_dir), marks=list(run.marks), params=dict(run.params))
    check_run(run)
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)) or not minutes >= 0:
        raise ConfigError(f"minutes={minutes!r} must be a number >= 0 (0: no time budget)")
    entry = LEARNERS[name]
    if entry.check is not None:
        entry.check(run)
    log = PointLog(run, name, minutes=minutes, evaluation=evaluation, tensorboard=tensorboard, echo=echo)
    try:
        if on_start is not None:
            on_start()
        if log.pending():
            entry.fn(run, log, progress)
    finally:
        log.close()
    if log.pending():
        raise LearnerError(f"learner {name!r} returned with marks {log.pending()} not saved")
    log.finish()
    return list(log.points)


__all__ = ["Evaluation", "LEARNERS", "params_table", "LearnerEntry", "LearnerError", "LearnerRun", "PointLog", "PolicyPoint", "check_run",
           "learner_names", "register_learner", "train_learner"]

