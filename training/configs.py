"""Per-game YAML configs (configs/*.yaml): the game, its rule keys, and how to train an agent for it;
this module reads them (each file's YAML parsed once a process) and holds no learner's settings.

    game: draw_v0
    config:            # rule keys, overlaid on the engine's defaults by domino_envs.make
      num_players: 2
    train:             # optional: training settings (the ppo learner's TrainConfig, training/learners/ppo.py);
      seed: 0          # missing keys keep defaults
      budget: {env_steps: 4000000, minutes: 55}
      ppo: {lr: 0.0003}
    demo:              # optional: `make demo`'s overrides of `train`, as dotted keys
      budget.env_steps: 400000
    stages:            # optional: the shipped policy's recipe (scripts/ship.py), a stage per entry:
      - {budget.minutes: 12}            # the train section with these dotted keys
      - {budget.minutes: 45}            # then on from the last stage's actor (no imitation)

An unknown key anywhere fails with the list of allowed keys (rule keys fail in domino_envs.make).
Any training key can be overridden from the command line with ``--set ppo.lr=3e-4`` (values are
read as YAML, so ``--set network.hidden=[64,64]`` gives a list); a value of the wrong type fails.
The train section is read into a settings object the caller gives (training/settings.py's pattern:
a dataclass of sections, bounds on the fields, a ``validate()`` for the rules between keys), so the
learners' settings live with the learners.
"""
from __future__ import annotations

import copy
import dataclasses
import importlib.resources
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

import domino_envs
from domino_envs.core import ConfigError
from domino_training.settings import apply, check, parse_override, set_key

TOP_LEVEL_KEYS = ("game", "config", "train", "demo", "stages")


@dataclass
class RunConfig:
    """Everything a training run needs: the game, its rule keys and the training settings (a settings
    dataclass: the ppo learner's TrainConfig for a game file's train section)."""

    game: str
    config: dict
    train: Any

    def to_dict(self) -> dict:
        return {"game": self.game, "config": dict(self.config), "train": dataclasses.asdict(self.train)}


_PARSED: dict[str, Any] = {}  # a config file's text -> its YAML: each text is parsed once a process


def _read(path: str | Path) -> dict:
    """A config file's mapping, checked at the top level; a copy of the one parse of its text (the run's
    settings, the default-path lookup and the stages all read through here)."""
    try:
        text = Path(path).read_text()
        if text not in _PARSED:
            _PARSED[text] = yaml.safe_load(text)
        data = copy.deepcopy(_PARSED[text])
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the config file ({err.strerror})") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML ({err})") from None
    if not isinstance(data, dict) or "game" not in data:
        raise ConfigError(f"{path}: expected a mapping with a 'game' key (and optional 'config'), got {data!r}")
    extra = set(data) - set(TOP_LEVEL_KEYS)
    if extra:
        raise ConfigError(f"{path}: unknown top-level key(s) {sorted(extra)}; allowed: {sorted(TOP_LEVEL_KEYS)}")
    return data


def load(path: str | Path) -> tuple[str, dict]:
    """(game name, rule config dict) from a YAML file; ConfigError naming what is malformed."""
    return _game_and_rules(_read(path), path)


def _game_and_rules(data: dict, path) -> tuple[str, dict]:
    config = data.get("config") or {}
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: 'config' must be a mapping, got {config!r}")
    return data["game"], config


def read_stages(settings, game: str, path: str | Path | None = None) -> list[list[str]]:
    """The recipe of the game's shipped policy (the config's `stages`, default one stage of the train
    section as it is): a list of 'key=value' overrides per stage. A stage after the first starts from
    the stage before's actor with no imitation (`stage_overrides`). Each is checked here, as `read_run`
    reads it into `settings` (a fresh settings object: the ppo learner's TrainConfig)."""
    path = default_path(game) if path is None else path
    stages = _read(path).get("stages") or [{}]
    if not isinstance(stages, list) or not all(isinstance(st, dict) for st in stages):
        raise ConfigError(f"{path}: 'stages' must be a list of mappings of dotted training keys, got {stages!r}")
    out = [[f"{key}={json.dumps(value)}" for key, value in st.items()] for st in stages]
    for k, overrides in enumerate(out):
        try:
            read_run(copy.deepcopy(settings), path, overrides=overrides)
        except ConfigError as err:
            raise ConfigError(f"{path}: stages[{k}]: {err}") from None
    return out


def stage_overrides(stage: list[str], previous_policy: str | Path | None) -> list[str]:
    """A stage's overrides: a stage after the first goes on from `previous_policy` with no imitation."""
    if previous_policy is None:
        return list(stage)
    return [f"network.init_actor={previous_policy}", "imitation.decisions=0", *stage]


def make_from_file(path: str | Path, **env_kwargs):
    """The PettingZoo env a config file describes."""
    name, config = load(path)
    return domino_envs.make(name, **config, **env_kwargs)


