"""The SB3 path: `sb3_contrib.MaskablePPO` on `SingleSeatEnv`, for users who live in Stable-Baselines3
(``domino train <game> --learner sb3``). Our own PPO (training/learners/ppo.py) is the fast path; this one trades
speed for SB3's ecosystem and is kept as close to it as SB3 allows:

- **Network**: ``MlpPolicy`` with separate actor and critic MLPs of widths ``network.hidden`` and
  ReLU (SB3's default is tanh; ReLU makes it the same network as ours, and makes the actor the
  agents' numpy format, so the run exports policy.npz too). Hyperparameters from ``sb3``; the ones
  the section does not name keep SB3's defaults, which equal ours (GAE lambda 0.95, clip 0.2,
  value coefficient 0.5, gradient norm 0.5).
- **Environments**: ``sb3.n_envs`` SingleSeatEnv copies (learner seat rotating) in SB3's
  DummyVecEnv, each in a Monitor (episode returns in the logs), each seeded from ``seed``.
- **Opponent pool**: every other seat is a `PoolOpponent` that, at each game's start, draws from its
  own seeded Generator (weights ``opponents``) whether it plays that game as random, greedy,
  heuristic, or as a frozen copy of the learner. ``opponents.self_play`` and ``opponents.snapshot``
  both mean "a learner copy" here (their weights add up): a single-seat env trains one seat only,
  so true self-play (every seat's decisions train the learner) does not exist on this path, and
  one copy refreshed every ``sb3.refresh_every`` timesteps stands in for both the latest policy
  and the snapshots. Seats draw independently (ours draws one kind per game; the same with 2
  players). The copy samples its masked policy (never an illegal action) from the opponent's own
  Generator. It lives in this process, so the vector env must stay a DummyVecEnv.
- **Seeding**: SB3's own ``seed=`` would reseed every env with ``seed + index`` and the process-wide
  RNGs, so it is not used: envs and opponents get their own seeds, and SB3's draws (weight init,
  action sampling, minibatch order: torch's and numpy's global RNGs) run inside a guard that
  seeds them and restores the caller's RNG states afterwards.
- **Run folder**: the driver's (training/learners/run_folder.py: points.json, config.yaml, log.csv
  fed by SB3's logger, tb/ under `domino train`, a policy file per mark and policy.npz, evaluation),
  plus sb3_model.zip (the model, saved at each mark, atomically), sb3_model.json (game, game config,
  sizes, timesteps: read by domino_agents.sb3_agent.SB3Agent to refuse a model made for another game)
  and sb3_points.json (the counts at that save).
- **Resume**: with sb3_model.zip present the model (weights, optimizer, timestep count) is loaded
  with SB3's own loader (which unpickles: resume only run folders of your own) and trains to the
  remaining marks. It is not bit-identical to an uninterrupted run: SB3 does not save RNG states or
  the games in progress, so the envs restart with fresh deals (seeded from the timestep count).
"""
from __future__ import annotations

import json
import random
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from domino_agents.registry import make_agent
from domino_agents.trained import CheckpointError, mlp_logits, policy_meta, save_policy
from domino_envs.errors import ConfigError
from domino_envs.registry import make_game
from domino_envs.rng import mix_seed
from domino_envs.wrappers import SingleSeatEnv
from domino_training.configs import RunConfig
from domino_training.learners.interface import learner_settings, register_learner
from domino_training.learners.network import Network, torch_threads
from domino_training.learners.pool import POOL_KINDS, Opponents, sample_actions
from domino_training.learners.run_folder import LearnerError, LearnerRun, PointLog
from domino_training.settings import bounded

MODEL_FILE = "sb3_model.zip"
META_FILE = "sb3_model.json"
META_FORMAT = "domino-envs-sb3-model/1"
SB3_KINDS = tuple(k for k in POOL_KINDS if k != "target")  # the pool's kinds this path plays
COPY_KINDS = ("self_play", "snapshot")  # both played by the learner copy (module doc)
BASELINES = tuple(k for k in SB3_KINDS if k not in COPY_KINDS)
LEARNER_COPY = "learner"


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


# ------------------------------------------------------------------------------ the learner copy
def actor_layers(policy) -> list[tuple[np.ndarray, np.ndarray]]:
    """The MlpPolicy's actor (ReLU MLP then action_net) as numpy (W, b) pairs, agents/trained.py's format."""
    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)] + [policy.action_net]
    return [(m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy()) for m in linears]


class LearnerCopy:
    """A frozen numpy copy of the learner's actor, shared by every PoolOpponent of a run."""

    def __init__(self):
        self.layers: list[tuple[np.ndarray, np.ndarray]] | None = None
        self.refreshed_at = -1  # timestep of the last copy
        self.opponent_decisions = 0  # moves the run's PoolOpponents made (env steps SB3's timesteps leave out)

    def refresh(self, policy, timestep: int) -> None:
        self.layers = actor_layers(policy)
        self.refreshed_at = int(timestep)


