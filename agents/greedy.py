"""Greedy baseline: shed the heaviest tile (most penalty) first - the seeds' own tip.

"Try to play your high value dominoes as soon as possible, in that way, even if your opponent
wins the round, he wont score too many points" (seed 002). Every game here scores what is left
in hand, so one rule serves all five: among the legal actions pick the one that sheds the most
pips / penalty points (the engine's action table, `weight`). Magic-7's non-shedding moves rank below any
shedding one: a draw scores 0, a kill scores minus the penalty it locks in (kill the cheapest),
Sum 7's wait ranks below every placement (greedy never waits). Ties are broken at random with
the agent's own seeded Generator. It reads only the action mask; no observation is needed.
"""
from __future__ import annotations

import numpy as np

from .actions import greedy_scores
from .random_agent import RandomAgent, uniform_over


class GreedyAgent(RandomAgent):
    """Heaviest tile / most penalty shed first, random tie-break (see module doc)."""

    name = "greedy"

    def __init__(self, game, seed: int | None = None):
        super().__init__(game, seed)
        self.game = game
        self._score = greedy_scores(game.action_table())

    def best(self, action_mask: np.ndarray) -> np.ndarray:
        """The legal actions that shed the most (act picks one of them uniformly)."""
        legal = self.legal(action_mask)
        s = self._score[legal]
        return legal[s == s.max()]

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        best = self.best(action_mask)
        return int(best[self._rng.integers(best.size)]) if best.size > 1 else int(best[0])

    def action_probs(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """`act`'s probabilities: uniform over the tied heaviest legal actions."""
        return uniform_over(self.best(action_mask), np.asarray(action_mask).size)
