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

The learners (`LEARNERS`; `register_learner` adds one, see docs/examples/my_learner.py). Each is whole
in its module: its settings dataclass (bounds on the fields, checked by training/settings.py `check`),
its check, its ``train(run, log, progress)`` and its `register_learner` call; the built-ins are
`BUILTINS`, a name -> module table imported on first use. This module holds no learner's code.
Every learner takes its params the same way (`learner_settings`): its settings' defaults, the game
file's ``train.params.<learner>`` (configs.game_params), then the run's params (dotted keys; those
the run sets, `RUN_SET`, refused), checked once by its check; the driver hands them over as
``log.settings``:

- ``ppo``: our PPO (training/learners/ppo.py), from scratch; params its keys (``ppo.ent_coef``,
  ``network.hidden``, ``opponents.greedy``, ``budget.checkpoint_every``...), which may turn on
  ``imitation.*`` (a warm start whose decisions count in the budget) and ``distill.*`` (search
  distillation rounds alternating with PPO: the suite's strongest recipe, benchmarked through its
  params alone). Policy spec ``mlp:checkpoint=PATH``.
- ``ppo_bc``: the same with the imitation warm start on by default (200k decisions of the heuristic);
  the game files' `domino train` learner; its distillation rounds run by distill.py `PPOWithRounds`.
- ``dmc``: deep Monte-Carlo (training/learners/dmc.py); params ``dmc.*``, ``network.hidden``,
  ``opponents.*`` (dmc.py's `DMCSettings`). Spec ``dmc:checkpoint=PATH``.
- ``sb3``: sb3_contrib's MaskablePPO on SingleSeatEnv (training/learners/sb3.py); params ``sb3.*``,
  ``network.hidden``, ``opponents.*``. Spec ``mlp:checkpoint=PATH``
  (its actor exported in the policy format).
- ``rllib`` (optional: the `rllib` extra, not in CI): RLlib's PPO, training/learners/rllib.py (Ray imported there
  when it trains);
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
import importlib
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path

import domino_envs
from domino_envs.errors import ConfigError
from domino_training.configs import game_params
from domino_training.learners.run_folder import Evaluation, LearnerError, LearnerRun, PointLog, PolicyPoint
from domino_training.settings import apply, table, validate


@dataclass
class LearnerEntry:
    fn: Callable            # train(run, log, progress) -> None
    doc: str                # one line
    optional: bool = False  # needs an optional extra (not run in CI)
    check: Callable | None = None  # check(run) -> its settings (log.settings), ConfigError for bad params, first
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


# ------------------------------------------------------------------------------ registry
RUN_SET = {"seed": "LearnerRun.seed", "learner": "the learner's name", "budget.env_steps": "LearnerRun.budget and marks",
           "budget.minutes": "the time budget (train_learner's minutes)",
           "eval": "the run's Evaluation (domino train's eval section; learners do not evaluate)"}  # not params


def learner_settings(name: str, run: LearnerRun, settings, sections: tuple | None = None):
    """How every learner takes its params: `settings` (its defaults) with the game file's params for
    learner `name` (configs.game_params) on top, then the run's params, then checked (its ``validate()``
    or its bounds); ConfigError naming a bad key (and the file, for the file's)."""
    path, defaults = game_params(run.game, name)
    try:
        apply(settings, defaults, name, sections, RUN_SET)
    except ConfigError as err:
        raise ConfigError(f"{path}: train.params.{name}: {err}") from None
    apply(settings, run.params, name, sections, RUN_SET)
    validate(settings)
    return settings

# The built-in learners: name -> the module whose `register_learner` call registers it, imported on
# first use (so importing this package imports no torch). An in-tree learner is one module and one
# line here (and an entry in the benchmark's suite file).
BUILTINS = {
    "ppo": "domino_training.learners.ppo",
    "ppo_bc": "domino_training.learners.ppo",
    "dmc": "domino_training.learners.dmc",
    "sb3": "domino_training.learners.sb3",
    "rllib": "domino_training.learners.rllib",
}


