"""Deep Monte-Carlo (DMC), the learner of DouZero and RLCard's ``dmc``: a masked Q-network trained by
regression on each episode's final return, on the vector env (the ``dmc`` learner of
training/learners/interface.py).

- **Q-network.** A ReLU MLP from the acting seat's observation to one value per action,
  ``Q(obs)[a]``: the expected final reward of that seat after playing ``a``. The action played is
  the highest Q among the legal actions (illegal outputs are masked to -inf), or with probability
  ``dmc.epsilon`` a uniformly random legal action (epsilon-greedy exploration).
- **Monte-Carlo targets.** Every learner decision of a game waits, in a staging buffer, until that
  game ends; its target is then the acting seat's final reward, the same one PPO uses
  (``dmc.reward="win"``: the seat's win share minus the fair share 1/n; ``"score"``: the game's
  points times ``dmc.score_scale``). No bootstrapping, no discount: the games are short and end in
  one result. Decisions of a game still running when a rollout ends wait for its end.
- **Replay.** Finished decisions go into a ring buffer of the ``dmc.replay_size`` most recent
  ones; after each rollout (``num_envs x rollout_steps`` env steps) the network takes
  ``round(new decisions x dmc.sample_reuse / batch_size)`` Adam steps (at least one) on uniform
  minibatches from it, minimizing the squared error of ``Q(obs)[action]`` against the target.
- **Self-play** by default: every seat of every game is the learner (all their decisions train
  it). ``opponents.random / greedy / heuristic`` (weights, with ``opponents.self_play``) draw
  per game a baseline to play every seat but one random learner seat: `DMC_KINDS`, the pool's
  kinds without snapshot and target, drawn by `draw_kinds` as ppo draws (training/learners/pool.py).
- **Seeded**: the seed seeds the vector env, one numpy Generator (exploration, opponent draws,
  minibatches) and the weights' initialization (in a forked torch RNG: no global RNG is touched).
- **Checkpoint and exact resume** (checkpoint.pt, loaded with ``weights_only``): the weights,
  Adam's state, the vector env's rows and streams, the staging and replay buffers and the
  Generator's state; a resumed run continues exactly as if it never stopped. Each part is checked
  before use (training/learners/checkpoint.py, shared with ppo); CheckpointError naming what is wrong.
- **Export**: the Q-network is an MLP of exactly the actor's shape in agents/trained.py's policy
  format (meta ``algo: "dmc"``), so greedy-over-Q play is that file's argmax over legal outputs:
  the agent ``dmc:checkpoint=PATH`` (agents/trained.py `QPolicyAgent`, the ``ppo`` loader without
  sampling).
- **Device** (``dmc.device``: cpu, cuda, cuda:N, mps; training/learners/network.py `check_device`): the
  Q-network, its forward passes and the Adam steps run there; the vector env, the staging and the
  replay buffers stay on the CPU in numpy (the observations are made there, the checkpoint holds
  them as they are); each step's learner observations and each minibatch cross once, and the
  Q-values come back once for the argmax over legal actions.
"""
from __future__ import annotations

import copy
import dataclasses
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from domino_agents.trained import CheckpointError, policy_meta, save_policy
from domino_envs.core import ConfigError
from domino_envs.outcome import centered_win_shares
from domino_envs.registry import make_game
from domino_envs.vector import VectorEnv
from domino_envs.version import __version__
from domino_training.learners.checkpoint import (
    check_vector_rows,
    load_checkpoint_file,
    load_model_and_optimizer,
    read_counts,
    read_generators,
    save_checkpoint_file,
)
from domino_training.learners.interface import learner_settings, register_learner
from domino_training.learners.network import _mlp, check_device
from domino_training.learners.pool import POOL_KINDS, REWARDS, GreedyBatch, HeuristicBatch, RandomBatch, draw_kinds
from domino_training.learners.run_folder import LearnerRun, PointLog, drive
from domino_training.settings import HIDDEN, bounded, check

CHECKPOINT_FORMAT = "domino-envs-dmc-checkpoint/1"
DMC_KINDS = tuple(k for k in POOL_KINDS if k not in ("snapshot", "target"))  # index = the seat code of that kind
LEARNER, RANDOM, GREEDY, HEURISTIC = (DMC_KINDS.index(k) for k in ("self_play", "random", "greedy", "heuristic"))


