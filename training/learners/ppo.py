"""Self-play PPO with action masks on the vector env: `domino train <game>` (``--learner ppo``).

Read top to bottom: the network, the per-seat chains and GAE, collection, the PPO update, the run.
Each piece is an importable function or small class, so tests call them one at a time.

- **Masked policy.** Illegal actions' logits are -inf before the softmax: they get probability 0
  and are never sampled (Gumbel-max over the masked logits, from the run's numpy Generator).
- **One chain per seat.** The vector env steps whichever seat is to act in each game, so a
  learner transition is (its observation, mask, action, log-prob, value) at *its* decision and its
  reward is everything its seat received until its next decision. A game's end closes the chain of
  every learner seat of that game, whoever acted last, so the final result reaches all of them.
  GAE runs along each chain (`gae` follows each transition's `next` link). A chain still open at
  the end of a rollout is bootstrapped with the critic's value of that seat's view at that moment.
- **Reward.** ``ppo.reward="win"`` (default): 0 during the game, at its end the seat's win share
  (1/w for each of the w seats with the top return, as the evaluation harness counts wins) minus
  the fair share 1/n, so training optimizes what the harness measures. ``"score"``: the game's
  own rewards times ``ppo.score_scale``.
- **Opponent pool.** Each game draws who plays the other seats when it starts: the learner itself
  in every seat (self-play; all seats' decisions train it), a frozen snapshot of it (one added
  every ``snapshot_every`` updates, the oldest dropped), or a baseline (random, greedy, heuristic),
  with the learner in one random seat; weights in ``opponents``. Seats played by an opponent give
  no training data. ``opponents.target`` adds a fixed agent of any spec (``target_spec``, batched by
  `opponents.batch_opponent`): with all the weight on it, the run trains a best response to it
  (training/exploit/best_response.py). The kinds and the per-game draw are training/learners/pool.py's
  (`POOL_KINDS`, `draw_kinds`), as are the batched baselines.
- **Perfect-information critic** (``ppo.perfect_info_critic``): the value head reads every seat's
  observation (rotated to start at the deciding seat), compiled per game by `observe_all`; the
  actor still reads its own observation only, and only the actor is exported.
- **Seeded end to end**: the run's seed seeds the vector env, one numpy Generator (actions,
  opponent draws, minibatch order) and the weights' initialization (in a forked torch RNG, so no
  global RNG is touched). torch's threads are set deliberately: ``ppo.torch_threads`` (1 by default)
  for the large-batch steps (the update, the imitation and distillation fits), 1 for everything else
  (collection's small forward passes lose several times over to threading overhead); 2 pays on an
  idle 2-core machine, not beside another job (docs/speed.md), and a fixed count keeps a seed's
  results the same on any machine (the update's sums differ between thread counts).
- **Run folder**: checkpoint.pt (everything needed to resume: weights, optimizer, snapshots, the
  vector env's rows, the Generator's state; a resumed run continues exactly as if never stopped;
  saved and checked by training/learners/checkpoint.py, as dmc's); the rest of the folder (points,
  policy files, logs, evaluation) is the one driver's (training/learners/run_folder.py).
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from numba import literally, njit
from torch import nn

from domino_agents.trained import CheckpointError, policy_meta, save_policy
from domino_envs.dispatch import game_id, observe_one, specialize
from domino_envs.errors import ConfigError
from domino_envs.outcome import centered_win_shares, win_shares
from domino_envs.registry import make_game
from domino_envs.vector import VectorEnv
from domino_envs.version import __version__
from domino_training.configs import RunConfig
from domino_training.learners.checkpoint import (
    check_vector_rows,
    load_checkpoint_file,
    load_model_and_optimizer,
    read_counts,
    read_generators,
    save_checkpoint_file,
)
from domino_training.learners.distill import Distill, PPOWithRounds
from domino_training.learners.imitate import Imitation
from domino_training.learners.interface import learner_settings, register_learner
from domino_training.learners.network import ActorCritic, Network, check_device, masked_log_probs, torch_threads
from domino_training.learners.pool import (
    POOL_KINDS,
    REWARDS,
    GreedyBatch,
    HeuristicBatch,
    Opponents,
    PolicyBatch,
    RandomBatch,
    batch_opponent,
    draw_kinds,
    sample_actions,
)
from domino_training.learners.run_folder import LearnerRun, PointLog, drive
from domino_training.settings import bounded, check, is_spec

LEARNER = 0
# opponent codes in the per-seat controller table; snapshots take SNAPSHOT0 + slot; the fixed
# target (opponents.target_spec) is -1, below the learner, so the codes saved before it keep their meaning
RANDOM, GREEDY, HEURISTIC, SNAPSHOT0, TARGET = 1, 2, 3, 4, -1
SELF_PLAY, SNAPSHOT = POOL_KINDS.index("self_play"), POOL_KINDS.index("snapshot")
# each pool kind's seat code, in POOL_KINDS order (a snapshot game's slot is added when it is drawn)
KIND_CODES = np.array([{"self_play": LEARNER, "snapshot": SNAPSHOT0, "random": RANDOM, "greedy": GREEDY,
                        "heuristic": HEURISTIC, "target": TARGET}[k] for k in POOL_KINDS], dtype=np.int64)
CHECKPOINT_FORMAT = "domino-envs-ppo-checkpoint/1"


# ------------------------------------------------------------------------------ settings
@dataclass
class Budget:
    env_steps: int = bounded(2_000_000, min=1)  # decisions stepped in the vector env (every seat's), or SB3 timesteps:
                                    # the run's budget less the warm start's (what the lr schedule spans)
    checkpoint_every: int = bounded(10, min=1)  # updates between checkpoints (the last one is always saved)


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
    device: str = bounded("cpu", verify=check_device)  # any torch device that exists: cpu, cuda, cuda:N, mps
                                    # (check_device); the env
                                    # stays on CPU, the network, its forward passes and the update run there


@dataclass
class TrainConfig:
    """The settings of the ppo and ppo_bc learners: their params (every key but the seed and
    budget.env_steps, which are the run's) in sections that live with what reads them: network.py,
    pool.py, imitate.py, distill.py."""

    seed: int = bounded(0, min=0)   # the run's (LearnerRun.seed)
    budget: Budget = field(default_factory=Budget)
    network: Network = field(default_factory=Network)
    ppo: PPO = field(default_factory=PPO)
    opponents: Opponents = field(default_factory=Opponents)
    imitation: Imitation = field(default_factory=Imitation)
    distill: Distill = field(default_factory=Distill)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def validate(self) -> None:
        """Values outside what the trainers accept: ConfigError naming the key and what is allowed (the
        bounds on the fields, training/settings.py `check`, then the rules between keys)."""
        def need(ok, key, value, allowed):
            if not ok:
                raise ConfigError(f"{key}={value!r} is not allowed; {allowed}")

        check(self)
        weights = [getattr(self.opponents, k) for k in POOL_KINDS]
        need(sum(weights) > 0 and min(weights) >= 0, "opponents", weights, "weights must be >= 0 with a positive sum")
        if self.opponents.target > 0:
            need(is_spec(self.opponents.target_spec), "opponents.target_spec", self.opponents.target_spec,
                 "opponents.target > 0 needs an agent spec, e.g. heuristic or mlp:checkpoint=PATH")


# ------------------------------------------------------------------------------ chains and GAE
@dataclass
class Buffer:
    """Learner transitions of one rollout, in the order they were decided."""

    obs: np.ndarray       # [C, obs] float32
    mask: np.ndarray      # [C, A] bool
    critic_in: np.ndarray | None  # [C, n * obs] float32 with the perfect-information critic
    action: np.ndarray    # [C] int64
    logp: np.ndarray      # [C] float32
    value: np.ndarray     # [C] float32
    reward: np.ndarray    # [C] float32: the seat's rewards until its next decision
    done: np.ndarray      # [C] bool: the game ended before the seat's next decision
    next: np.ndarray      # [C] int64: the seat's next transition in this rollout, -1 if none
    boot: np.ndarray      # [C] float32: bootstrap value of a chain still open at the rollout's end
    size: int = 0

    @classmethod
    def allocate(cls, capacity: int, obs_size: int, num_actions: int, critic_size: int | None):
        return cls(np.zeros((capacity, obs_size), np.float32), np.zeros((capacity, num_actions), np.bool_),
                   None if critic_size is None else np.zeros((capacity, critic_size), np.float32),
                   np.zeros(capacity, np.int64), np.zeros(capacity, np.float32), np.zeros(capacity, np.float32),
                   np.zeros(capacity, np.float32), np.zeros(capacity, np.bool_), np.full(capacity, -1, np.int64),
                   np.zeros(capacity, np.float32))

    def clear(self) -> None:
        self.reward[:] = 0.0
        self.done[:] = False
        self.next[:] = -1
        self.boot[:] = 0.0
        self.size = 0


class SeatChains:
    """Which transition of each (game, seat) is still collecting rewards (see module doc)."""

    def __init__(self, num_envs: int, num_players: int):
        self.open = np.full((num_envs, num_players), -1, dtype=np.int64)

    def decide(self, buf: Buffer, rows: np.ndarray, seats: np.ndarray, idx: np.ndarray) -> None:
        """Seats `seats` of games `rows` decided; their new transitions are `idx`."""
        prev = self.open[rows, seats]
        linked = prev >= 0
        buf.next[prev[linked]] = idx[linked]
        self.open[rows, seats] = idx

    def add_rewards(self, buf: Buffer, rewards: np.ndarray, rows: np.ndarray | None = None) -> None:
        """rewards [len(rows), n] (or [num_envs, n]) go to each seat's open transition."""
        o = self.open if rows is None else self.open[rows]
        m = (o >= 0) & (rewards != 0)
        buf.reward[o[m]] += rewards[m]

    def end_games(self, buf: Buffer, rows: np.ndarray) -> None:
        """Games `rows` ended: every open transition in them is terminal; their chains close."""
        o = self.open[rows]
        buf.done[o[o >= 0]] = True
        self.open[rows] = -1

    def close_rollout(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, seats, idx) of the chains still open (to bootstrap); all chains close."""
        rows, seats = np.nonzero(self.open >= 0)
        idx = self.open[rows, seats].copy()
        self.open[:] = -1
        return rows, seats, idx


@njit(cache=True)
def gae(reward, value, done, nxt, boot, gamma, lam, adv):
    """Generalized advantage estimates along each seat's chain, written into adv. A transition's
    successor is its `next` (later in the buffer, so one backward pass suffices); a terminal one
    has none (value 0); an open one's is its bootstrap value."""
    for t in range(reward.shape[0] - 1, -1, -1):
        if done[t]:
            next_value, next_adv = 0.0, 0.0
        elif nxt[t] >= 0:
            next_value, next_adv = value[nxt[t]], adv[nxt[t]]
        else:
            next_value, next_adv = boot[t], 0.0
        delta = reward[t] + gamma * next_value - value[t]
        adv[t] = delta + gamma * lam * next_adv


@njit(cache=True)
def _observe_all(gid, states, p, out):
    """out[i, k] = seat k's observation of game i (compiled per game, like the vector loops)."""
    literally(gid)
    g = gid
    for i in range(states.shape[0]):
        for k in range(out.shape[1]):
            observe_one(g, states[i], p, k, out[i, k])


# ------------------------------------------------------------------------------ collection
class Collector:
    """Plays the vector env with the learner and its opponents, filling a Buffer per rollout.

    The env, the opponents and the rollout Buffer stay on the CPU (numpy): the observations are
    made there, the chains and GAE are numpy and numba, and the update takes the whole rollout to
    the device in one copy per array. Each step sends the learner rows' observations to `device`
    once (and the critic's rows, with the perfect-information critic) and brings logits and values
    back in one copy; actions are drawn on the CPU from the run's numpy Generator, so the masks
    never cross and the draws are the same stream on every device."""

    def __init__(self, run: RunConfig, device: str | torch.device | None = None):
        cfg = run.train
        self.cfg = cfg
        self.game = make_game(run.game, **run.config)
        n, N = self.game.num_players, cfg.ppo.num_envs
        self.n, self.N = n, N
        self.venv = VectorEnv(run.game, N, seed=cfg.seed, **run.config)
        self.venv.reset()
        self.rng = np.random.default_rng([cfg.seed, 0x7EA1])
        self.device = check_device("ppo.device", cfg.ppo.device if device is None else str(device))
        self.pi_critic = cfg.ppo.perfect_info_critic
        self.critic_size = n * self.game.obs_size if self.pi_critic else None
        self.buf = Buffer.allocate(N * cfg.ppo.rollout_steps, self.game.obs_size, self.game.num_actions,
                                   self.critic_size)
        self.chains = SeatChains(N, n)
        self.returns = np.zeros((N, n), dtype=np.float64)   # each seat's game return so far
        self.ctrl = np.zeros((N, n), dtype=np.int64)        # who plays each seat (LEARNER or a code)
        self.kind = np.zeros(N, dtype=np.int64)             # the pool kind drawn for each game
        self.baselines = {RANDOM: RandomBatch(self.game), GREEDY: GreedyBatch(self.game)}
        if cfg.opponents.heuristic > 0:
            self.baselines[HEURISTIC] = HeuristicBatch(self.game, seed=cfg.seed)
        if cfg.opponents.target > 0:
            self.baselines[TARGET] = batch_opponent(cfg.opponents.target_spec, self.game, seed=cfg.seed)
        self.snapshots: list[PolicyBatch | None] = [None] * cfg.opponents.max_snapshots
        self.snapshot_count = 0
        self.pool_weights = np.array([getattr(cfg.opponents, k) for k in POOL_KINDS], dtype=np.float64)
        self.stats = self._new_stats()
        if self.pi_critic:
            self._gid = game_id(self.game)
            self._all_obs = np.zeros((N, n, self.game.obs_size), dtype=np.float32)
            self._observe_all = specialize(_observe_all, self._gid, self.venv.states, self.game.params,
                                           self._all_obs)
        self._rows = np.arange(N)
        self._actions = np.zeros(N, dtype=np.int64)
        self.assign(self._rows)

    @staticmethod
    def _new_stats() -> dict:
        return {"games": 0, "wins": {k: [0.0, 0] for k in POOL_KINDS}}

    # -------------------------------------------------------------- opponents
    def add_snapshot(self, layers) -> None:
        self.snapshots[self.snapshot_count % len(self.snapshots)] = PolicyBatch(layers)
        self.snapshot_count += 1

    def assign(self, rows: np.ndarray) -> None:
        """Draw who plays games `rows` (they are starting)."""
        if rows.size == 0:
            return
        kinds = draw_kinds(self.pool_weights, self.rng, rows.size)
        have = [i for i, s in enumerate(self.snapshots) if s is not None]
        codes = KIND_CODES[kinds]
        snap = kinds == SNAPSHOT
        if have:
            codes[snap] += np.asarray(have)[self.rng.integers(len(have), size=int(snap.sum()))]
        else:
            kinds[snap] = SELF_PLAY  # no snapshot yet: self-play instead
        learner_seat = self.rng.integers(self.n, size=rows.size)
        ctrl = np.repeat(codes[:, None], self.n, axis=1)
        ctrl[np.arange(rows.size), learner_seat] = LEARNER
        ctrl[kinds == SELF_PLAY] = LEARNER
        self.ctrl[rows] = ctrl
        self.kind[rows] = kinds

    def _opponent(self, code: int):
        return self.baselines[code] if code < SNAPSHOT0 else self.snapshots[code - SNAPSHOT0]  # TARGET < 0

    # -------------------------------------------------------------- one rollout
    def critic_inputs(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """Critic input of seat seats[j] in game rows[j]: its observation, or (perfect-information
        critic) every seat's, starting with its own (needs `_all_obs` refreshed)."""
        if not self.pi_critic:
            return np.stack([self.game.observe(self.venv.states[r], int(k)) for r, k in zip(rows, seats)]) \
                if rows.size else np.zeros((0, self.game.obs_size), np.float32)
        order = (seats[:, None] + np.arange(self.n)[None, :]) % self.n
        return self._all_obs[rows[:, None], order].reshape(rows.size, -1)

    @torch.no_grad()
    def collect(self, model: ActorCritic) -> Buffer:
        cfg, buf, venv = self.cfg.ppo, self.buf, self.venv
        buf.clear()
        ptr = 0
        win_mode = cfg.reward == "win"
        for _ in range(cfg.rollout_steps):
            seats = venv.seats
            who = self.ctrl[self._rows, seats]
            learner = np.flatnonzero(who == LEARNER)
            actions = self._actions
            if learner.size:
                idx = np.arange(ptr, ptr + learner.size)
                obs = venv.obs[learner]
                mask = venv.masks[learner] != 0
                buf.obs[idx], buf.mask[idx] = obs, mask
                obs_t = torch.from_numpy(obs).to(self.device)
                logits = model.actor(obs_t)
                if self.pi_critic:
                    self._observe_all(self._gid, venv.states, self.game.params, self._all_obs)
                    cin = self.critic_inputs(learner, seats[learner])
                    buf.critic_in[idx] = cin
                    value = model.value(torch.from_numpy(cin).to(self.device))
                else:
                    value = model.value(obs_t)
                # one copy back: [logits | value] (the sampling and the buffer are numpy, see the class doc)
                out = torch.cat([logits.float(), value.float()[:, None]], dim=1).cpu().numpy()
                a, logp = sample_actions(out[:, :-1], mask, self.rng)
                buf.action[idx], buf.logp[idx] = a, logp
                buf.value[idx] = out[:, -1]
                actions[learner] = a
                self.chains.decide(buf, learner, seats[learner], idx)
                ptr += learner.size
            if learner.size < self.N:
                for code in np.unique(who[who != LEARNER]):
                    rows = np.flatnonzero(who == code)
                    actions[rows] = self._opponent(int(code)).act_batch(venv.obs[rows], venv.masks[rows], self.rng)
            _, _, _, rewards, terminated, truncated, _ = venv.step(actions)
            if win_mode:
                self.returns += rewards
            else:
                self.chains.add_rewards(buf, rewards * np.float32(cfg.score_scale))
            ended = np.flatnonzero(terminated | truncated)
            if ended.size:
                self._end_games(buf, ended, win_mode)
        buf.size = ptr
        rows, seats, idx = self.chains.close_rollout()
        if idx.size:
            if self.pi_critic:
                self._observe_all(self._gid, venv.states, self.game.params, self._all_obs)
            cin = torch.from_numpy(self.critic_inputs(rows, seats)).to(self.device)
            buf.boot[idx] = model.value(cin).float().cpu().numpy()  # into the numpy buffer
        return buf

    def _end_games(self, buf: Buffer, ended: np.ndarray, win_mode: bool) -> None:
        totals = self.returns[ended]
        shares = win_shares(totals)
        if win_mode:
            self.chains.add_rewards(buf, centered_win_shares(totals).astype(np.float32), ended)
        self.chains.end_games(buf, ended)
        # training-time win share of the learner against each pool kind (self-play: seat 0's view)
        ctrl = self.ctrl[ended]
        learner_seat = (ctrl != LEARNER).argmin(axis=1)
        mine = shares[np.arange(ended.size), learner_seat]
        for j, kind in enumerate(self.kind[ended]):
            acc = self.stats["wins"][POOL_KINDS[kind]]
            acc[0] += mine[j]
            acc[1] += 1
        self.stats["games"] += ended.size
        self.returns[ended] = 0.0
        self.assign(ended)

    # -------------------------------------------------------------- checkpoint
    def state_dict(self) -> dict:
        """Everything collection needs to go on exactly; arrays as tensors (torch.load's
        weights_only mode accepts tensors, not numpy arrays)."""
        v = self.venv
        t = lambda a: torch.from_numpy(np.array(a))  # noqa: E731 (a copy, as a tensor)
        return {"states": t(v.states), "obs": t(v.obs), "masks": t(v.masks), "seats": t(v.seats),
                "venv_rng": v._rng.bit_generator.state, "rng": self.rng.bit_generator.state,
                "returns": t(self.returns), "ctrl": t(self.ctrl), "kind": t(self.kind),
                "snapshots": [None if s is None else [(t(w), t(b)) for w, b in s.layers] for s in self.snapshots],
                "snapshot_count": self.snapshot_count}

    def load_state_dict(self, d: dict, where: str = "checkpoint") -> None:
        """Restore collection from `state_dict`'s output, every part checked before use (a file can
        be corrupted or crafted): each array's type, dtype and shape, every vector-env row through
        ``game.validate`` and its observation, mask and seat recomputed and compared, the controller
        codes and pool kinds against what this run can play, the snapshots' layer shapes and values.
        CheckpointError naming the first thing wrong; the collector is unchanged until all pass."""
        v, game, n, N = self.venv, self.game, self.n, self.N
        if not isinstance(d, dict):
            raise CheckpointError(f"{where}: the collector state is a {type(d).__name__}, not a dict")
        expected = {"states", "obs", "masks", "seats", "venv_rng", "rng", "returns", "ctrl", "kind",
                    "snapshots", "snapshot_count"}
        if set(d) != expected:
            raise CheckpointError(f"{where}: the collector state has keys {sorted(d)}, expected {sorted(expected)}")

        def array(name, dtype, shape):
            t = d[name]
            if not isinstance(t, torch.Tensor):
                raise CheckpointError(f"{where}: collector {name} is a {type(t).__name__}, not a tensor")
            a = t.numpy()
            if a.dtype != dtype or a.shape != shape:
                raise CheckpointError(f"{where}: collector {name} is {a.dtype} of shape {a.shape}; this run needs "
                                      f"{np.dtype(dtype)} of shape {shape}")
            return np.ascontiguousarray(a)

        states = array("states", np.int64, v.states.shape)
        obs = array("obs", np.float32, v.obs.shape)
        masks = array("masks", np.int8, v.masks.shape)
        seats = array("seats", np.int64, v.seats.shape)
        returns = array("returns", np.float64, (N, n))
        ctrl = array("ctrl", np.int64, (N, n))
        kind = array("kind", np.int64, (N,))
        check_vector_rows(game, states, obs, masks, seats, where)
        if not np.isfinite(returns).all():
            raise CheckpointError(f"{where}: collector returns hold NaN or infinite values")
        snaps = d["snapshots"]
        if not isinstance(snaps, list) or len(snaps) != len(self.snapshots):
            raise CheckpointError(f"{where}: expected a list of {len(self.snapshots)} snapshot slots "
                                  f"(opponents.max_snapshots), got {type(snaps).__name__}"
                                  f"{' of ' + str(len(snaps)) if isinstance(snaps, list) else ''}")
        sizes = [game.obs_size, *self.cfg.network.hidden, game.num_actions]
        snapshots = []
        for k, layers in enumerate(snaps):
            if layers is None:
                snapshots.append(None)
                continue
            try:
                got = [(w.numpy(), b.numpy()) for w, b in layers]
            except (TypeError, ValueError, AttributeError):
                raise CheckpointError(f"{where}: snapshot {k} is not a list of (weight, bias) tensors") from None
            if len(got) != len(sizes) - 1 or any(
                    w.dtype != np.float32 or b.dtype != np.float32 or w.shape != (sizes[i + 1], sizes[i])
                    or b.shape != (sizes[i + 1],) for i, (w, b) in enumerate(got)):
                raise CheckpointError(f"{where}: snapshot {k} has layers {[(w.dtype.name, w.shape) for w, _ in got]}; "
                                      f"this network needs float32 layers of sizes {sizes}")
            if not all(np.isfinite(w).all() and np.isfinite(b).all() for w, b in got):
                raise CheckpointError(f"{where}: snapshot {k} holds NaN or infinite weights")
            snapshots.append(PolicyBatch(got))
        count = d["snapshot_count"]
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise CheckpointError(f"{where}: snapshot_count {count!r} must be an int >= 0")
        filled = {i for i, s in enumerate(snapshots) if s is not None}
        if filled != set(range(min(count, len(snapshots)))):
            raise CheckpointError(f"{where}: snapshot_count {count} does not match the filled snapshot slots "
                                  f"{sorted(filled)}")
        codes = {LEARNER, *self.baselines, *(SNAPSHOT0 + i for i in filled)}
        bad = sorted(set(np.unique(ctrl).tolist()) - codes)
        if bad:
            raise CheckpointError(f"{where}: seat controller codes {bad} are not among this run's {sorted(codes)}")
        if ((kind < 0) | (kind >= len(POOL_KINDS))).any():
            raise CheckpointError(f"{where}: pool kinds must be 0..{len(POOL_KINDS) - 1}; got {sorted(set(kind.tolist()))}")
        venv_rng, rng = read_generators([d["venv_rng"], d["rng"]], where)
        # every part checked: only now does anything change
        v.states[...], v.obs[...], v.masks[...], v.seats[...] = states, obs, masks, seats
        v._rng, self.rng = venv_rng, rng
        self.returns[...], self.ctrl[...], self.kind[...] = returns, ctrl, kind
        self.snapshots, self.snapshot_count = snapshots, count


# ------------------------------------------------------------------------------ update
def ppo_update(model: ActorCritic, optimizer: torch.optim.Optimizer, buf: Buffer, cfg, rng: np.random.Generator,
               device: str | torch.device | None = None) -> dict:
    """Clipped-surrogate PPO epochs over one rollout's learner transitions; returns mean losses.
    The rollout goes to `device` (default: the model's) in one copy per array, minibatches are
    indexed there, and the minibatches' losses come back in one copy at the end, so a GPU is not
    made to wait for the host at every minibatch."""
    B = buf.size
    if B == 0:
        return {}
    adv = np.zeros(B, dtype=np.float32)
    gae(buf.reward[:B], buf.value[:B], buf.done[:B], buf.next[:B], buf.boot[:B],
        np.float32(cfg.gamma), np.float32(cfg.gae_lambda), adv)
    dev = next(model.parameters()).device if device is None else torch.device(device)
    obs = torch.from_numpy(buf.obs[:B]).to(dev)
    mask = torch.from_numpy(buf.mask[:B]).to(dev)
    cin = obs if buf.critic_in is None else torch.from_numpy(buf.critic_in[:B]).to(dev)
    act = torch.from_numpy(buf.action[:B]).to(dev)
    old_logp = torch.from_numpy(buf.logp[:B]).to(dev)
    adv_t = torch.from_numpy(adv).to(dev)
    ret_t = adv_t + torch.from_numpy(buf.value[:B]).to(dev)
    keys = ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_frac")
    per_minibatch = []  # each minibatch's stats, kept on the device until the end
    mb = min(cfg.minibatch_size, B)
    for _ in range(cfg.epochs):
        perm = torch.from_numpy(rng.permutation(B)).to(dev)
        for start in range(0, B, mb):
            j = perm[start:start + mb]
            logp_all = masked_log_probs(model.actor(obs[j]), mask[j])
            logp = logp_all.gather(1, act[j, None]).squeeze(1)
            probs = logp_all.exp()
            # illegal actions: p = 0 and log p = -inf; zero their log p first (0 * -inf is NaN,
            # in the backward pass too)
            entropy = -(probs * logp_all.masked_fill(~mask[j], 0.0)).sum(1).mean()
            ratio = (logp - old_logp[j]).exp()
            a = adv_t[j]
            if a.numel() > 1:
                a = (a - a.mean()) / (a.std() + 1e-8)
            pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - cfg.clip, 1 + cfg.clip)).mean()
            v_loss = 0.5 * (model.value(cin[j]) - ret_t[j]).pow(2).mean()
            loss = pg_loss - cfg.ent_coef * entropy + cfg.vf_coef * v_loss
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                log_ratio = logp - old_logp[j]
                per_minibatch.append(torch.stack([pg_loss, v_loss, entropy, ((ratio - 1) - log_ratio).mean(),
                                                  ((ratio - 1).abs() > cfg.clip).float().mean()]))
    sums = [0.0] * len(keys)
    for row in torch.stack(per_minibatch).cpu().tolist():  # one copy back, then summed in order in Python floats
        sums = [total + x for total, x in zip(sums, row)]
    return {k: total / len(per_minibatch) for k, total in zip(keys, sums)}


