"""Batched opponents for the vector env: each chooses actions for many games in one call.

A baseline agent decides one observation at a time (~10-40 us a decision in Python); inside the
vector loop that would set the pace of every game. So each baseline here decides all the rows it
plays at once, with the same choice rule as its agent:

- `RandomBatch`: uniform over the legal actions (a random key per legal action, argmax).
- `GreedyBatch`: the greedy agent's score table (agents/actions.py `greedy_scores`), best legal
  score, ties broken uniformly at random.
- `HeuristicBatch`: the game's heuristic (agents/heuristic_*.py), every row in one call of its
  compiled batch kernel; ties broken by a Generator seeded from the caller's stream (one draw per
  call), row by row as the agent breaks them.
- `PolicyBatch`: a frozen copy of the learner's actor (a snapshot), one batched forward.
- `sample_actions`: the masked categorical sampler the learner and the snapshots share.

Every opponent draws from the `numpy.random.Generator` it is given (the trainer's own stream).
"""
from __future__ import annotations

import numpy as np

from domino_agents.actions import greedy_scores
from domino_agents.trained import mlp_logits


def _uniform_among(candidates: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per row, a uniformly chosen column among the True ones (every row has one)."""
    keys = rng.random(candidates.shape, dtype=np.float32)
    keys[~candidates] = -1.0
    return keys.argmax(axis=1)


def sample_actions(logits: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(actions, their log-probs) of the masked categorical softmax(logits) by Gumbel-max: an
    illegal action's logit is -inf, so it is never the argmax (probability exactly 0)."""
    z = np.where(mask, logits, -np.inf)
    zmax = z.max(axis=1, keepdims=True)
    logp_all = z - zmax - np.log(np.exp(z - zmax).sum(axis=1, keepdims=True))
    u = rng.random(z.shape, dtype=np.float32)
    gumbel = -np.log(-np.log(u + np.float32(1e-20)) + np.float32(1e-20))
    actions = (z + gumbel).argmax(axis=1)
    return actions, logp_all[np.arange(len(actions)), actions]


class RandomBatch:
    name = "random"

    def __init__(self, game):
        self.game = game

    def act_batch(self, obs: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return _uniform_among(masks != 0, rng)


class GreedyBatch:
    name = "greedy"

    def __init__(self, game):
        self.score = greedy_scores(game.action_table())

    def act_batch(self, obs, masks, rng):
        legal = masks != 0
        s = np.where(legal, self.score[None, :], -np.inf)
        best = legal & (s == s.max(axis=1, keepdims=True))
        return _uniform_among(best, rng)


class HeuristicBatch:
    """The game's heuristic over all its rows in one kernel call (`ScoredHeuristic.act_batch`).

    Each call seeds the tie-break Generator from one draw of the caller's `rng` and breaks the rows'
    ties from it in row order: the choices the per-row Python loop made before the kernels (issue 24)."""

    name = "heuristic"

    def __init__(self, game, seed: int = 0):
        from domino_agents.heuristics import make_heuristic

        self.agent = make_heuristic(game, seed=seed)

    def act_batch(self, obs, masks, rng):
        ties = np.random.default_rng(int(rng.integers(2**62)))
        return self.agent.act_batch(obs, masks, ties)


class PolicyBatch:
    """A frozen actor given as numpy layers [(W, b), ...], sampling its masked policy (a snapshot
    plays like the learner did, not its argmax, so the pool stays varied)."""

    name = "snapshot"

    def __init__(self, layers):
        self.layers = [(w.copy(), b.copy()) for w, b in layers]

    def act_batch(self, obs, masks, rng):
        return sample_actions(mlp_logits(self.layers, obs), masks != 0, rng)[0]
