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
  folder of another run (learner, game, config, seed, budget, marks or params differ) is refused.
  ``ppo`` and ``dmc`` resume exactly (the same files as a run never stopped); ``sb3`` from its
  last mark with fresh deals (SB3 keeps no RNG state).
- **Params**: the learner's own settings as dotted keys; an unknown key is a ConfigError naming it.

The learners (`LEARNERS`; `register_learner` adds one, see docs/examples/my_learner.py):

- ``ppo``: our PPO (training/learners/ppo.py) from scratch. Base settings: the game's configs/<game>.yaml
  train section; params are its keys (``ppo.ent_coef``, ``network.hidden``, ``opponents.greedy``...),
  except those the run sets (seed, budget, algo) and imitation (that is ``ppo_bc``). Policy spec
  ``mlp:checkpoint=PATH``.
- ``ppo_bc``: the same with the config's imitation warm start (teacher heuristic, 200k decisions
  where the config has none); ``imitation.*`` params allowed.
- ``dmc``: deep Monte-Carlo (training/learners/dmc.py); params ``dmc.*``, ``network.hidden``,
  ``opponents.*`` (dmc.py's `DMCSettings`). Spec ``dmc:checkpoint=PATH``.
- ``sb3``: sb3_contrib's MaskablePPO on SingleSeatEnv (training/learners/sb3.py); params ``sb3.*``,
  ``network.hidden``, ``opponents.*``; base the same config section. Spec ``mlp:checkpoint=PATH``
  (its actor exported in the policy format).
- ``rllib`` (optional: the `rllib` extra, not in CI): RLlib's PPO through training/learners/rllib.py;
  params ``rllib.*`` (train_batch, minibatch, epochs, lr, entropy_coeff, env_runners, envs_per_runner, num_cpus),
  ``network.hidden``. Spec ``rllib:checkpoint=DIR``; resumes from its last mark.

A learner is a function ``train(run: LearnerRun, log: PointLog, progress: bool) -> None`` that
trains until every mark in ``log.pending()`` is saved with ``log.save(...)``; `train_learner`
checks the run, calls it and returns the points.
"""
from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import domino_envs
from domino_envs.errors import CheckpointError, ConfigError, DominoError

POINTS_FILE = "points.json"
POINTS_FORMAT = "domino-envs-learner-points/1"


class LearnerError(DominoError):
    """A learner that cannot run (unknown name, a missing optional dependency) or broke its contract."""


@dataclass
class LearnerRun:
    """One training run of a learner (see module doc)."""

    game: str                 # env name, e.g. "draw_v0"
    config: dict              # the game's rule keys (as RunConfig.config)
    seed: int
    budget: int               # env steps, every seat's decisions
    marks: list[int]          # env-step marks at which a policy is saved; the last == budget
    run_dir: Path
    params: dict = field(default_factory=dict)  # the learner's own settings, dotted keys

    def describe(self, learner: str) -> dict:
        """What identifies the run in points.json (a folder of another run is refused)."""
        return {"learner": learner, "game": self.game, "config": dict(self.config), "seed": int(self.seed),
                "budget": int(self.budget), "marks": [int(m) for m in self.marks], "params": dict(self.params)}


@dataclass
class PolicyPoint:
    """One saved policy: the env steps trained when it was saved, the training seconds until then,
    the agent spec that loads it, and the mark it was saved for."""

    env_steps: int
    seconds: float
    spec: str
    mark: int = 0


@dataclass
class LearnerEntry:
    fn: Callable            # train(run, log, progress) -> None
    doc: str                # one line
    optional: bool = False  # needs an optional extra (not run in CI)
    check: Callable | None = None  # check(run): ConfigError for bad params, before anything is written


# ------------------------------------------------------------------------------ the point log
class PointLog:
    """points.json of a run folder: the run's description and the points saved so far, rewritten
    atomically at each point. What a learner's train function uses to know what is left to do."""

    def __init__(self, run: LearnerRun, learner: str):
        self.run, self.learner = run, learner
        self.dir = Path(run.run_dir)
        self.path = self.dir / POINTS_FILE
        self.points: list[PolicyPoint] = []
        desc = run.describe(learner)
        if self.path.is_file():
            try:
                data = json.loads(self.path.read_text())
                theirs = data["run"]
                self.points = [PolicyPoint(int(p["env_steps"]), float(p["seconds"]), str(p["spec"]), int(p["mark"]))
                               for p in data["points"]]
            except (OSError, ValueError, KeyError, TypeError) as err:
                raise CheckpointError(f"{str(self.path)!r} is not a readable points file ({type(err).__name__}: {err})") \
                    from None
            diff = sorted(k for k in desc if theirs.get(k) != desc[k])
            if diff:
                raise CheckpointError(f"{str(self.dir)!r} holds another run ({', '.join(f'{k}={theirs.get(k)!r}' for k in diff)}; "
                                      f"this run has {', '.join(f'{k}={desc[k]!r}' for k in diff)}): use another run_dir")
            if not {p.mark for p in self.points} <= set(run.marks):
                raise CheckpointError(f"{str(self.path)!r} holds points for marks outside {run.marks}")
        else:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._write()

    def _write(self) -> None:
        data = {"format": POINTS_FORMAT, "run": self.run.describe(self.learner),
                "points": [dataclasses.asdict(p) for p in self.points]}
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(self.path)

    def pending(self) -> list[int]:
        """Marks not saved yet, in order."""
        done = {p.mark for p in self.points}
        return [m for m in self.run.marks if m not in done]

    def due(self, env_steps: int) -> list[int]:
        """Pending marks at or below `env_steps`."""
        return [m for m in self.pending() if m <= env_steps]

    def policy_path(self, mark: int, suffix: str = ".npz") -> Path:
        """Where the policy of `mark` goes (absolute, so the spec works from any folder)."""
        return (self.dir / f"policy_{int(mark):012d}{suffix}").resolve()

    def save(self, mark: int, env_steps: int, seconds: float, spec: str) -> PolicyPoint:
        """Record the policy saved for `mark` (write the file first: a point always has its file)."""
        if mark not in self.pending():
            raise LearnerError(f"mark {mark} is not pending (pending: {self.pending()})")
        point = PolicyPoint(int(env_steps), float(seconds), spec, int(mark))
        self.points.append(point)
        self.points.sort(key=lambda p: p.mark)
        self._write()
        return point


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


def _check_sections(learner: str, params: dict, allowed: tuple[str, ...], fixed: dict[str, str]) -> None:
    """ConfigError for a param the learner does not take: one the run sets, or outside its sections."""
    for key in params:
        head = key.split(".")[0]
        if key in fixed or head in fixed:
            raise ConfigError(f"{learner} learner: param {key!r} is set by {fixed.get(key, fixed.get(head))}, not by params")
        if head not in allowed:
            raise ConfigError(f"{learner} learner: unknown param {key!r}; its params are the keys of {list(allowed)}")


# ------------------------------------------------------------------------------ ppo, ppo_bc, dmc
def _drive(trainer, log: PointLog, budget: int, agent: str, checkpoint_every: int, progress: bool,
           offset: int = 0) -> None:
    """The loop ppo and dmc share: save every due mark (policy file, point with the spec `agent`:checkpoint=,
    then checkpoint, so a kill between them loses nothing), stop at the budget, else one more iteration."""
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=budget, initial=min(budget, offset + trainer.env_steps), unit="step", desc=log.learner)
    since = 0
    try:
        while True:
            steps = offset + trainer.env_steps
            due = log.due(steps)
            for mark in due:
                path = trainer.export_policy(log.policy_path(mark))
                log.save(mark, steps, trainer.seconds, f"{agent}:checkpoint={path}")
            if due:
                trainer.save_checkpoint()
                since = 0
            if not log.pending():
                return
            trainer.iterate()
            since += 1
            if since >= checkpoint_every:
                trainer.save_checkpoint()
                since = 0
            if bar is not None:
                bar.update(min(budget, offset + trainer.env_steps) - bar.n)
    finally:
        if bar is not None:
            bar.close()