# ------------------------------------------------------------------------------ the run
class Trainer:
    """One training run in one folder: build, resume, iterate, checkpoint, export (see module doc)."""

    def __init__(self, run: RunConfig, run_dir: str | Path):
        self.run = run
        self.cfg: TrainConfig = run.train
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        p = self.cfg.ppo
        torch.set_num_threads(1)  # the update alone runs on ppo.torch_threads (network.torch_threads)
        self.device = check_device("ppo.device", p.device)  # ConfigError before anything is built
        self.collector = Collector(run, self.device)
        game = self.collector.game
        with torch.random.fork_rng(devices=[]):  # seeded init without touching the global RNG
            torch.manual_seed(self.cfg.seed)
            # initialized on the CPU, then moved: the same starting weights on every device
            self.model = ActorCritic(game.obs_size, game.num_actions, self.cfg.network.hidden,
                                     self.collector.critic_size).to(self.device)
        if self.cfg.network.init_actor:  # a fresh run starts from the file; a resumed one loads its checkpoint
            from domino_agents.trained import check_meta, load_policy

            layers, meta = load_policy(self.cfg.network.init_actor)
            check_meta(meta, game, f"network.init_actor {self.cfg.network.init_actor!r}")
            if meta["activation"] != "relu":  # our actor is a ReLU MLP; an RLlib export is tanh
                raise ConfigError(f"network.init_actor={self.cfg.network.init_actor!r} is a {meta['activation']} "
                                  f"network; the ppo actor it would start is ReLU (a ppo or dmc policy file)")
            self.model.load_actor_layers(layers, self.cfg.network.init_actor)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=p.lr, eps=1e-5)
        self.update = 0
        self.env_steps = 0
        self.seconds = 0.0  # training time over all sessions of this run

    def warm_start(self) -> dict:
        """Imitation of the configured teacher before the first update (training/learners/imitate.py)."""
        from domino_training.learners.imitate import clone, demonstrations

        im = self.cfg.imitation
        obs, masks, actions, targets = demonstrations(self.run, im.decisions, im.teacher, seed=self.cfg.seed + 1)
        with torch_threads(self.cfg.ppo.torch_threads):
            return clone(self.model, obs, masks, actions, targets, im.epochs, self.collector.rng, im.lr,
                         device=self.device)

    @property
    def steps_per_update(self) -> int:
        return self.cfg.ppo.num_envs * self.cfg.ppo.rollout_steps

    @property
    def lr_updates(self) -> int:
        """Updates over which anneal_lr takes lr to 0: those of the budget, or of ppo.lr_horizon's decisions."""
        return max(1, math.ceil((self.cfg.ppo.lr_horizon or self.cfg.budget.env_steps) / self.steps_per_update))

    def iterate(self) -> dict:
        """One update: collect a rollout, run the PPO epochs; returns the log row."""
        p = self.cfg.ppo
        t0 = time.perf_counter()
        if p.anneal_lr:
            for g in self.optimizer.param_groups:
                g["lr"] = p.lr * max(0.0, 1.0 - self.update / self.lr_updates)  # 0 past the horizon
        buf = self.collector.collect(self.model)
        t1 = time.perf_counter()
        with torch_threads(p.torch_threads):
            stats = ppo_update(self.model, self.optimizer, buf, p, self.collector.rng, self.device)
        t2 = time.perf_counter()
        self.update += 1
        self.env_steps += self.steps_per_update
        self.seconds += t2 - t0
        if self.update % self.cfg.opponents.snapshot_every == 0:
            self.collector.add_snapshot(self.model.actor_layers())
        row = {"update": self.update, "env_steps": self.env_steps, "seconds": round(self.seconds, 3),
               "steps_per_s": self.steps_per_update / (t2 - t0),
               "collect_steps_per_s": self.steps_per_update / (t1 - t0),
               "learner_transitions": buf.size, "lr": self.optimizer.param_groups[0]["lr"], **stats}
        wins = self.collector.stats["wins"]
        for kind, (total, count) in wins.items():
            if count:
                row[f"train_win_{kind}"] = total / count
        self.collector.stats = self.collector._new_stats()
        return row

    # -------------------------------------------------------------- files
    @property
    def checkpoint_path(self) -> Path:
        return self.dir / "checkpoint.pt"

    @property
    def policy_path(self) -> Path:
        return self.dir / "policy.npz"

    def export_policy(self, path: Path | None = None) -> Path:
        meta = policy_meta(self.collector.game, self.cfg.network.hidden, "ppo", self.env_steps,
                           self.run.to_dict()["train"])
        return save_policy(path or self.policy_path, self.model.actor_layers(), meta)

    def save_checkpoint(self, extra: dict | None = None) -> Path:
        data = {"format": CHECKPOINT_FORMAT, "package_version": __version__, "run": self.run.to_dict(),
                "update": self.update, "env_steps": self.env_steps, "seconds": self.seconds,
                "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "collector": self.collector.state_dict(), "extra": extra or {}}
        return save_checkpoint_file(self.checkpoint_path, data)

    def load_checkpoint(self, path: Path | None = None) -> dict:
        """Restore everything from a checkpoint of this same run; returns its `extra`."""
        path = Path(path or self.checkpoint_path)
        data = load_checkpoint_file(path, CHECKPOINT_FORMAT)
        theirs, mine = data["run"], self.run.to_dict()
        try:
            [theirs["train"]["ppo"][key] for key in ("num_envs", "rollout_steps", "perfect_info_critic")]
            [theirs[key] for key in ("game", "config")]
        except (KeyError, TypeError):
            raise CheckpointError(f"{path}: its run description is malformed (no game, config or train.ppo)") from None
        for key in ("game", "config"):
            if theirs[key] != mine[key]:
                raise CheckpointError(f"{path}: checkpoint is for {key} {theirs[key]!r}, this run has {mine[key]!r}")
        for key in ("network", "seed"):
            if theirs["train"].get(key) != mine["train"].get(key):
                raise CheckpointError(f"{path}: checkpoint has train.{key}={theirs['train'].get(key)!r}, "
                                      f"this run {mine['train'].get(key)!r}")
        for key in ("num_envs", "rollout_steps", "perfect_info_critic"):
            a, b = theirs["train"]["ppo"][key], mine["train"]["ppo"][key]
            if a != b:
                raise CheckpointError(f"{path}: checkpoint has ppo.{key}={a!r}, this run {b!r}: cannot resume")
        counts = read_counts(data, str(path))
        if counts["env_steps"] != counts["update"] * self.steps_per_update:
            raise CheckpointError(f"{path}: env_steps {counts['env_steps']} is not update {counts['update']} x "
                                  f"{self.steps_per_update} decisions an update")
        load_model_and_optimizer(self.model, self.optimizer, data, str(path),
                                 then=lambda: self.collector.load_state_dict(data["collector"], where=str(path)))
        self.update, self.env_steps, self.seconds = counts["update"], counts["env_steps"], counts["seconds"]
        extra = data.get("extra", {})
        if not isinstance(extra, dict):
            raise CheckpointError(f"{path}: 'extra' is a {type(extra).__name__}, not a dict")
        return extra


# ------------------------------------------------------------------------------ the ppo and ppo_bc learners
PPO_SECTIONS = ("ppo", "network", "opponents", "imitation", "distill", "budget.checkpoint_every")  # its params


def settings(run: LearnerRun, learner: str = "ppo") -> RunConfig:
    """The RunConfig ppo/ppo_bc train `run` with: TrainConfig's defaults (ppo_bc's warm start: 200k
    decisions of the heuristic), the game file's params and the run's (interface.learner_settings), with
    the run's seed and budget."""
    train = TrainConfig(seed=int(run.seed))
    train.budget.env_steps = int(run.budget)
    if learner == "ppo_bc":
        train.imitation.decisions = 200_000
    return RunConfig(run.game, dict(run.config), learner_settings(learner, run, train, PPO_SECTIONS))


def _imitation_steps(decisions: int) -> int:
    """Env steps imitate.demonstrations plays for `decisions` (it steps 64 games at a time)."""
    return math.ceil(decisions / 64) * 64 if decisions else 0


def train_ppo(run: LearnerRun, log: PointLog, progress: bool, learner: str = "ppo") -> None:
    """Our PPO (ppo.py Trainer) through the marks: the imitation warm start first when imitation.decisions
    asks (its decisions count in the budget), distillation rounds where distill.* asks."""
    cfg = log.settings  # settings(run, learner), built by the driver's check
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


register_learner("ppo", train_ppo, "our PPO on the vector env, from scratch",
                 check=lambda run: settings(run, "ppo"), settings=TrainConfig, sections=PPO_SECTIONS)
register_learner("ppo_bc", train_ppo_bc, "imitation warm start (the heuristic by default), then our PPO",
                 check=lambda run: settings(run, "ppo_bc"), settings=TrainConfig, sections=PPO_SECTIONS)


__all__ = ["PPO", "ActorCritic", "Budget", "Buffer", "Collector", "gae",
           "masked_log_probs", "ppo_update", "sample_actions", "SeatChains", "settings", "train_ppo", "train_ppo_bc",
           "TrainConfig", "Trainer"]