# ------------------------------------------------------------------------------ settings
@dataclass
class DMC:
    num_envs: int = bounded(256, min=1)  # games stepped in lockstep
    rollout_steps: int = bounded(32, min=1)  # vector steps per iteration (num_envs * rollout_steps env steps)
    lr: float = bounded(3e-4, gt=0)  # Adam
    batch_size: int = bounded(1024, min=1)  # decisions per gradient step
    replay_size: int = bounded(65536, min=1)  # most recent finished decisions kept
    sample_reuse: float = bounded(1.0, gt=0)  # minibatch samples per new finished decision
    epsilon: float = bounded(0.05, min=0, max=1)  # probability of a uniformly random legal action
    max_grad_norm: float = bounded(10.0, gt=0)  # gradient norm clip
    reward: str = bounded("win", choices=REWARDS)  # "win": win share minus the fair share; "score": the game's points
    score_scale: float = bounded(0.02, gt=0)  # multiplies the game's points when reward == "score"
    torch_threads: int = bounded(1, min=1)  # 1, as ppo.torch_threads (why: training/learners/ppo.py)
    checkpoint_every: int = bounded(20, min=1)  # iterations between checkpoints (and one at every mark)
    device: str = bounded("cpu", verify=check_device)  # the Q-network's torch device: cpu, cuda, cuda:N, mps (the env
                                    # stays on CPU)


@dataclass
class DMCNetwork:
    hidden: list = bounded([256, 256], rule=HIDDEN)  # MLP widths of the Q-network


@dataclass
class DMCOpponents:
    """The weights of `DMC_KINDS`, drawn per game."""

    self_play: float = bounded(1.0, min=0)  # the learner in every seat
    random: float = bounded(0.0, min=0)  # a baseline in every seat but one learner seat
    greedy: float = bounded(0.0, min=0)  # greedy in every seat but one learner seat
    heuristic: float = bounded(0.0, min=0)  # the game's heuristic likewise


@dataclass
class DMCSettings:
    """The dmc learner's params (dotted keys: ``dmc.lr``, ``network.hidden``, ``opponents.greedy``)."""

    dmc: DMC = field(default_factory=DMC)
    network: DMCNetwork = field(default_factory=DMCNetwork)
    opponents: DMCOpponents = field(default_factory=DMCOpponents)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def validate_settings(s: DMCSettings) -> None:
    """ConfigError naming the first value outside what the trainer accepts (the bounds on the fields,
    training/settings.py `check`, then the weights' sum)."""
    check(s)
    w = [getattr(s.opponents, k) for k in DMC_KINDS]
    if not sum(w) > 0:
        raise ConfigError(f"opponents={w!r} is not allowed; weights must be >= 0 with a positive sum")


