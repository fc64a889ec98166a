"""Warm start by imitation: before PPO, the actor learns to copy a baseline (``imitation`` config).

Why: in these games the outcome is mostly the deal, so the signal of one decision in a win/loss is
faint and PPO from a random policy spends millions of decisions reaching what the rule-based
heuristic already plays. Behaviour cloning of the heuristic (cross-entropy of the masked policy on
the heuristic's choices, every seat played by the heuristic in the vector env) gives the actor that
level in seconds; the critic is fitted to the same games' win rewards (its targets are each seat's
final win share minus the fair share, the reward PPO uses), so the first PPO updates start from
sensible advantages. PPO then improves on the teacher by self-play and against the pool. The
shipped policy is still a plain network: the teacher is not consulted after the warm start.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from domino_envs.errors import ConfigError
from domino_envs.outcome import centered_win_shares
from domino_envs.vector import VectorEnv
from domino_training.learners.network import ActorCritic, masked_log_probs
from domino_training.learners.pool import batch_opponent
from domino_training.settings import bounded, is_spec

TEACHERS = ("heuristic", "greedy", "random")  # the baselines; any agent spec that plays from observations teaches
TEACHER = (is_spec, f"an agent spec that plays from observations, e.g. {list(TEACHERS)}, trained, mlp:checkpoint=PATH")


@dataclass
class Imitation:
    """Warm start: the actor first copies an agent's choices (training/learners/imitate.py); 0 decisions: off."""

    teacher: str = bounded("heuristic", rule=TEACHER)  # an agent spec that plays from observations: heuristic, greedy,
                                    # trained...
    decisions: int = bounded(0, min=0)  # teacher decisions to learn from
    epochs: int = bounded(8, min=1)  # passes over the demonstrations
    lr: float = bounded(1e-3, gt=0)  # Adam's learning rate while cloning


def demonstrations(run, decisions: int, teacher: str = "heuristic", num_envs: int = 64, seed: int = 0):
    """(obs, masks, actions, value targets) of `decisions` decisions with `teacher` (an agent spec,
    batched by `opponents.batch_opponent`) in every seat."""
    venv = VectorEnv(run.game, num_envs, seed=seed, **run.config)
    game = venv.game
    n = game.num_players
    agent = batch_opponent(teacher, game, seed=seed)
    rng = np.random.default_rng([seed, 0x1317])
    obs_out, mask_out, act_out = [], [], []
    pending: list[list[list[int]]] = [[[] for _ in range(n)] for _ in range(num_envs)]  # indices per seat
    returns = np.zeros((num_envs, n))
    targets: list[float] = []
    obs, masks, seats = venv.reset()
    count = 0
    while count < decisions:
        actions = agent.act_batch(obs, masks, rng)
        for i in range(num_envs):
            pending[i][int(seats[i])].append(count + i)
        obs_out.append(obs.copy())
        mask_out.append(masks != 0)
        act_out.append(actions.astype(np.int64))
        targets.extend([0.0] * num_envs)
        count += num_envs
        obs, masks, seats, rewards, term, trunc, _ = venv.step(actions)
        returns += rewards
        for i in np.flatnonzero(term | trunc):
            share = centered_win_shares(returns[i])
            for k in range(n):
                for j in pending[i][k]:
                    targets[j] = float(share[k])
                pending[i][k] = []
            returns[i] = 0.0
    # decisions of games still running at the end have no result: drop them
    unfinished = {j for per_env in pending for per_seat in per_env for j in per_seat}
    keep = np.array([j for j in range(count) if j not in unfinished], dtype=np.int64)
    if keep.size == 0:
        raise ConfigError(f"imitation.decisions={decisions} ended no game of {num_envs} played side by side, so "
                          f"there is nothing to learn from; use at least a few games' worth (e.g. 20000)")
    return (np.concatenate(obs_out)[keep], np.concatenate(mask_out)[keep], np.concatenate(act_out)[keep],
            np.asarray(targets, dtype=np.float32)[keep])


def clone(model: ActorCritic, obs, masks, actions, targets, epochs: int, rng: np.random.Generator,
          lr: float = 1e-3, batch: int = 1024, device: str | torch.device | None = None) -> dict:
    """Fit the actor to the teacher's actions and the critic to the win targets; returns the last
    epoch's loss and the actor's agreement with the teacher. The demonstrations go to `device`
    (default: the model's) once; minibatches are indexed there."""
    dev = next(model.parameters()).device if device is None else torch.device(device)
    o, m = torch.from_numpy(obs).to(dev), torch.from_numpy(masks).to(dev)
    a, v = torch.from_numpy(actions).to(dev), torch.from_numpy(targets).to(dev)
    critic_plain = model.critic[0].in_features == obs.shape[1]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    stats = {}
    for _ in range(epochs):
        perm = torch.from_numpy(rng.permutation(len(a))).to(dev)
        total, agree = 0.0, 0
        for s in range(0, len(a), batch):
            j = perm[s:s + batch]
            logp = masked_log_probs(model.actor(o[j]), m[j])
            loss = -logp.gather(1, a[j, None]).mean()
            if critic_plain:  # a perfect-information critic reads other inputs: PPO fits it
                loss = loss + 0.5 * (model.value(o[j]) - v[j]).pow(2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(j)
            agree += int((logp.argmax(1) == a[j]).sum())
        stats = {"bc_loss": total / len(a), "bc_agreement": agree / len(a)}
    return stats
