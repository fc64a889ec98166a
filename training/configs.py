"""Per-game YAML configs (configs/*.yaml): the game, its rule keys, and how to train an agent for it.

    game: draw_v0
    config:            # rule keys, overlaid on the engine's defaults by domino_envs.make
      num_players: 2
    train:             # optional: training settings (TrainConfig below); missing keys keep defaults
      seed: 0
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
"""
from __future__ import annotations

import copy
import dataclasses
import importlib.resources
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

import domino_envs
from domino_envs.core import ConfigError
from domino_training.settings import HIDDEN, bounded, check, parse_override, set_key

if TYPE_CHECKING:
    import torch

TOP_LEVEL_KEYS = ("game", "config", "train", "demo", "stages")
ALGOS = ("ppo", "sb3")
# The opponent pool's kinds, declared once (the `Opponents` weights are named after them; a drawn
# kind is its index here, training/learners/pool.py `draw_kinds`):
#   self_play  the learner in every seat (all seats' decisions train it)
#   snapshot   a frozen earlier learner in the other seats (ppo; sb3 plays it as its learner copy)
#   random, greedy, heuristic  that baseline agent in the other seats
#   target     the fixed agent `target_spec` in the other seats (ppo only: a best response)
# dmc plays the kinds without snapshot and target, sb3 those without target.
POOL_KINDS = ("self_play", "snapshot", "random", "greedy", "heuristic", "target")
REWARDS = ("win", "score")
TEACHERS = ("heuristic", "greedy", "random")  # the baselines; any agent spec that plays from observations teaches
# the bounds no number states (training/settings.py `bounded`), named where they are used
TEACHER = (lambda v: _is_spec(v), f"an agent spec that plays from observations, e.g. {list(TEACHERS)}, trained, "
           f"mlp:checkpoint=PATH")
SEARCH_SPEC = (lambda v: _is_spec(v), "an agent spec, e.g. pimc:n=64,rollout=random")


def _device(key: str, value) -> None:
    check_device(key, value)


@dataclass
class Budget:
    env_steps: int = bounded(2_000_000, min=1)  # decisions stepped in the vector env (every seat's), or SB3 timesteps
    minutes: float = bounded(0.0, min=0)  # wall-clock cap on training (0: none), numba's compiling and the imitation
                                    # warm start not counted (run_folder.BudgetClock); a resumed run gets it afresh
    checkpoint_every: int = bounded(10, min=1)  # updates between checkpoints (the last one is always saved)


@dataclass
class Network:
    hidden: list = bounded([256, 256], rule=HIDDEN)  # MLP widths of the actor and the critic
    init_actor: str = ""            # a policy file (.npz) the actor starts from, e.g. a best response's target


@dataclass
class PPO:
    num_envs: int = bounded(256, min=1)  # games stepped in lockstep
    rollout_steps: int = bounded(64, min=1)  # vector steps per update (num_envs * rollout_steps decisions)
    lr: float = bounded(3e-4, gt=0)  # Adam's learning rate
    anneal_lr: bool = True          # linear decay to 0 over the budget
    lr_horizon: int = bounded(0, min=0)  # decisions over which anneal_lr takes lr to 0 (0: budget.env_steps); a run
                                    # stopped early on purpose (a stage redoing a time-capped run) keeps its schedule
    gamma: float = bounded(1.0, min=0, max=1)  # episodes are short and end in one reward: no discount
    gae_lambda: float = bounded(0.95, min=0, max=1)  # GAE's lambda: bias against variance of the advantages
    clip: float = bounded(0.2, gt=0)  # PPO's ratio clip
    epochs: int = bounded(4, min=1)  # passes over each rollout
    minibatch_size: int = bounded(4096, min=1)  # decisions per gradient step
    ent_coef: float = bounded(0.01, min=0)  # entropy bonus
    vf_coef: float = bounded(0.5, min=0)  # value loss weight
    max_grad_norm: float = bounded(0.5, gt=0)  # gradient norm clip
    reward: str = bounded("win", choices=REWARDS)  # "win": the hand's win share minus the fair share; "score": the
                                    # game's rewards
    score_scale: float = bounded(0.02, gt=0)  # multiplies the game's rewards when reward == "score"
    perfect_info_critic: bool = False  # the critic reads every seat's observation (actor: its own only)
    torch_threads: int = bounded(1, min=1)  # torch intra-op threads of the update and the fits (collection runs on 1):
                                    # 2 gave 22.4k decisions/s against 18.5k with 1 in Draw on an idle 2-core
                                    # machine (docs/speed.md), but costs several times over beside another
                                    # training; results differ between thread counts
    device: str = bounded("cpu", verify=_device)  # any torch device that exists: cpu, cuda, cuda:N, mps
                                    # (check_device); the env
                                    # stays on CPU, the network, its forward passes and the update run there