PPO_FIXED = {"seed": "LearnerRun.seed", "algo": "the learner's name", "budget": "LearnerRun.budget and marks",
             "eval": "the benchmark (learners do not evaluate)"}


def ppo_run_config(run: LearnerRun, learner: str):
    """The RunConfig ppo/ppo_bc/sb3 train with: the game's config file's train section, then params."""
    from domino_training.configs import RunConfig, TrainConfig, _apply_mapping, _read, default_path, set_key, validate

    allowed = {"ppo": ("ppo", "network", "opponents"), "ppo_bc": ("ppo", "network", "opponents", "imitation"),
               "sb3": ("sb3", "network", "opponents")}[learner]
    fixed = dict(PPO_FIXED)
    if learner == "ppo":
        fixed["imitation"] = "the learner: ppo trains from scratch (ppo_bc warm-starts)"
    _check_sections(learner, run.params, allowed, fixed)
    train = TrainConfig()
    try:
        path = default_path(run.game)
    except ConfigError:
        path = None  # a game without a shipped config file: TrainConfig's defaults
    if path is not None:
        _apply_mapping(train, _read(path).get("train") or {})
    train.algo = "sb3" if learner == "sb3" else "ppo"
    train.seed = int(run.seed)
    train.budget.env_steps, train.budget.minutes = int(run.budget), 0.0
    train.eval.every_updates, train.eval.final_deals = 0, 0
    # search distillation (a game config's, for shipping) is not one of these learners
    train.distill.rounds = train.distill.every_updates = 0
    if learner == "ppo":
        train.imitation.decisions = 0
    elif learner == "ppo_bc" and train.imitation.decisions == 0:
        train.imitation.decisions = 200_000
    for key, value in run.params.items():
        set_key(train, key, value)
    validate(train)
    return RunConfig(run.game, dict(run.config), train)