class Registry(MutableMapping):
    """The learners by name: the registered ones, and the built-ins (`BUILTINS`) whose module is
    imported when one of them is first looked up."""

    def __init__(self, lazy: dict[str, str]):
        self.lazy, self.entries = dict(lazy), {}

    def __getitem__(self, name: str) -> LearnerEntry:
        if name not in self.entries and name in self.lazy:
            importlib.import_module(self.lazy[name])  # its register_learner call fills the entry
        return self.entries[name]

    def __setitem__(self, name: str, entry: LearnerEntry) -> None:
        self.entries[name] = entry

    def __delitem__(self, name: str) -> None:
        if name not in self.entries and name not in self.lazy:
            raise KeyError(name)
        self.entries.pop(name, None)
        self.lazy.pop(name, None)

    def __contains__(self, name) -> bool:
        return name in self.entries or name in self.lazy

    def __iter__(self):
        return iter({**dict.fromkeys(self.lazy), **dict.fromkeys(self.entries)})

    def __len__(self) -> int:
        return len(set(self.lazy) | set(self.entries))


LEARNERS: MutableMapping[str, LearnerEntry] = Registry(BUILTINS)
_BUILTIN_REGISTRY = LEARNERS  # where a built-in's own module registers it, even while a test swaps LEARNERS


def register_learner(name: str, fn: Callable, doc: str, optional: bool = False, check: Callable | None = None,
                     settings: Callable | None = None, sections: tuple | None = None) -> None:
    """Add a learner: ``fn(run: LearnerRun, log: PointLog, progress: bool) -> None`` trains until
    every mark of ``log.pending()`` is saved with ``log.save`` (see docs/examples/my_learner.py);
    ``check(run)``, optional, raises ConfigError for bad params before anything is written and returns
    the learner's settings, built once: the driver hands them to ``fn`` as ``log.settings``;
    ``settings()``, optional, gives the dataclass of its params with their defaults (training/settings.py:
    read them with ``apply``), whose comments are the docs table `params_table` prints."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ConfigError(f"learner name {name!r} must be an identifier such as 'my_learner'")
    if not callable(fn):
        raise ConfigError(f"learner {name!r}: {fn!r} is not callable")
    if settings is not None and not callable(settings):
        raise ConfigError(f"learner {name!r}: settings={settings!r} is not callable (a dataclass, or a function "
                          f"returning its default instance)")
    entry = LearnerEntry(fn, str(doc), bool(optional), check, settings, sections)
    if name in BUILTINS:
        _BUILTIN_REGISTRY[name] = entry
    LEARNERS[name] = entry


def params_table(name: str) -> str:
    """The Markdown table of learner `name`'s params (key, default, meaning) from its settings dataclass."""
    entry = LEARNERS.get(name)
    if entry is None:
        raise LearnerError(f"unknown learner {name!r}; learners: {learner_names()}")
    if entry.settings is None:
        return f"(learner {name!r} declares no settings dataclass)"
    return table(entry.settings(), entry.sections)


def learner_names(optional: bool = True) -> list[str]:
    """The learners' names (without the optional ones: each built-in's module is imported to say)."""
    return [k for k in LEARNERS if optional or not LEARNERS[k].optional]


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
    settings = entry.check(run) if entry.check is not None else None  # built once, handed over as log.settings
    log = PointLog(run, name, minutes=minutes, evaluation=evaluation, tensorboard=tensorboard, echo=echo,
                   settings=settings)
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


__all__ = ["BUILTINS", "Evaluation", "LEARNERS", "LearnerEntry", "LearnerError", "LearnerRun", "PointLog", "PolicyPoint",
           "RUN_SET", "check_run", "learner_names", "learner_settings", "params_table", "register_learner", "train_learner"]