@dataclass
class Opponents:
    """Who plays the seats the learner does not: weights of the pool, drawn per game."""

    self_play: float = bounded(0.5, min=0)  # every seat is the learner (each seat's decisions train it)
    snapshot: float = bounded(0.2, min=0)  # a frozen earlier learner in the other seats
    random: float = bounded(0.1, min=0)  # random players in the other seats
    greedy: float = bounded(0.1, min=0)  # greedy players in the other seats
    heuristic: float = bounded(0.1, min=0)  # the game's heuristic in the other seats
    target: float = bounded(0.0, min=0)  # a fixed agent, `target_spec`, in the other seats (ppo only; a best response)
    target_spec: str = ""           # its agent spec: random, greedy, heuristic, mlp:checkpoint=PATH, trained...
    snapshot_every: int = bounded(10, min=1)  # updates between snapshots added to the pool
    max_snapshots: int = bounded(8, min=1)  # oldest dropped first


@dataclass
class Imitation:
    """Warm start: the actor first copies an agent's choices (training/learners/imitate.py); 0 decisions: off."""

    teacher: str = bounded("heuristic", rule=TEACHER)  # an agent spec that plays from observations: heuristic, greedy,
                                    # trained...
    decisions: int = bounded(0, min=0)  # teacher decisions to learn from
    epochs: int = bounded(8, min=1)  # passes over the demonstrations
    lr: float = bounded(1e-3, gt=0)  # Adam's learning rate while cloning


@dataclass
class Distill:
    """Search distillation (training/learners/distill.py): `rounds` after imitation, before PPO, and one more
    after every `every_updates` PPO updates (expert iteration); 0 and 0: off."""

    teacher: str = bounded("pimc:n=64,rollout=random", rule=SEARCH_SPEC)  # an agent spec (policy=current: the actor as
                                    # it is then); a search's
    #                                            action values are its targets
    rounds: int = bounded(0, min=0)  # DAgger rounds: the actor plays, the teacher labels, the actor fits all so far
    every_updates: int = bounded(0, min=0)  # > 0: another round after every that many PPO updates, alternating with PPO
    window: int = bounded(0, min=0)  # fit the positions of the last `window` rounds (0: all rounds so far)
    positions: int = bounded(20000, min=1)  # teacher-labelled decisions a round
    epochs: int = bounded(4, min=1)  # passes over every position gathered so far, each round
    lr: float = bounded(3e-4, gt=0)  # Adam's learning rate of each round's fit
    temperature: float = bounded(0.0, min=0)  # 0: the teacher's best actions (ties split); > 0: softmax(win share /
                                    # temperature)
    teacher_moves: float = bounded(0.5, min=0, max=1)  # round 0 only: share of the student's decisions the teacher
                                    # plays instead
    teacher_deals: int = bounded(0, min=0)  # > 0: each round's teacher first plays this many duplicate deals against
    #                                 teacher_opponent (eval.seed's deals, the same every round): distill.csv's teacher_win
    teacher_opponent: str = bounded("pimc:n=64,rollout=random", rule=SEARCH_SPEC)  # the table the teacher's strength
                                    # is measured against


@dataclass
class Eval:
    every_updates: int = bounded(25, min=0)  # evaluation against `opponents` during training every that many PPO
                                    # updates
    #                                 worth of env steps (ppo.num_envs x ppo.rollout_steps each), whatever the learner
    every_env_steps: int = bounded(0, min=0)  # > 0: every that many env steps instead (the unit of every learner)
    deals: int = bounded(100, min=1)  # duplicate deals per matchup during training
    opponents: list = field(default_factory=lambda: ["random", "greedy", "heuristic"])
    final_deals: int = bounded(500, min=0)  # duplicate deals per matchup of the table at the end (0: none)
    final_opponents: list = field(default_factory=lambda: ["random", "greedy", "heuristic"])
    seed: int = 12345               # deals of the evaluation (the same at every point of a run)