class PoolOpponent:
    """One opponent seat drawing, at every game's start, who it plays as (see module doc).

    weights: {kind: weight} over `SB3_KINDS` (self_play and snapshot: both the learner copy).
    rng: this seat's own Generator for the draws and the copy's sampling.
    """

    name = "pool"

    def __init__(self, game, weights: dict[str, float], learner: LearnerCopy, rng: np.random.Generator):
        kinds: dict[str, float] = {}
        for kind, w in weights.items():
            if kind not in SB3_KINDS:
                raise ValueError(f"unknown opponent kind {kind!r}; allowed: {list(SB3_KINDS)}")
            key = LEARNER_COPY if kind in COPY_KINDS else kind
            kinds[key] = kinds.get(key, 0.0) + float(w)
        self.kinds = [k for k, w in kinds.items() if w > 0]
        if not self.kinds:
            raise ValueError(f"opponent weights {weights} give no kind a positive weight")
        p = np.array([kinds[k] for k in self.kinds], dtype=np.float64)
        self.p = p / p.sum()
        self.learner = learner
        self.rng = rng
        self.agents = {k: make_agent(k, game, seed=0) for k in self.kinds if k in BASELINES}
        self.kind = self.kinds[0]

    def reset(self, seed: int | None = None) -> None:
        self.kind = self.kinds[int(self.rng.choice(len(self.kinds), p=self.p))]
        if self.kind != LEARNER_COPY:
            self.agents[self.kind].reset(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self.learner.opponent_decisions += 1
        if self.kind != LEARNER_COPY:
            return self.agents[self.kind].act(observation, action_mask)
        legal = np.asarray(action_mask) != 0
        if not legal.any():
            raise ValueError("PoolOpponent.act: the action mask has no legal action")
        if self.learner.layers is None:
            raise RuntimeError("PoolOpponent: the learner copy was never filled (LearnerCopy.refresh)")
        logits = mlp_logits(self.learner.layers, np.asarray(observation, dtype=np.float32))
        return int(sample_actions(logits[None, :], legal[None, :], self.rng)[0][0])


# ------------------------------------------------------------------------------ envs and model
def make_envs(run: RunConfig, learner: LearnerCopy, start: int = 0):
    """DummyVecEnv of ``sb3.n_envs`` Monitor(SingleSeatEnv) copies playing the opponent pool.
    start: the timestep count the run resumes from (0: fresh), mixed into every seed."""
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    cfg = run.train
    weights = {k: getattr(cfg.opponents, k) for k in SB3_KINDS}

    def builder(index: int):
        def build():
            game = make_game(run.game, **run.config)
            opponents = [PoolOpponent(game, weights, learner,
                                      np.random.default_rng([cfg.seed, index, k, start, 0x5B3]))
                         for k in range(game.num_players - 1)]
            seed = mix_seed(cfg.seed, index)
            return Monitor(SingleSeatEnv(game, opponents, seed=seed if start == 0 else mix_seed(seed, start)))
        return build

    return DummyVecEnv([builder(i) for i in range(cfg.sb3.n_envs)])


def new_model(run: RunConfig, venv):
    """A fresh MaskablePPO for `run` (call inside `seeded_globals`: weight init draws from torch)."""
    from sb3_contrib import MaskablePPO

    s, hidden = run.train.sb3, [int(h) for h in run.train.network.hidden]
    return MaskablePPO("MlpPolicy", venv, learning_rate=s.lr, n_steps=s.n_steps, batch_size=s.batch_size,
                       n_epochs=s.n_epochs, gamma=s.gamma, ent_coef=s.ent_coef, device="cpu", verbose=0,
                       policy_kwargs={"net_arch": {"pi": hidden, "vf": hidden}, "activation_fn": nn.ReLU})


@contextmanager
def seeded_globals(seed: int, threads: int | None = None):
    """Seed python's, numpy's and torch's global RNGs (SB3 draws from them) and optionally torch's
    thread count; restore all of them afterwards, so the caller sees no change."""
    py_state, np_state = random.getstate(), np.random.get_state()
    with torch.random.fork_rng(devices=[]), torch_threads(threads or torch.get_num_threads()):
        random.seed(seed)
        np.random.seed(seed % 2**32)
        torch.manual_seed(seed)
        try:
            yield
        finally:
            random.setstate(py_state)
            np.random.set_state(np_state)


# ------------------------------------------------------------------------------ callbacks
def make_logger(log, env_steps):
    """SB3's logger writing each dump as one row of the run folder's log (training/learners/run_folder.py:
    log.csv, tb/), with the env steps ``env_steps()`` counts then."""
    from stable_baselines3.common.logger import KVWriter, Logger

    class ToRunLog(KVWriter):
        def write(self, key_values, key_excluded, step=0) -> None:
            row = {k.replace("/", "_"): v for k, v in key_values.items() if isinstance(v, (int, float))}
            log.record({"env_steps": env_steps(), **row})

        def close(self) -> None:
            pass

    return Logger(folder=None, output_formats=[ToRunLog()])


# ------------------------------------------------------------------------------ files
def model_meta(run: RunConfig, model) -> dict:
    """What sb3_model.json records: the policy meta of agents/trained.py (game, game config, sizes,
    hidden, timesteps, package version, training config) under this format's name."""
    game = make_game(run.game, **run.config)
    meta = policy_meta(game, run.train.network.hidden, "sb3", model.num_timesteps, run.to_dict()["train"])
    meta["format"] = META_FORMAT
    return meta


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def save_model(model, run: RunConfig, run_dir: Path) -> Path:
    """sb3_model.zip and sb3_model.json, each replaced atomically (an interruption leaves the old ones)."""
    path = run_dir / MODEL_FILE
    tmp = run_dir / ("tmp_" + MODEL_FILE)
    model.save(tmp)
    _write_atomic(run_dir / META_FILE, json.dumps(model_meta(run, model), indent=1))
    tmp.replace(path)
    return path


def _check_resumable(run: RunConfig, run_dir: Path) -> None:
    """CheckpointError unless the saved model belongs to this same run (game, config, network,
    seed, and the sb3 settings that shape the model and its rollouts)."""
    meta_path = run_dir / META_FILE
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError) as err:
        raise CheckpointError(f"{str(meta_path)!r} is missing or unreadable ({err}); cannot resume "
                              f"{str(run_dir / MODEL_FILE)!r}") from None
    mine, theirs = run.to_dict(), {"game": meta.get("game"), "config": meta.get("config"),
                                   "train": meta.get("train") or {}}
    problems = []
    if theirs["game"] != mine["game"]:
        problems.append(f"game {theirs['game']!r} vs {mine['game']!r}")
    game_config = make_game(run.game, **run.config).config_dict()
    if theirs["config"] != game_config:
        problems.append(f"game config {theirs['config']!r} vs {game_config!r}")
    for key in ("network", "seed"):
        if theirs["train"].get(key) != mine["train"][key]:
            problems.append(f"train.{key}={theirs['train'].get(key)!r} vs {mine['train'][key]!r}")
    for key in ("n_steps", "batch_size", "n_epochs", "lr", "gamma", "ent_coef", "n_envs"):
        a, b = (theirs["train"].get("sb3") or {}).get(key), mine["train"]["sb3"][key]
        if a != b:
            problems.append(f"sb3.{key}={a!r} vs {b!r}")
    if problems:
        raise CheckpointError(f"{str(run_dir / MODEL_FILE)!r} was saved by another run, cannot resume "
                              f"(saved vs this run): " + "; ".join(problems))