def default_path(game: str) -> Path:
    """The shipped config file of a registered game: the repo's configs/<file>.yaml, installed as the
    package data `domino_training.game_configs` (so a wheel install finds it too)."""
    folder = Path(str(importlib.resources.files("domino_training.game_configs")))
    for path in sorted(folder.glob("*.yaml")):
        if _read(path)["game"] == game:
            return path
    raise ConfigError(f"no config file in {folder} for game {game!r}; games: {domino_envs.game_names()}")


# ------------------------------------------------------------------------------ train section
def apply_mapping(train, mapping, prefix: str = "") -> None:
    """Set a train section's (nested) mapping on the settings object `train`, key by key (set_key:
    an unknown key or a wrong type names the dotted key)."""
    if not isinstance(mapping, dict):
        raise ConfigError(f"train{'.' + prefix if prefix else ''} must be a mapping, got {mapping!r}")
    for key, value in mapping.items():
        dotted = f"{prefix}.{key}" if prefix else str(key)
        target = train
        for part in dotted.split("."):
            target = getattr(target, part, None) if target is not None else None
        if dataclasses.is_dataclass(target) and isinstance(value, dict):
            apply_mapping(train, value, dotted)
        else:
            set_key(train, dotted, value)


def validate(train) -> None:
    """The settings' own ``validate()`` where they have one (the bounds, then their rules between keys),
    else their bounds (training/settings.py `check`)."""
    if callable(getattr(train, "validate", None)):
        train.validate()
    else:
        check(train)


def game_train_config(settings, game: str):
    """`settings` (a fresh settings object) with the train section of the game's shipped config file
    on top (as they are for a game without one): the base of the ppo, ppo_bc and sb3 learners."""
    try:
        path = default_path(game)
    except ConfigError:
        return settings
    apply_mapping(settings, _read(path).get("train") or {})
    return settings


def learner_config(settings, run, learner: str, algo: str, sections: tuple, run_sets: dict, adjust=None) -> RunConfig:
    """The RunConfig a learner on a game file's train section (ppo, ppo_bc, sb3) trains `run` (a
    LearnerRun) with: `settings` (a fresh settings object) with the game's train section without its
    stages on top (no time budget, no evaluation, no distillation), `adjust(train)` (the learner's own
    defaults), then the run's params (keys of `sections`; the `run_sets` keys are the run's, not
    params), checked."""
    train = game_train_config(settings, run.game)
    train.algo = algo
    train.seed = int(run.seed)
    train.budget.env_steps, train.budget.minutes = int(run.budget), 0.0
    train.eval.every_updates, train.eval.final_deals = 0, 0
    train.distill.rounds = train.distill.every_updates = 0
    if adjust is not None:
        adjust(train)
    apply(train, run.params, learner, sections, run_sets)
    validate(train)
    return RunConfig(run.game, dict(run.config), train)


def read_run(settings, path: str | Path | None = None, game: str | None = None, overrides: list[str] | tuple = (),
             demo: bool = False) -> RunConfig:
    """RunConfig from a config file (default: the game's file in configs/) read into `settings` (a fresh
    settings object), its `demo` overrides when `demo`, then command-line overrides ('key=value': a rule
    key like num_players, or a dotted training key like ppo.lr); the rule config is checked by building
    the game."""
    if path is None:
        if game is None:
            raise ConfigError("give a config file or a game name")
        path = default_path(game)
    data = _read(path)
    if game is not None and data["game"] != game:
        raise ConfigError(f"{path} is a config of {data['game']!r}, not of {game!r}")
    name, config = _game_and_rules(data, path)
    # a training key is dotted (ppo.lr=3e-4) or a top-level field (algo, seed); any other key is a rule key
    # (num_players=3), checked by the game
    top = {f.name for f in dataclasses.fields(settings)}
    rules = [text for text in overrides if "." not in (key := text.partition("=")[0].strip()) and key not in top]
    overrides = [text for text in overrides if text not in rules]
    config = {**config, **domino_envs.registry.config_from_pairs(rules, "--set")}
    domino_envs.make_game(name, **config)  # unknown or bad rule keys fail here
    train = settings
    apply_mapping(train, data.get("train") or {})
    if demo:
        demo_overrides = data.get("demo") or {}
        if not isinstance(demo_overrides, dict):
            raise ConfigError(f"{path}: 'demo' must be a mapping of dotted training keys, got {demo_overrides!r}")
        for key, value in demo_overrides.items():
            set_key(train, str(key), value)
    for text in overrides:
        set_key(train, *parse_override(text))
    validate(train)
    return RunConfig(name, dict(config), train)


__all__ = ["ConfigError", "RunConfig", "apply_mapping", "default_path", "game_train_config", "learner_config", "load",
           "make_from_file", "parse_override", "read_run", "read_stages", "set_key", "stage_overrides", "validate"]
