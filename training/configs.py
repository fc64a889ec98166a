"""Per-game YAML configs (configs/*.yaml): the game, its rule keys, and how to train an agent for it;
this module reads them (each file's YAML parsed once a process) and holds no learner's settings.

    game: draw_v0
    config:            # rule keys, overlaid on the engine's defaults by domino_envs.make
      num_players: 2
    train:             # optional: `domino train`'s run (training/learners/run_folder.py RunSettings)
      learner: ppo_bc  # who trains it (default ppo)
      seed: 0
      budget: {env_steps: 4000000, minutes: 55}
      eval: {every_updates: 20}
      params:          # each learner's params on this game, over its defaults (docs/learners.md)
        ppo: {ppo.ent_coef: 0.003}
        dmc: {dmc.epsilon: 0.05}
    demo:              # optional: `make demo`'s overrides, as dotted keys (run keys and params)
      budget.env_steps: 400000
    stages:            # optional: the shipped policy's recipe (scripts/ship.py), a stage per entry:
      - {budget.minutes: 12}            # the train section with these dotted keys
      - {budget.minutes: 45}            # then on from the last stage's actor (no imitation)

Every learner takes its params the same way: its settings' defaults, then the game file's
``params.<learner>`` (`game_params`: the benchmark's runs and `domino train` alike), then the run's
params (``--set ppo.lr=3e-4`` in `domino train`; values read as YAML, so ``--set
network.hidden=[64,64]`` gives a list). An unknown key anywhere fails with the allowed ones (rule
keys fail in domino_envs.make, params in the learner); the format before per-learner params
(``algo``, sections beside ``seed``) is refused in a line naming the new spelling.
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
from domino_training.settings import check, flatten, keys, parse_override, set_key

TOP_LEVEL_KEYS = ("game", "config", "train", "demo", "stages")


@dataclass
class RunConfig:
    """A learner's settings for one game: the game, its rule keys and the settings object (the ppo
    learners' TrainConfig, which sb3 shares), what their trainers take."""

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
RUN_SECTION_KEYS = ("learner", "seed", "budget", "eval", "params")  # a train section's keys
PARAM_SECTIONS = ("network", "ppo", "opponents", "imitation", "distill", "sb3", "dmc", "rllib")  # learners' sections


@dataclass
class GameRun:
    """A game file's run: the game, its rule keys, the run's settings (`run`: learner, seed, budget, eval;
    training/learners/run_folder.py `RunSettings`) and each learner's params on this game (`params`:
    learner name -> {dotted key: value}), the overrides' params on top of the run's learner's."""

    game: str
    config: dict
    run: Any
    params: dict

    @property
    def learner(self) -> str:
        return self.run.learner

    def learner_params(self) -> dict:
        """The run's learner's params: what its `LearnerRun.params` are."""
        return dict(self.params.get(self.run.learner, {}))

    def to_dict(self) -> dict:
        """The run as a game file says it (what --resume reads back)."""
        train = {**dataclasses.asdict(self.run), "params": copy.deepcopy(self.params)}
        return {"game": self.game, "config": dict(self.config), "train": train}


def apply_mapping(settings, mapping, prefix: str = "") -> None:
    """Set a (nested) mapping on the settings object `settings`, key by key (set_key: an unknown key or a
    wrong type names the dotted key)."""
    for key, value in mapping.items():
        dotted = f"{prefix}{key}"
        target = settings
        for part in dotted.split("."):
            target = getattr(target, part, None) if target is not None else None
        if dataclasses.is_dataclass(target) and isinstance(value, dict):
            apply_mapping(settings, value, dotted + ".")
        else:
            set_key(settings, dotted, value)


def _old_spelling(key: str) -> str | None:
    """The line refusing a train key of the format before per-learner params, naming the new spelling."""
    head = key.split(".")[0]
    if head == "algo":
        return "train.algo is now train.learner (and --algo is --learner)"
    if head in PARAM_SECTIONS or key == "budget.checkpoint_every":
        return (f"train.{key}: a learner's params go under train.params.<learner>, e.g. train.params.ppo: "
                f"{{{key}: ...}} (docs/training.md)")
    return None


def _params_section(params, path) -> dict:
    """The train section's ``params``: learner name -> its params as dotted keys."""
    if not isinstance(params, dict) or not all(isinstance(v, dict) or v is None for v in params.values()):
        raise ConfigError(f"{path}: train.params must map each learner's name to its params, e.g. "
                          f"{{ppo: {{ppo.lr: 0.0003}}}}; got {params!r}")
    return {str(name): flatten(value or {}) for name, value in params.items()}


