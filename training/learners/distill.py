"""Search distillation (DAgger, expert iteration): the actor learns a searching teacher's choices at
the positions it reaches itself (the ``distill`` config section; 0 rounds and 0 every_updates: off).

Why: PIMC beats the shipped policies, but it costs milliseconds a decision where the network costs
microseconds. Imitation of the heuristic (imitate.py) copies a teacher on the teacher's own games;
here the teacher is a search and the positions are the student's: each round the current actor
plays every seat of `positions`-worth of games (a draw from its masked softmax; in round 0 the
teacher plays a `teacher_moves` share of the moves, DAgger's mixing), the teacher labels every
decision with more than one legal action, the labelled positions join earlier rounds' (the last
`window` rounds, 0: all), and the actor is fitted to them by cross-entropy (`epochs` passes). So the
student learns what to do in the positions its own mistakes lead to, not only in the teacher's.

When: `rounds` rounds after imitation, before PPO; then, with `every_updates` > 0, one more round
after every that many PPO updates, so search and self-play alternate (expert iteration). A teacher
spec with ``policy=current`` searches with the actor as it is at the round (its rollouts follow the
student, written to distill_teacher.npz in the run folder first), so a stronger student makes a
stronger teacher. With ``teacher_deals`` > 0 each round's teacher first plays that many duplicate deals
against ``teacher_opponent`` (the same deals every round), and distill.csv records its win share, so a
round that made the teacher weaker shows.

Targets: a searching teacher's action values where it has them (PIMC's `action_values`: the mean
win share of each legal action), as its best actions (ties split, ``temperature`` 0) or a softmax
of the win shares over ``temperature``; else its `action_probs`, else its chosen action. A teacher
that searches is handed the state through `observe_state`, as the evaluation harness does, so it
sees what it would see in play and nothing more.

Resuming: the run folder holds the positions gathered so far (distill.npz, each with its round) and
every checkpoint records the rounds done (``extra["distill_rounds"]``); each round draws from its
own stream (seed, round), and a round due before the checkpoint's update that it does not record is
run first, so an interrupted run continues exactly as an uninterrupted one would. The critic is not
fitted here: PPO's next updates fit it.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from domino_envs.errors import ConfigError
from domino_envs.rng import mix_seed
from domino_training.learners.network import masked_log_probs, torch_threads
from domino_training.learners.run_folder import CsvLog, Eval, PointLog
from domino_training.settings import bounded, is_spec

DATA_FILE = "distill.npz"
TEACHER_FILE = "distill_teacher.npz"  # the actor a policy=current teacher searches with
SEARCH_SPEC = (is_spec, "an agent spec, e.g. pimc:n=64,rollout=random")


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
    #                                 teacher_opponent (the evaluation's deals, Eval.seed: the same every round): distill.csv's teacher_win
    teacher_opponent: str = bounded("pimc:n=64,rollout=random", rule=SEARCH_SPEC)  # the table the teacher's strength
                                    # is measured against


def teacher_targets(teacher, game, state, seat: int, returns: np.ndarray, mask: np.ndarray,
                    temperature: float) -> np.ndarray:
    """The teacher's target distribution over actions at `state` (module doc)."""
    target = np.zeros(game.num_actions, dtype=np.float32)
    if getattr(teacher, "searches", False):
        teacher.observe_state(state, seat, returns)
    if hasattr(teacher, "action_values"):
        legal, (win, _) = teacher.action_values(mask)
        if temperature > 0:
            z = np.exp((win - win.max()) / temperature)
            target[legal] = z / z.sum()
        else:
            best = legal[win >= win.max() - 1e-9]
            target[best] = 1.0 / best.size
        return target
    obs = game.observe(state, seat)
    if hasattr(teacher, "action_probs"):
        return np.asarray(teacher.action_probs(obs, mask), dtype=np.float32)
    target[teacher.act(obs, mask)] = 1.0
    return target