@dataclass
class SB3:
    n_steps: int = bounded(512, min=1)  # MaskablePPO's rollout length per env
    batch_size: int = bounded(256, min=1)  # MaskablePPO's minibatch
    n_epochs: int = bounded(4, min=1)  # passes over each rollout
    lr: float = bounded(3e-4, gt=0)  # Adam's learning rate
    gamma: float = bounded(1.0, min=0, max=1)  # discount (1: episodes are short and end in one reward)
    ent_coef: float = bounded(0.01, min=0)  # entropy bonus
    n_envs: int = bounded(4, min=1)  # SingleSeatEnv copies in a DummyVecEnv
    refresh_every: int = bounded(10_000, min=1)  # timesteps between copies of the learner into the self-play opponents
    torch_threads: int = bounded(1, min=1)  # MaskablePPO was fastest with 1 (2,863 timesteps/s vs 2,338 with 2)


@dataclass
class TrainConfig:
    algo: str = bounded("ppo", choices=ALGOS)  # "ppo" (ours, on the vector env) or "sb3" (MaskablePPO on SingleSeatEnv)
    seed: int = bounded(0, min=0)
    budget: Budget = field(default_factory=Budget)
    network: Network = field(default_factory=Network)
    ppo: PPO = field(default_factory=PPO)
    opponents: Opponents = field(default_factory=Opponents)
    imitation: Imitation = field(default_factory=Imitation)
    distill: Distill = field(default_factory=Distill)
    eval: Eval = field(default_factory=Eval)
    sb3: SB3 = field(default_factory=SB3)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class RunConfig:
    """Everything a training run needs: the game, its rule keys and the training settings."""

    game: str
    config: dict
    train: TrainConfig

    def to_dict(self) -> dict:
        return {"game": self.game, "config": dict(self.config), "train": self.train.to_dict()}


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
    data = _read(path)
    config = data.get("config") or {}
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: 'config' must be a mapping, got {config!r}")
    return data["game"], config


def load_stages(game: str, path: str | Path | None = None) -> list[list[str]]:
    """The recipe of the game's shipped policy (the config's `stages`, default one stage of the train
    section as it is): a list of 'key=value' overrides per stage. A stage after the first starts from
    the stage before's actor with no imitation (`stage_overrides`). Each is checked here."""
    path = default_path(game) if path is None else path
    stages = _read(path).get("stages") or [{}]
    if not isinstance(stages, list) or not all(isinstance(st, dict) for st in stages):
        raise ConfigError(f"{path}: 'stages' must be a list of mappings of dotted training keys, got {stages!r}")
    out = [[f"{key}={json.dumps(value)}" for key, value in st.items()] for st in stages]
    for k, overrides in enumerate(out):
        try:
            load_run(path, overrides=overrides)
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
def _apply_mapping(train: TrainConfig, mapping, prefix: str = "") -> None:
    if not isinstance(mapping, dict):
        raise ConfigError(f"train{'.' + prefix if prefix else ''} must be a mapping, got {mapping!r}")
    for key, value in mapping.items():
        dotted = f"{prefix}.{key}" if prefix else str(key)
        target = train
        for part in dotted.split("."):
            target = getattr(target, part, None) if target is not None else None
        if dataclasses.is_dataclass(target) and isinstance(value, dict):
            _apply_mapping(train, value, dotted)
        else:
            set_key(train, dotted, value)


def game_train_config(game: str) -> TrainConfig:
    """The train section of the game's shipped config file as a TrainConfig (TrainConfig's defaults for a
    game without one): the base of the ppo, ppo_bc and sb3 learners."""
    train = TrainConfig()
    try:
        path = default_path(game)
    except ConfigError:
        return train
    _apply_mapping(train, _read(path).get("train") or {})
    return train


def learner_config(run, learner: str, algo: str, sections: tuple, run_sets: dict, adjust=None) -> RunConfig:
    """The RunConfig a learner on TrainConfig settings (ppo, ppo_bc, sb3) trains `run` (a LearnerRun)
    with: the game's config file's train section without its stages (no time budget, no evaluation,
    no distillation), `adjust(train)` (the learner's own defaults), then the run's params (keys of
    `sections`; the `run_sets` keys are the run's, not params), checked."""
    from domino_training.settings import apply

    train = game_train_config(run.game)
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


def _is_spec(text) -> bool:
    """Whether `text` parses as an agent spec of a known agent (whether it fits the game is checked
    when the agent is made)."""
    from domino_agents.registry import parse_spec

    try:
        parse_spec(text)
    except ValueError:
        return False
    return True


DEVICES_ALLOWED = "cpu (or cpu:0), cuda or cuda:N where torch sees that GPU, mps where torch has it, xpu(:N) likewise"


