"""Search distillation (DAgger): the actor learns a searching teacher's choices at the positions it
reaches itself (the ``distill`` config section; 0 rounds: off).

Why: PIMC beats the shipped policies, but it costs milliseconds a decision where the network costs
microseconds. Imitation of the heuristic (imitate.py) copies a teacher on the teacher's own games;
here the teacher is a search and the positions are the student's: each round the current actor
plays every seat of `positions`-worth of games (a draw from its masked softmax; in round 0 the
teacher plays a `teacher_moves` share of the moves, DAgger's mixing), the teacher labels every
decision with more than one legal action, the labelled positions join all earlier rounds', and the
actor is fitted to the whole set by cross-entropy (`epochs` passes). So the student learns what to
do in the positions its own mistakes lead to, not only in the teacher's.

Targets: a searching teacher's action values where it has them (PIMC's `action_values`: the mean
win share of each legal action), as its best actions (ties split, ``temperature`` 0) or a softmax
of the win shares over ``temperature``; else its `action_probs`, else its chosen action. A teacher
that searches is handed the state through `observe_state`, as the evaluation harness does, so it
sees what it would see in play and nothing more.

Resuming: the run folder holds the positions gathered so far (distill.npz) and the checkpoint
records the rounds done (``extra["distill_rounds"]``); each round draws from its own stream
(seed, round), so an interrupted run continues exactly as an uninterrupted one would. PPO then
starts from the distilled actor. The critic is not fitted here: PPO's first updates fit it.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import torch

from domino_envs.errors import ConfigError
from domino_envs.rng import mix_seed
from domino_training.network import masked_log_probs

DATA_FILE = "distill.npz"


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
    the share of positions whose argmax is one of the teacher's best actions."""
    o, m, t = torch.from_numpy(obs), torch.from_numpy(masks), torch.from_numpy(targets)
    opt = torch.optim.Adam(actor.parameters(), lr=lr)
    stats = {}
    for _ in range(epochs):
        perm = torch.from_numpy(rng.permutation(len(o)))
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
        return z["obs"], z["masks"], z["targets"]


def _save(path: Path, obs, masks, targets) -> None:
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, obs=obs, masks=masks, targets=targets)
    tmp.replace(path)


def run_rounds(trainer, start: int, echo=print) -> None:
    """Rounds `start`.. of the trainer's ``distill`` section, each saved (positions, then a
    checkpoint recording it) before the next begins."""
    from domino_agents.registry import make_agent

    cfg = trainer.cfg.distill
    game = trainer.collector.game
    data_path = trainer.dir / DATA_FILE
    have = _load(data_path)
    if start > 0 and have is None:
        raise ConfigError(f"{trainer.dir}: the checkpoint records {start} distillation rounds but {DATA_FILE} is "
                          f"missing; start the run again in a fresh folder")
    for r in range(start, cfg.rounds):
        t0 = time.perf_counter()
        seed = mix_seed(trainer.cfg.seed, 0xD157 + r)
        try:
            teacher = make_agent(cfg.teacher, game, seed=seed)
        except ValueError as err:
            raise ConfigError(f"distill.teacher={cfg.teacher!r}: {err}") from None
        rng = np.random.default_rng(seed)
        new = gather(game, trainer.model.actor_layers(), teacher, cfg.positions, rng,
                     cfg.teacher_moves if r == 0 else 0.0, cfg.temperature)
        have = new if have is None else tuple(np.concatenate([a, b]) for a, b in zip(have, new))
        _save(data_path, *have)
        stats = fit(trainer.model.actor, *have, cfg.epochs, cfg.lr, rng)
        trainer.seconds += time.perf_counter() - t0
        trainer.save_checkpoint({"distill_rounds": r + 1})
        echo(f"distill round {r + 1}/{cfg.rounds}: {len(have[0]):,} positions, " + json.dumps(
            {k: round(v, 4) for k, v in stats.items()}) + f", {time.perf_counter() - t0:.0f} s", flush=True)


def rounds_done(trainer, extra: dict) -> int:
    """Distillation rounds a resumed run has done: all once PPO has begun, else the checkpoint's record."""
    if trainer.update > 0:
        return trainer.cfg.distill.rounds
    done = extra.get("distill_rounds", 0)
    if isinstance(done, bool) or not isinstance(done, int) or done < 0:
        raise ConfigError(f"{trainer.checkpoint_path}: distill_rounds={done!r} must be an int >= 0")
    return done