def _train_section(data: dict, path) -> tuple[dict, dict]:
    """(the run's keys, each learner's params) of a file's train section; old spellings refused."""
    train = data.get("train") or {}
    if not isinstance(train, dict):
        raise ConfigError(f"{path}: 'train' must be a mapping, got {train!r}")
    for key in train:
        if key not in RUN_SECTION_KEYS:
            raise ConfigError(f"{path}: {_old_spelling(str(key)) or f'unknown train key {key!r}'}; the train "
                              f"section's keys: {', '.join(RUN_SECTION_KEYS)}")
    budget = train.get("budget")
    if isinstance(budget, dict) and "checkpoint_every" in budget:
        raise ConfigError(f"{path}: {_old_spelling('budget.checkpoint_every')}")
    return {k: v for k, v in train.items() if k != "params"}, _params_section(train.get("params") or {}, path)


def game_params(game: str, learner: str) -> tuple[Path | None, dict]:
    """(the game's shipped file, its params for `learner` as dotted keys): each learner's defaults on
    that game; (None, {}) for a game without a file."""
    try:
        path = default_path(game)
    except ConfigError:
        return None, {}
    return path, _train_section(_read(path), path)[1].get(learner, {})


def read_run(settings, path: str | Path | None = None, game: str | None = None, overrides: list[str] | tuple = (),
             demo: bool = False, learner: str | None = None) -> GameRun:
    """The run a config file (default: the game's file in configs/) describes: its train section's run keys
    read into `settings` (a fresh run_folder.RunSettings), its `demo` overrides when `demo`, then the
    command line's ('key=value': a rule key like num_players, a run key like seed or budget.env_steps, or
    a learner's param like ppo.lr, which goes on top of the run's learner's params); `learner` (--learner)
    over the file's. The rule config is checked by building the game; the params by the learner."""
    if path is None:
        if game is None:
            raise ConfigError("give a config file or a game name")
        path = default_path(game)
    data = _read(path)
    if game is not None and data["game"] != game:
        raise ConfigError(f"{path} is a config of {data['game']!r}, not of {game!r}")
    name, config = _game_and_rules(data, path)
    section, params = _train_section(data, path)
    apply_mapping(settings, section)
    pairs = []  # (key, value, the text a rule key is read from)
    if demo:
        demo_overrides = data.get("demo") or {}
        if not isinstance(demo_overrides, dict):
            raise ConfigError(f"{path}: 'demo' must be a mapping of dotted training keys, got {demo_overrides!r}")
        pairs += [(str(key), value, f"{key}={json.dumps(value)}") for key, value in demo_overrides.items()]
    pairs += [(*parse_override(text), text) for text in overrides]
    top = {f.name for f in dataclasses.fields(settings)}
    run_keys = top | set(keys(settings))  # the run's own (budget.env_steps); budget.checkpoint_every is a param
    rules = [text for key, _, text in pairs if "." not in key and key not in top | {"algo"}]
    config = {**config, **domino_envs.registry.config_from_pairs(rules, "--set")}
    domino_envs.make_game(name, **config)  # unknown or bad rule keys fail here
    learner_keys = {}
    for key, value, _ in pairs:
        if key.split(".")[0] == "algo":
            raise ConfigError(f"--set {key}: {_old_spelling(key)}")
        if key in run_keys:
            set_key(settings, key, value)
        elif "." in key:
            learner_keys[key] = value
    if learner is not None:
        settings.learner = learner
    check(settings)
    params[settings.learner] = {**params.get(settings.learner, {}), **learner_keys}
    return GameRun(name, dict(config), settings, params)


def read_stages(game: str, path: str | Path | None = None) -> list[list[str]]:
    """The recipe of the game's shipped policy (the config's `stages`, default one stage of the train
    section as it is): a list of 'key=value' overrides per stage (run keys and the run's learner's
    params). A stage after the first starts from the stage before's actor with no imitation
    (`stage_overrides`). The learner checks them (ppo.py `load_stages`)."""
    path = default_path(game) if path is None else path
    stages = _read(path).get("stages") or [{}]
    if not isinstance(stages, list) or not all(isinstance(st, dict) for st in stages):
        raise ConfigError(f"{path}: 'stages' must be a list of mappings of dotted training keys, got {stages!r}")
    return [[f"{key}={json.dumps(value)}" for key, value in st.items()] for st in stages]


__all__ = ["ConfigError", "GameRun", "RunConfig", "apply_mapping", "default_path", "game_params", "load",
           "make_from_file", "parse_override", "read_run", "read_stages", "set_key", "stage_overrides"]