def check_device(key: str, value) -> torch.device:
    """The torch device that the setting `key` names, if it exists on this machine; else ConfigError
    naming the key, the value and what is allowed. The learners' one device check (ppo.device,
    dmc.device), so a run never starts on a device it cannot use and nothing falls back to CPU."""
    import torch  # here, not at the top: the commands that import this module without training need no torch

    def refuse(why: str):
        raise ConfigError(f"{key}={value!r} is not allowed; {why}")

    if not isinstance(value, str):
        refuse(f"a torch device string: {DEVICES_ALLOWED}")
    try:
        device = torch.device(value)
    except (RuntimeError, ValueError):
        refuse(f"not a torch device string; allowed: {DEVICES_ALLOWED}")
    if device.type == "cpu":
        if device.index not in (None, 0):
            refuse("the CPU is one device: cpu or cpu:0")
    elif device.type in ("cuda", "xpu"):
        backend = getattr(torch, device.type, None)  # torch.cuda, torch.xpu (absent from some builds)
        if backend is None or not backend.is_available():
            refuse(f"torch sees no {device.type.upper()} device; use {key}=cpu")
        count = backend.device_count()
        if device.index is not None and device.index >= count:
            refuse(f"torch sees {count} {device.type.upper()} device(s), {device.type}:0 to {device.type}:{count - 1}")
    elif device.type == "mps":
        if not torch.backends.mps.is_available():
            refuse(f"torch has no MPS device here (Apple silicon with an MPS build of torch); use {key}=cpu")
        if device.index not in (None, 0):
            refuse("MPS is one device: mps or mps:0")
    else:
        refuse(f"the learners run on {DEVICES_ALLOWED}; {device.type!r} is not one of them")
    return device


def validate(train: TrainConfig) -> None:
    """Values outside what the trainers accept: ConfigError naming the key and what is allowed (the
    bounds on the fields, training/settings.py `check`, then the rules between keys)."""
    def need(ok, key, value, allowed):
        if not ok:
            raise ConfigError(f"{key}={value!r} is not allowed; {allowed}")

    check(train)
    weights = [getattr(train.opponents, k) for k in POOL_KINDS]
    need(sum(weights) > 0 and min(weights) >= 0, "opponents", weights, "weights must be >= 0 with a positive sum")
    need(not train.network.init_actor or train.algo == "ppo", "network.init_actor", train.network.init_actor,
         "starting from a policy file is for algo ppo only")
    if train.opponents.target > 0:
        need(train.algo == "ppo", "opponents.target", train.opponents.target, "a target opponent is for algo ppo only")
        need(_is_spec(train.opponents.target_spec), "opponents.target_spec", train.opponents.target_spec,
             "opponents.target > 0 needs an agent spec, e.g. heuristic or mlp:checkpoint=PATH")
    for key in ("rounds", "every_updates"):
        need(not getattr(train.distill, key) or train.algo == "ppo", f"distill.{key}", getattr(train.distill, key),
             f"search distillation is for algo ppo only (with another algo: --set distill.{key}=0)")


def load_run(path: str | Path | None = None, game: str | None = None, overrides: list[str] | tuple = (),
             demo: bool = False) -> RunConfig:
    """RunConfig from a config file (default: the game's file in configs/), its `demo` overrides when
    `demo`, then command-line overrides ('key=value': a rule key like num_players, or a dotted training
    key like ppo.lr); the rule config is checked by building the game."""
    if path is None:
        if game is None:
            raise ConfigError("give a config file or a game name")
        path = default_path(game)
    data = _read(path)
    if game is not None and data["game"] != game:
        raise ConfigError(f"{path} is a config of {data['game']!r}, not of {game!r}")
    name, config = load(path)
    # a training key is dotted (ppo.lr=3e-4) or a top-level field (algo, seed); any other key is a rule key
    # (num_players=3), checked by the game
    top = {f.name for f in dataclasses.fields(TrainConfig)}
    rules = [text for text in overrides if "." not in (key := text.partition("=")[0].strip()) and key not in top]
    overrides = [text for text in overrides if text not in rules]
    config = {**config, **domino_envs.registry.config_from_pairs(rules, "--set")}
    domino_envs.make_game(name, **config)  # unknown or bad rule keys fail here
    train = TrainConfig()
    _apply_mapping(train, data.get("train") or {})
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


__all__ = ["Budget", "ConfigError", "DEVICES_ALLOWED", "Eval", "Imitation", "Network", "Opponents", "PPO", "RunConfig",
           "SB3", "TrainConfig", "check_device", "default_path", "game_train_config", "learner_config", "load", "load_run", "load_stages",
           "make_from_file", "parse_override", "set_key", "stage_overrides", "validate"]