# ------------------------------------------------------------------------------ marks (the learner interface)
POINTS_STATE = "sb3_points.json"


def train_sb3_points(run: RunConfig, log, progress: bool = False) -> None:
    """MaskablePPO to the run's budget in env steps, every seat's decisions counted (SB3's timesteps, the
    learner's, plus the PoolOpponents' moves), saving the actor at each mark (the `sb3` learner of
    training/learners/interface.py; `log` is its PointLog). At a rollout's start (after an update) every
    mark due gets ``log.policy_path(mark)`` (policy.npz format) and ``log.save``; then the model and
    sb3_points.json (env steps, seconds, timesteps) are saved, so a killed run resumes from its last
    mark (with fresh deals: SB3 keeps no RNG state, see the module doc); the run stops once no mark is
    pending."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    run_dir = Path(log.dir)
    cfg = run.train
    budget = int(log.run.budget)
    state_path, model_path = run_dir / POINTS_STATE, run_dir / MODEL_FILE
    state = {"env_steps": 0, "seconds": 0.0, "timesteps": 0}
    model = None
    if model_path.is_file() and state_path.is_file():
        _check_resumable(run, run_dir)
        try:
            state = json.loads(state_path.read_text())
            model = MaskablePPO.load(model_path, device="cpu")
        except Exception as err:
            raise CheckpointError(f"{str(run_dir)!r}: the saved MaskablePPO model or {POINTS_STATE} is unreadable "
                                  f"({type(err).__name__}: {err})") from None
        if int(model.num_timesteps) != state.get("timesteps"):
            raise CheckpointError(f"{str(state_path)!r} records {state.get('timesteps')} timesteps, the model "
                                  f"{model.num_timesteps}: they were not saved together")
        log.resumed_at(int(state["env_steps"]))
    start = int(state["timesteps"])
    learner = LearnerCopy()
    venv = make_envs(run, learner, start)
    game = make_game(run.game, **run.config)
    bar = None

    def env_steps(model) -> int:
        return int(state["env_steps"]) + int(model.num_timesteps) - start + learner.opponent_decisions

    class Marks(BaseCallback):
        """Save every mark due at a rollout's start; stop the run once none is pending."""

        stop = False

        def _on_training_start(self) -> None:
            self.t0 = time.perf_counter()

        def _on_rollout_start(self) -> None:
            steps = env_steps(self.model)
            seconds = float(state["seconds"]) + time.perf_counter() - self.t0
            due = log.due(steps)
            for mark in due:
                path = log.policy_path(mark)
                save_policy(path, actor_layers(self.model.policy),
                            policy_meta(game, cfg.network.hidden, "sb3", steps, run.to_dict()["train"]))
                log.save(mark, steps, seconds, f"mlp:checkpoint={path}")
            if due:
                save_model(self.model, run, run_dir)
                _write_atomic(state_path, json.dumps({"env_steps": steps, "seconds": seconds,
                                                      "timesteps": int(self.model.num_timesteps)}))
            self.stop = not log.pending()
            if self.num_timesteps - learner.refreshed_at >= cfg.sb3.refresh_every:
                learner.refresh(self.model.policy, self.num_timesteps)
            if bar is not None:
                bar.update(min(budget, steps) - bar.n)

        def _on_step(self) -> bool:
            return not self.stop

    if progress:
        from tqdm import tqdm

        bar = tqdm(total=budget, initial=min(budget, int(state["env_steps"])), unit="step", desc="sb3")
    try:
        with seeded_globals(mix_seed(cfg.seed, start), cfg.sb3.torch_threads):
            if model is None:
                model = new_model(run, venv)
            else:
                model.set_env(venv, force_reset=True)
            model.set_logger(make_logger(log, lambda: env_steps(model)))
            learner.refresh(model.policy, model.num_timesteps)
            if log.pending():  # env steps outrun timesteps, so the callback stops the run before this total
                model.learn(total_timesteps=10 * budget + 10 * cfg.sb3.n_steps * cfg.sb3.n_envs,
                            reset_num_timesteps=start == 0, progress_bar=False, callback=Marks())
    finally:
        if bar is not None:
            bar.close()
        venv.close()