# ------------------------------------------------------------------------------ the trainer
class DMCTrainer:
    """One DMC run in one folder (see module doc): `iterate` collects a rollout and updates Q."""

    def __init__(self, game: str, config: dict, settings: DMCSettings, seed: int, run_dir: str | Path):
        validate_settings(settings)
        self.settings, self.seed = settings, int(seed)
        self.game_name, self.config = game, dict(config)
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        d = settings.dmc
        torch.set_num_threads(d.torch_threads)
        self.device = torch.device(d.device)  # checked by validate_settings
        self.game = g = make_game(game, **config)
        self.n, self.N = g.num_players, d.num_envs
        self.venv = VectorEnv(game, d.num_envs, seed=seed, **config)
        self.venv.reset()
        self.rng = np.random.default_rng([self.seed, 0xD3C])
        with torch.random.fork_rng(devices=[]):  # seeded init without touching the global RNG
            torch.manual_seed(self.seed)
            # initialized on the CPU, then moved: the same starting weights on every device
            self.q = _mlp([g.obs_size, *settings.network.hidden, g.num_actions], 0.01).to(self.device)
        self.optimizer = torch.optim.Adam(self.q.parameters(), lr=d.lr)
        self.pool = np.array([getattr(settings.opponents, k) for k in DMC_KINDS], dtype=np.float64)
        self.baselines = {RANDOM: RandomBatch(g), GREEDY: GreedyBatch(g)}
        if settings.opponents.heuristic > 0:
            self.baselines[HEURISTIC] = HeuristicBatch(g, seed=self.seed)
        N, n = self.N, self.n
        self.ctrl = np.zeros((N, n), dtype=np.int64)
        self.returns = np.zeros((N, n), dtype=np.float64)
        self.episode = np.arange(N, dtype=np.int64)  # each row's game id (staged decisions wait on it)
        self.next_episode = N
        self._assign(np.arange(N))
        # staging: learner decisions of games not yet over
        self.st_obs = np.zeros((0, g.obs_size), np.float32)
        self.st_act = np.zeros(0, np.int64)
        self.st_ep = np.zeros(0, np.int64)
        self.st_seat = np.zeros(0, np.int64)
        # replay ring buffer of finished decisions: numpy on the CPU, where the decisions are made and
        # the checkpoint keeps them; a minibatch crosses to the device in one copy per array (module doc)
        R = d.replay_size
        self.rp_obs = np.zeros((R, g.obs_size), np.float32)
        self.rp_act = np.zeros(R, np.int64)
        self.rp_target = np.zeros(R, np.float32)
        self.rp_ptr = self.rp_size = 0
        self.iteration = self.env_steps = 0
        self.seconds = 0.0

    # -------------------------------------------------------------- collection
    def _assign(self, rows: np.ndarray) -> None:
        """Who plays the games `rows` (they are starting): all seats the learner, or one learner seat
        among a baseline's, drawn by the opponents' weights."""
        if rows.size == 0:
            return
        kinds = draw_kinds(self.pool, self.rng, rows.size)
        ctrl = np.repeat(kinds[:, None], self.n, axis=1)
        ctrl[np.arange(rows.size), self.rng.integers(self.n, size=rows.size)] = LEARNER
        self.ctrl[rows] = ctrl

    def greedy_q(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """The legal action of highest Q per row (the argmax in numpy, on the CPU: the same ties on every device)."""
        with torch.no_grad():
            q = self.q(torch.from_numpy(obs).to(self.device)).cpu().numpy()
        return np.where(legal, q, -np.inf).argmax(axis=1)

    def collect(self) -> int:
        """One rollout; finished decisions go to the replay. Returns how many learner decisions it made."""
        d, venv, rng = self.settings.dmc, self.venv, self.rng
        rows_all = np.arange(self.N)
        actions = np.zeros(self.N, dtype=np.int64)
        new = {"obs": [], "act": [], "ep": [], "seat": []}
        ended_ep, ended_val = [], []
        for _ in range(d.rollout_steps):
            seats = venv.seats
            who = self.ctrl[rows_all, seats]
            learner = np.flatnonzero(who == LEARNER)
            if learner.size:
                obs = venv.obs[learner].copy()
                legal = venv.masks[learner] != 0
                a = self.greedy_q(obs, legal)
                explore = rng.random(learner.size) < d.epsilon
                if explore.any():
                    keys = rng.random((int(explore.sum()), legal.shape[1]))
                    keys[~legal[explore]] = -1.0
                    a[explore] = keys.argmax(axis=1)
                actions[learner] = a
                new["obs"].append(obs)
                new["act"].append(a)
                new["ep"].append(self.episode[learner])
                new["seat"].append(seats[learner].copy())
            if learner.size < self.N:
                for code in np.unique(who[who != LEARNER]):
                    rows = np.flatnonzero(who == code)
                    actions[rows] = self.baselines[int(code)].act_batch(venv.obs[rows], venv.masks[rows], rng)
            _, _, _, rewards, terminated, truncated, _ = venv.step(actions)
            self.returns += rewards
            ended = np.flatnonzero(terminated | truncated)
            if ended.size:
                totals = self.returns[ended]
                if d.reward == "win":
                    value = centered_win_shares(totals)
                else:
                    value = totals * d.score_scale
                ended_ep.append(self.episode[ended].copy())
                ended_val.append(value)
                self.episode[ended] = self.next_episode + np.arange(ended.size)
                self.next_episode += ended.size
                self.returns[ended] = 0.0
                self._assign(ended)
        made = sum(len(a) for a in new["act"])
        if made:
            self.st_obs = np.concatenate([self.st_obs, *new["obs"]])
            self.st_act = np.concatenate([self.st_act, *new["act"]])
            self.st_ep = np.concatenate([self.st_ep, *new["ep"]])
            self.st_seat = np.concatenate([self.st_seat, *new["seat"]])
        if ended_ep:
            self._finish(np.concatenate(ended_ep), np.concatenate(ended_val))
        return made

    def _finish(self, eps: np.ndarray, values: np.ndarray) -> None:
        """Staged decisions of the games `eps` (their final values [len, n]) move to the replay."""
        order = np.argsort(eps)
        eps, values = eps[order], values[order]
        pos = np.minimum(np.searchsorted(eps, self.st_ep), eps.size - 1)
        done = eps[pos] == self.st_ep
        target = values[pos[done], self.st_seat[done]].astype(np.float32)
        self._push(self.st_obs[done], self.st_act[done], target)
        keep = ~done
        self.st_obs, self.st_act = self.st_obs[keep], self.st_act[keep]
        self.st_ep, self.st_seat = self.st_ep[keep], self.st_seat[keep]

    def _push(self, obs: np.ndarray, act: np.ndarray, target: np.ndarray) -> None:
        R = self.rp_obs.shape[0]
        if obs.shape[0] > R:
            obs, act, target = obs[-R:], act[-R:], target[-R:]
        idx = (self.rp_ptr + np.arange(obs.shape[0])) % R
        self.rp_obs[idx], self.rp_act[idx], self.rp_target[idx] = obs, act, target
        self.rp_ptr = int((self.rp_ptr + obs.shape[0]) % R)
        self.rp_size = int(min(R, self.rp_size + obs.shape[0]))

    # -------------------------------------------------------------- update
    def learn(self, made: int) -> float:
        """Adam steps on replay minibatches (see module doc); the mean squared error."""
        d = self.settings.dmc
        if self.rp_size == 0:
            return math.nan
        steps = max(1, round(made * d.sample_reuse / d.batch_size))
        dev = self.device
        losses = []  # kept on the device until the end
        for _ in range(steps):
            j = self.rng.integers(self.rp_size, size=min(d.batch_size, self.rp_size))
            obs = torch.from_numpy(self.rp_obs[j]).to(dev)
            act = torch.from_numpy(self.rp_act[j]).to(dev)
            target = torch.from_numpy(self.rp_target[j]).to(dev)
            pred = self.q(obs).gather(1, act[:, None]).squeeze(1)
            loss = (pred - target).pow(2).mean()
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(self.q.parameters(), d.max_grad_norm)
            self.optimizer.step()
            losses.append(loss.detach())
        total = 0.0
        for x in torch.stack(losses).cpu().tolist():  # one copy back, then summed in order in Python floats
            total += x
        return total / steps

    def iterate(self) -> dict:
        """One rollout and its updates; returns a log row."""
        t0 = time.perf_counter()
        made = self.collect()
        loss = self.learn(made)
        self.iteration += 1
        self.env_steps += self.N * self.settings.dmc.rollout_steps
        self.seconds += time.perf_counter() - t0
        return {"iteration": self.iteration, "env_steps": self.env_steps, "loss": loss,
                "learner_decisions": made, "replay": self.rp_size}

    # -------------------------------------------------------------- files
    @property
    def checkpoint_path(self) -> Path:
        return self.dir / "checkpoint.pt"

    def layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The Q-network as numpy (W, b) pairs (the policy format; .cpu() brings them off the device)."""
        return [(m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy())
                for m in self.q if isinstance(m, nn.Linear)]

    def export_policy(self, path: str | Path) -> Path:
        """The Q-network as a policy file (agents/trained.py format, algo "dmc")."""
        meta = policy_meta(self.game, self.settings.network.hidden, "dmc", self.env_steps,
                           {"seed": self.seed, **self.settings.to_dict()})
        return save_policy(path, self.layers(), meta)

    def _run(self) -> dict:
        return {"game": self.game_name, "config": self.config, "seed": self.seed, "settings": self.settings.to_dict()}

    @staticmethod
    def _resumable(run: dict) -> dict:
        """What a resumed run must share with its checkpoint: the run without dmc.device, so a run
        goes on on another device (and a checkpoint written before dmc.device existed resumes)."""
        run = copy.deepcopy(run)
        settings = run.get("settings")
        if isinstance(settings, dict) and isinstance(settings.get("dmc"), dict):
            settings["dmc"].pop("device", None)
        return run

    def save_checkpoint(self) -> Path:
        t = lambda a: torch.from_numpy(np.array(a))  # noqa: E731 (a copy, as a tensor)
        v = self.venv
        data = {"format": CHECKPOINT_FORMAT, "package_version": __version__, "run": self._run(),
                "update": self.iteration, "env_steps": self.env_steps, "seconds": self.seconds,
                "model": self.q.state_dict(), "optimizer": self.optimizer.state_dict(),
                "collector": {"states": t(v.states), "obs": t(v.obs), "masks": t(v.masks), "seats": t(v.seats),
                              "venv_rng": v._rng.bit_generator.state, "rng": self.rng.bit_generator.state,
                              "ctrl": t(self.ctrl), "returns": t(self.returns), "episode": t(self.episode),
                              "next_episode": int(self.next_episode),
                              "st_obs": t(self.st_obs), "st_act": t(self.st_act), "st_ep": t(self.st_ep),
                              "st_seat": t(self.st_seat), "rp_obs": t(self.rp_obs), "rp_act": t(self.rp_act),
                              "rp_target": t(self.rp_target), "rp_ptr": int(self.rp_ptr), "rp_size": int(self.rp_size)},
                "extra": {}}
        return save_checkpoint_file(self.checkpoint_path, data)

    def load_checkpoint(self, path: str | Path | None = None) -> None:
        """Restore everything from a checkpoint of this same run, every part checked first
        (CheckpointError naming the first thing wrong; the trainer is unchanged until all pass)."""
        path = Path(path or self.checkpoint_path)
        where = str(path)
        data = load_checkpoint_file(path, CHECKPOINT_FORMAT)
        theirs, mine = self._resumable(data["run"]), self._resumable(self._run())
        for key in ("game", "config", "seed", "settings"):
            if theirs.get(key) != mine[key]:
                raise CheckpointError(f"{where}: checkpoint has {key}={theirs.get(key)!r}, this run {mine[key]!r}: "
                                      f"cannot resume")
        counts = read_counts(data, where)
        if counts["env_steps"] != counts["update"] * self.N * self.settings.dmc.rollout_steps:
            raise CheckpointError(f"{where}: env_steps {counts['env_steps']} is not {counts['update']} iterations x "
                                  f"{self.N * self.settings.dmc.rollout_steps} env steps")
        c = data["collector"]
        keys = {"states", "obs", "masks", "seats", "venv_rng", "rng", "ctrl", "returns", "episode", "next_episode",
                "st_obs", "st_act", "st_ep", "st_seat", "rp_obs", "rp_act", "rp_target", "rp_ptr", "rp_size"}
        if not isinstance(c, dict) or set(c) != keys:
            raise CheckpointError(f"{where}: the collector state must have keys {sorted(keys)}")

        def array(name, dtype, shape):
            t = c[name]
            if not isinstance(t, torch.Tensor):
                raise CheckpointError(f"{where}: {name} is a {type(t).__name__}, not a tensor")
            a = t.numpy()
            if a.dtype != dtype or len(a.shape) != len(shape) or any(s is not None and s != x
                                                                    for s, x in zip(shape, a.shape)):
                raise CheckpointError(f"{where}: {name} is {a.dtype} of shape {a.shape}; this run needs "
                                      f"{np.dtype(dtype)} of shape {tuple('any' if s is None else s for s in shape)}")
            if a.dtype.kind == "f" and not np.isfinite(a).all():
                raise CheckpointError(f"{where}: {name} holds NaN or infinite values")
            return np.ascontiguousarray(a)

        v, g, N, n, R = self.venv, self.game, self.N, self.n, self.rp_obs.shape[0]
        states = array("states", np.int64, v.states.shape)
        obs, masks = array("obs", np.float32, v.obs.shape), array("masks", np.int8, v.masks.shape)
        seats = array("seats", np.int64, v.seats.shape)
        check_vector_rows(g, states, obs, masks, seats, where)
        ctrl, returns = array("ctrl", np.int64, (N, n)), array("returns", np.float64, (N, n))
        episode = array("episode", np.int64, (N,))
        st = [array("st_obs", np.float32, (None, g.obs_size)), array("st_act", np.int64, (None,)),
              array("st_ep", np.int64, (None,)), array("st_seat", np.int64, (None,))]
        rp = [array("rp_obs", np.float32, (R, g.obs_size)), array("rp_act", np.int64, (R,)),
              array("rp_target", np.float32, (R,))]
        ints = {}
        for key, top in (("next_episode", None), ("rp_ptr", R - 1), ("rp_size", R)):
            x = c[key]
            if isinstance(x, bool) or not isinstance(x, int) or x < 0 or (top is not None and x > top):
                raise CheckpointError(f"{where}: {key}={x!r} must be an int in 0..{'any' if top is None else top}")
            ints[key] = x
        if len({a.shape[0] for a in st}) != 1:
            raise CheckpointError(f"{where}: the staging arrays have different lengths {[a.shape[0] for a in st]}")
        codes = {LEARNER, *self.baselines}
        if not set(np.unique(ctrl).tolist()) <= codes:
            raise CheckpointError(f"{where}: seat controller codes {sorted(set(ctrl.ravel().tolist()))} are not "
                                  f"among this run's {sorted(codes)}")
        A = g.num_actions
        for name, a, hi in (("st_act", st[1], A), ("rp_act", rp[1], A), ("st_seat", st[3], n),
                            ("st_ep", st[2], ints["next_episode"]), ("episode", episode, ints["next_episode"])):
            if a.size and (a.min() < 0 or a.max() >= hi):
                raise CheckpointError(f"{where}: {name} values must be in 0..{hi - 1}")
        venv_rng, rng = read_generators([c["venv_rng"], c["rng"]], where)
        load_model_and_optimizer(self.q, self.optimizer, data, where)
        # every part checked: only now does anything change
        v.states[...], v.obs[...], v.masks[...], v.seats[...] = states, obs, masks, seats
        v._rng, self.rng = venv_rng, rng
        self.ctrl[...], self.returns[...], self.episode[...] = ctrl, returns, episode
        self.next_episode = ints["next_episode"]
        self.st_obs, self.st_act, self.st_ep, self.st_seat = st
        self.rp_obs[...], self.rp_act[...], self.rp_target[...] = rp
        self.rp_ptr, self.rp_size = ints["rp_ptr"], ints["rp_size"]
        self.iteration, self.env_steps, self.seconds = counts["update"], counts["env_steps"], counts["seconds"]


# ------------------------------------------------------------------------------ the dmc learner
def dmc_settings(run: LearnerRun) -> DMCSettings:
    """The DMCSettings of `run`'s params (ConfigError naming an unknown or bad key)."""
    settings = learner_settings("dmc", run, DMCSettings())
    validate_settings(settings)
    return settings


def train_dmc(run: LearnerRun, log: PointLog, progress: bool) -> None:
    """Deep Monte-Carlo through the marks."""
    settings = log.settings  # dmc_settings(run), built by the driver's check
    trainer = DMCTrainer(run.game, run.config, settings, run.seed, run.run_dir)
    if trainer.checkpoint_path.is_file():
        trainer.load_checkpoint()
        log.resumed_at(trainer.env_steps)
    drive(trainer, log, run.budget, "dmc", settings.dmc.checkpoint_every, progress)


register_learner("dmc", train_dmc, "deep Monte-Carlo: a masked Q-network regressing episode returns, epsilon-greedy",
                 check=dmc_settings, settings=DMCSettings)


__all__ = ["DMC", "DMCNetwork", "DMCOpponents", "DMCSettings", "DMCTrainer", "dmc_settings", "train_dmc", "validate_settings"]