def _imitation_steps(decisions: int) -> int:
    """Env steps imitate.demonstrations plays for `decisions` (it steps 64 games at a time)."""
    return math.ceil(decisions / 64) * 64 if decisions else 0


def train_ppo(run: LearnerRun, log: PointLog, progress: bool, learner: str = "ppo") -> None:
    """Our PPO (ppo.py Trainer) through the marks; ppo_bc first runs the imitation warm start."""
    from domino_training.learners.ppo import Trainer

    cfg = ppo_run_config(run, learner)
    offset = _imitation_steps(cfg.train.imitation.decisions)
    if offset >= run.budget:
        raise ConfigError(f"{learner}: imitation.decisions={cfg.train.imitation.decisions} leaves nothing of the "
                          f"budget {run.budget} for PPO")
    cfg.train.budget.env_steps = run.budget - offset  # the lr schedule spans the PPO part
    trainer = Trainer(cfg, run.run_dir)
    if trainer.checkpoint_path.is_file():
        trainer.load_checkpoint()
    elif offset:
        t0 = time.perf_counter()
        trainer.warm_start()
        trainer.seconds += time.perf_counter() - t0
        trainer.save_checkpoint()
    _drive(trainer, log, run.budget, "mlp", cfg.train.budget.checkpoint_every, progress, offset)


def train_ppo_bc(run: LearnerRun, log: PointLog, progress: bool) -> None:
    """Imitation warm start, then our PPO."""
    train_ppo(run, log, progress, learner="ppo_bc")


def dmc_settings(run: LearnerRun):
    """The DMCSettings of `run`'s params (ConfigError naming an unknown or bad key)."""
    from domino_training.configs import set_key
    from domino_training.learners.dmc import DMCSettings, validate_settings

    _check_sections("dmc", run.params, ("dmc", "network", "opponents"), PPO_FIXED)
    settings = DMCSettings()
    for key, value in run.params.items():
        set_key(settings, key, value)
    validate_settings(settings)
    return settings


def train_dmc(run: LearnerRun, log: PointLog, progress: bool) -> None:
    """Deep Monte-Carlo (training/learners/dmc.py) through the marks."""
    from domino_training.learners.dmc import DMCTrainer

    settings = dmc_settings(run)
    trainer = DMCTrainer(run.game, run.config, settings, run.seed, run.run_dir)
    if trainer.checkpoint_path.is_file():
        trainer.load_checkpoint()
    _drive(trainer, log, run.budget, "dmc", settings.dmc.checkpoint_every, progress)


# ------------------------------------------------------------------------------ sb3, rllib
def train_sb3(run: LearnerRun, log: PointLog, progress: bool) -> None:
    """MaskablePPO on SingleSeatEnv (training/learners/sb3.py `train_sb3_points`)."""
    try:
        from domino_training.learners.sb3 import train_sb3_points
    except ImportError as err:
        raise LearnerError(f"the sb3 learner needs stable-baselines3 and sb3-contrib (the train extra: "
                           f"pip install -e '.[train]'): {err}") from None
    cfg = ppo_run_config(run, "sb3")
    train_sb3_points(cfg, run.run_dir, run.budget, log.pending(),
                     lambda mark, steps, seconds, path: log.save(mark, steps, seconds, f"mlp:checkpoint={path}"),
                     log.policy_path, progress)


@dataclass
class RLlibParams:
    train_batch: int = 2000
    minibatch: int = 250
    epochs: int = 4
    lr: float = 3e-4
    entropy_coeff: float = 0.01
    env_runners: int = 0
    envs_per_runner: int = 8  # games a runner steps side by side (one forward for all)
    num_cpus: int = 0        # 0: every core


@dataclass
class RLlibNetwork:
    hidden: list = field(default_factory=lambda: [128, 128])


@dataclass
class RLlibSettings:
    rllib: RLlibParams = field(default_factory=RLlibParams)
    network: RLlibNetwork = field(default_factory=RLlibNetwork)