# ------------------------------------------------------------------------------ the sb3 learner
SB3_SECTIONS = ("sb3", "network", "opponents")  # its params


@dataclass
class SB3Settings:
    """The sb3 learner's settings: its `SB3` section, and the network and opponent pool sections it
    shares with our PPO (network.py, pool.py)."""

    seed: int = bounded(0, min=0)   # the run's (LearnerRun.seed)
    network: Network = field(default_factory=Network)
    opponents: Opponents = field(default_factory=Opponents)
    sb3: SB3 = field(default_factory=SB3)


def settings(run: LearnerRun) -> RunConfig:
    """The RunConfig sb3 trains `run` with: the defaults, the game file's params and the run's
    (interface.learner_settings), with the run's seed. What only our PPO does (starting from a policy
    file, a target opponent) is refused, naming the key."""
    train = learner_settings("sb3", run, SB3Settings(seed=int(run.seed)), SB3_SECTIONS)
    for key, value in (("network.init_actor", train.network.init_actor), ("opponents.target", train.opponents.target)):
        if value:
            raise ConfigError(f"{key}={value!r} is not allowed; the ppo learners only (sb3 starts from scratch "
                              f"against the pool)")
    return RunConfig(run.game, dict(run.config), train)


def train_sb3(run: LearnerRun, log: PointLog, progress: bool) -> None:
    """MaskablePPO on SingleSeatEnv (`train_sb3_points`); LearnerError naming the extra where it is missing."""
    try:
        import sb3_contrib  # noqa: F401 - the train extra
        import stable_baselines3  # noqa: F401
    except ImportError as err:
        raise LearnerError(f"the sb3 learner needs stable-baselines3 and sb3-contrib (the train extra: "
                           f"pip install -e '.[train]'): {err}") from None
    train_sb3_points(log.settings, log, progress)  # settings(run), built by the driver's check


register_learner("sb3", train_sb3, "sb3_contrib MaskablePPO on SingleSeatEnv", check=settings, settings=SB3Settings,
                 sections=SB3_SECTIONS)


__all__ = ["LearnerCopy", "PoolOpponent", "SB3", "actor_layers", "make_envs", "new_model", "save_model",
           "seeded_globals", "settings", "train_sb3", "train_sb3_points"]
