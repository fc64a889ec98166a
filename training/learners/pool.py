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
- `PolicyBatch`: a frozen actor, one batched forward: a snapshot of the learner (it samples, as
  the learner plays), or a policy file's agent (its argmax, as `mlp:checkpoint=` plays by default).
- `batch_opponent(spec, game, seed)`: the batched form of an agent spec, one of the above that
  plays like `make_agent(spec)`; a learned best response plays against it (its target).
- `sample_actions`: the masked categorical sampler the learner and the snapshots share.
- `POOL_KINDS`, declared here with the `Opponents` settings section whose weights are named after
  them, and `draw_kinds`, the per-game draw of a kind that ppo and dmc share (dmc plays a subset);
  `REWARDS`, what a learner's seats are rewarded with (ppo.reward, dmc.reward).

Every opponent draws from the `numpy.random.Generator` it is given (the trainer's own stream).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from domino_agents.actions import greedy_scores
from domino_agents.trained import mlp_logits
from domino_training.settings import bounded

# The opponent pool's kinds, declared once (the `Opponents` weights are named after them; a drawn
# kind is its index here, training/learners/pool.py `draw_kinds`):
#   self_play  the learner in every seat (all seats' decisions train it)
#   snapshot   a frozen earlier learner in the other seats (ppo; sb3 plays it as its learner copy)
#   random, greedy, heuristic  that baseline agent in the other seats
#   target     the fixed agent `target_spec` in the other seats (ppo only: a best response)
# dmc plays the kinds without snapshot and target, sb3 those without target.
POOL_KINDS = ("self_play", "snapshot", "random", "greedy", "heuristic", "target")
REWARDS = ("win", "score")
REWARDS = ("win", "score")  # "win": a seat's win share minus the fair share; "score": the game's points, scaled


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



def draw_kinds(weights: np.ndarray, rng: np.random.Generator, count: int) -> np.ndarray:
    """For each of `count` starting games, the index of the kind that plays it, drawn with
    probabilities proportional to `weights` (one per kind: >= 0, a positive sum)."""
    w = np.asarray(weights, dtype=np.float64)
    return rng.choice(w.size, size=count, p=w / w.sum())


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
    """A frozen actor given as numpy layers [(W, b), ...]. ``sample`` (a snapshot): a draw from its
    masked policy, as the learner played, so the pool stays varied; otherwise the highest legal
    logit, as a policy file's agent plays (`PolicyAgent`, `QPolicyAgent`)."""

    name = "snapshot"

    def __init__(self, layers, sample: bool = True):
        self.layers = [(w.copy(), b.copy()) for w, b in layers]
        self.sample = bool(sample)

    def act_batch(self, obs, masks, rng):
        logits = mlp_logits(self.layers, obs)
        if self.sample:
            return sample_actions(logits, masks != 0, rng)[0]
        return np.where(masks != 0, logits, -np.inf).argmax(axis=1)


def batch_opponent(spec: str, game, seed: int = 0):
    """The batched opponent that plays like ``make_agent(spec, game)``: random, greedy and the
    heuristic (without parameters) as their array forms, a policy file (``mlp:checkpoint=``,
    ``dmc:checkpoint=``, ``trained``) as one forward pass. Other agents are refused: some keep
    state from one decision of a hand to the next (the tabular policy reads its history; PIMC
    searches the hidden state), which a batch of unrelated rows cannot give them. ConfigError (a
    DominoError) naming the spec and what is allowed."""
    from domino_agents.registry import make_agent, parse_spec
    from domino_envs.errors import ConfigError, DominoError

    try:
        name, params = parse_spec(spec)
        if not params and name == "heuristic":
            return HeuristicBatch(game, seed=seed)
        if not params and name in ("random", "greedy"):
            return RandomBatch(game) if name == "random" else GreedyBatch(game)
        agent = make_agent(spec, game, seed=seed) if name in ("mlp", "dmc", "trained") else None
    except (ValueError, DominoError) as err:
        raise ConfigError(f"opponent {spec!r}: {err}") from None
    if agent is None:
        raise ConfigError(f"opponent {spec!r} cannot play batched in the vector env; allowed: random, greedy, "
                          f"heuristic, mlp:checkpoint=PATH, dmc:checkpoint=PATH, trained")
    return PolicyBatch(agent.layers, sample=agent.sample)


__all__ = ["POOL_KINDS", "GreedyBatch", "HeuristicBatch", "PolicyBatch", "RandomBatch", "batch_opponent", "draw_kinds",
           "sample_actions"]