def gather(game, actor_layers, teacher, positions: int, rng: np.random.Generator, teacher_moves: float,
           temperature: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(obs, masks, targets) of `positions` decisions the student reaches, every seat its own."""
    from domino_agents.trained import mlp_logits

    obs_out, mask_out, target_out = [], [], []
    state = game.new_state()
    while len(obs_out) < positions:
        game.reset(state, int(rng.integers(2**63)))
        returns = np.zeros(game.num_players)
        while not game.is_over(state) and len(obs_out) < positions:
            mask = game.legal_mask(state)
            legal = np.flatnonzero(mask)
            if legal.size == 1:
                action = int(legal[0])
            else:
                seat = game.current_seat(state)
                obs = game.observe(state, seat)
                target = teacher_targets(teacher, game, state, seat, returns, mask, temperature)
                obs_out.append(obs.copy())
                mask_out.append(mask != 0)
                target_out.append(target)
                if teacher_moves > 0 and rng.random() < teacher_moves:
                    action = int(np.argmax(target))
                else:
                    logits = mlp_logits(actor_layers, obs).astype(np.float64)
                    logits[mask == 0] = -np.inf
                    p = np.exp(logits - logits.max())
                    action = int(rng.choice(p.size, p=p / p.sum()))
            game.step(state, action)
            returns += game.rewards(state)
    return np.stack(obs_out), np.stack(mask_out), np.stack(target_out)


def fit(actor: torch.nn.Module, obs, masks, targets, epochs: int, lr: float, rng: np.random.Generator,
        batch: int = 1024) -> dict:
    """Cross-entropy of the masked policy against the targets; returns the last epoch's loss and
    the share of positions whose argmax is one of the teacher's best actions. The positions go to
    the actor's device (ppo.device) once; minibatches are indexed there."""
    dev = next(actor.parameters()).device
    o, m, t = (torch.from_numpy(a).to(dev) for a in (obs, masks, targets))
    opt = torch.optim.Adam(actor.parameters(), lr=lr)
    stats = {}
    for _ in range(epochs):
        perm = torch.from_numpy(rng.permutation(len(o))).to(dev)
        total, agree = 0.0, 0
        for s in range(0, len(o), batch):
            j = perm[s:s + batch]
            logp = masked_log_probs(actor(o[j]), m[j])
            loss = -(t[j] * torch.where(m[j], logp, torch.zeros_like(logp))).sum(1).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(j)
            best = t[j] >= t[j].max(1, keepdim=True).values - 1e-6
            agree += int(best.gather(1, logp.argmax(1, keepdim=True)).sum())
        stats = {"distill_loss": total / len(o), "distill_agreement": agree / len(o)}
    return stats


def _load(path: Path):
    if not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as z:
        return z["obs"], z["masks"], z["targets"], z["round"]


def _save(path: Path, obs, masks, targets, rounds) -> None:
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, obs=obs, masks=masks, targets=targets, round=rounds)
    tmp.replace(path)