def rllib_settings(run: LearnerRun) -> RLlibSettings:
    """The rllib learner's settings from params (ConfigError naming an unknown or bad key)."""
    from domino_training.configs import set_key

    _check_sections("rllib", run.params, ("rllib", "network"), PPO_FIXED)
    s = RLlibSettings()
    for key, value in run.params.items():
        set_key(s, key, value)
    for key in ("train_batch", "minibatch", "epochs", "envs_per_runner"):
        if getattr(s.rllib, key) < 1:
            raise ConfigError(f"rllib.{key}={getattr(s.rllib, key)!r} must be >= 1")
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
    rllib_train.start_ray(None, r.num_cpus or None)
    try:
        algo = rllib_train.build_config(run.game, run.config, env_runners=r.env_runners,
                                        envs_per_runner=r.envs_per_runner, seed=run.seed,
                                        train_batch=r.train_batch, minibatch=r.minibatch, epochs=r.epochs, lr=r.lr,
                                        entropy_coeff=r.entropy_coeff, hidden=tuple(s.network.hidden)).build_algo()
        if done is not None:
            algo.restore_from_path(str(Path(done.spec.split("=", 1)[1])))
        seconds, steps = (done.seconds, done.env_steps) if done else (0.0, 0)
        while log.pending():
            t0 = time.perf_counter()
            result = rllib_train.iteration_summary(algo.train())
            seconds += time.perf_counter() - t0
            steps += result["env_steps"]  # sampled this iteration (counted here: a restore may not keep RLlib's total)
            for mark in log.due(steps):
                folder = log.policy_path(mark, suffix="")
                path = algo.save_to_path(str(folder))
                rllib_train.write_policy_meta(path, run.game, run.config, tuple(s.network.hidden), steps)
                log.save(mark, steps, seconds, f"rllib:checkpoint={path}")
        algo.stop()
    finally:
        rllib_train.ray.shutdown()


# ------------------------------------------------------------------------------ registry
LEARNERS: dict[str, LearnerEntry] = {
    "ppo": LearnerEntry(train_ppo, "our PPO on the vector env, from scratch (configs/<game>.yaml's train section)",
                        check=lambda run: ppo_run_config(run, "ppo")),
    "ppo_bc": LearnerEntry(train_ppo_bc, "imitation warm start (the heuristic by default), then our PPO",
                           check=lambda run: ppo_run_config(run, "ppo_bc")),
    "dmc": LearnerEntry(train_dmc, "deep Monte-Carlo: a masked Q-network regressing episode returns, epsilon-greedy",
                        check=dmc_settings),
    "sb3": LearnerEntry(train_sb3, "sb3_contrib MaskablePPO on SingleSeatEnv", check=lambda run: ppo_run_config(run, "sb3")),
    "rllib": LearnerEntry(train_rllib, "Ray RLlib PPO, one shared masked policy (the rllib extra)", optional=True,
                          check=rllib_settings),
}


def register_learner(name: str, fn: Callable, doc: str, optional: bool = False, check: Callable | None = None) -> None:
    """Add a learner: ``fn(run: LearnerRun, log: PointLog, progress: bool) -> None`` trains until
    every mark of ``log.pending()`` is saved with ``log.save`` (see docs/examples/my_learner.py);
    ``check(run)``, optional, raises ConfigError for bad params before anything is written."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ConfigError(f"learner name {name!r} must be an identifier such as 'my_learner'")
    if not callable(fn):
        raise ConfigError(f"learner {name!r}: {fn!r} is not callable")
    LEARNERS[name] = LearnerEntry(fn, str(doc), bool(optional), check)


def learner_names(optional: bool = True) -> list[str]:
    return [k for k, e in LEARNERS.items() if optional or not e.optional]


def train_learner(name: str, run: LearnerRun, progress: bool = False) -> list[PolicyPoint]:
    """Train learner `name` through `run` (see module doc); every point, resumed ones included."""
    if name not in LEARNERS:
        raise LearnerError(f"unknown learner {name!r}; learners: {learner_names()}")
    run = dataclasses.replace(run, run_dir=Path(run.run_dir), marks=list(run.marks), params=dict(run.params))
    check_run(run)
    entry = LEARNERS[name]
    if entry.check is not None:
        entry.check(run)
    log = PointLog(run, name)
    if log.pending():
        entry.fn(run, log, progress)
    if log.pending():
        raise LearnerError(f"learner {name!r} returned with marks {log.pending()} not saved")
    return list(log.points)


__all__ = ["LEARNERS", "LearnerEntry", "LearnerError", "LearnerRun", "PointLog", "PolicyPoint", "check_run",
           "learner_names", "register_learner", "train_learner"]