def rounds_due(cfg, update: int) -> int:
    """Rounds a run has done once it reaches PPO update `update`: the ones before PPO, plus one
    after every `every_updates` updates."""
    return cfg.rounds + (update // cfg.every_updates if cfg.every_updates else 0)


def teacher_spec(trainer) -> str:
    """distill.teacher with ``policy=current`` resolved to the actor as it is now (written to TEACHER_FILE)."""
    from domino_agents.registry import parse_spec

    spec = trainer.cfg.distill.teacher
    _, params = parse_spec(spec)
    if params.get("policy") == "current":
        path = trainer.export_policy(trainer.dir / TEACHER_FILE)
        name, _, rest = spec.partition(":")
        spec = name + ":" + ",".join(f"policy={path}" if item.strip() == "policy=current" else item
                                     for item in rest.split(","))
    return spec


def make_teacher(trainer, spec: str, seed: int):
    """Round r's teacher agent from its resolved spec (`teacher_spec`)."""
    from domino_agents.registry import make_agent

    try:
        return make_agent(spec, trainer.collector.game, seed=seed)
    except ValueError as err:
        raise ConfigError(f"distill.teacher={trainer.cfg.distill.teacher!r}: {err}") from None


def teacher_strength(trainer, spec: str) -> dict:
    """The teacher's win share against distill.teacher_opponent on distill.teacher_deals duplicate deals
    (the evaluation's default deals, run_folder.Eval.seed: the same each round), so a round whose teacher got weaker shows; {} when off."""
    from domino_training.evaluate import evaluate

    cfg, run = trainer.cfg.distill, trainer.run
    if not cfg.teacher_deals:
        return {}
    opponent = cfg.teacher_opponent
    report = evaluate(run.game, [spec, opponent], cfg.teacher_deals, Eval().seed, dict(run.config),
                      pairs=[(spec, opponent)], progress=False)
    win = report.matchups[(spec, opponent)].win_stat
    return {"teacher_win": win.mean, "teacher_lo": win.lo, "teacher_hi": win.hi}


def run_round(trainer, r: int, echo=print) -> dict:
    """Round r: gather and label the student's positions, keep them with the earlier rounds', fit the
    actor to the window, then save a checkpoint recording r + 1 rounds done; returns the round's stats."""
    cfg = trainer.cfg.distill
    game = trainer.collector.game
    data_path = trainer.dir / DATA_FILE
    have = _load(data_path)
    if r > 0 and have is None:
        raise ConfigError(f"{trainer.dir}: the checkpoint records {r} distillation rounds but {DATA_FILE} is "
                          f"missing; start the run again in a fresh folder")
    if have is not None:  # a round interrupted after saving its positions gathers them again
        have = tuple(a[have[3] < r] for a in have)
    t0 = time.perf_counter()
    seed = mix_seed(trainer.cfg.seed, 0xD157 + r)
    spec = teacher_spec(trainer)
    strength = teacher_strength(trainer, spec)
    teacher = make_teacher(trainer, spec, seed)
    rng = np.random.default_rng(seed)
    new = gather(game, trainer.model.actor_layers(), teacher, cfg.positions, rng,
                 cfg.teacher_moves if r == 0 else 0.0, cfg.temperature)
    new = (*new, np.full(len(new[0]), r, dtype=np.int64))
    have = new if have is None else tuple(np.concatenate([a, b]) for a, b in zip(have, new))
    _save(data_path, *have)
    keep = have[3] > r - cfg.window if cfg.window else np.ones(len(have[3]), bool)
    with torch_threads(trainer.cfg.ppo.torch_threads):
        stats = fit(trainer.model.actor, *(a[keep] for a in have[:3]), cfg.epochs, cfg.lr, rng)
    trainer.seconds += time.perf_counter() - t0
    trainer.save_checkpoint({"distill_rounds": r + 1})
    stats = {"round": r + 1, "update": trainer.update, "positions": int(keep.sum()), **stats, **strength,
             "seconds": round(time.perf_counter() - t0, 1)}
    echo(f"distill round {r + 1} (update {trainer.update}): " + json.dumps(
        {k: round(v, 4) if isinstance(v, float) else v for k, v in stats.items() if k not in ("round", "update")}),
        flush=True)
    return stats


def run_rounds(trainer, start: int, stop: int, echo=print) -> list[dict]:
    """Rounds `start`..`stop - 1`, each saved before the next begins; their stats."""
    return [run_round(trainer, r, echo) for r in range(start, stop)]


def rounds_done(trainer, extra: dict) -> int:
    """Distillation rounds a resumed run has done: the checkpoint's record (a checkpoint written before
    rounds were recorded once PPO began counts the pre-PPO rounds as done)."""
    if "distill_rounds" not in extra:
        return trainer.cfg.distill.rounds if trainer.update > 0 else 0
    done = extra["distill_rounds"]
    if isinstance(done, bool) or not isinstance(done, int) or done < 0:
        raise ConfigError(f"{trainer.checkpoint_path}: distill_rounds={done!r} must be an int >= 0")
    return done


class PPOWithRounds:
    """Our PPO Trainer with its distillation rounds (distill.*, training/learners/distill.py): the
    rounds due before PPO first, then one after every ``distill.every_updates`` updates, each logged in
    distill.csv and counted in the checkpoint, so a resumed run does each round once."""

    def __init__(self, trainer, extra: dict, log: PointLog):
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
