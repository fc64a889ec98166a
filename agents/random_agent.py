"""Uniformly random legal actions from a seeded numpy Generator."""
from __future__ import annotations

import numpy as np


class RandomAgent:
    """Picks a legal action uniformly at random (the floor every baseline must clear)."""

    name = "random"

    def __init__(self, game=None, seed: int | None = None):
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def legal(self, action_mask: np.ndarray) -> np.ndarray:
        """Legal action ids of a mask; ValueError if there is none (the env never asks then)."""
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError(f"{type(self).__name__}.act: the action mask has no legal action")
        return legal

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = self.legal(action_mask)
        return int(legal[self._rng.integers(legal.size)])

    def action_probs(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The probability `act` gives each action (uniform over the legal ones): what an exact
        exploitability walk (domino_training.exploit) reads instead of sampling `act`."""
        return uniform_over(self.legal(action_mask), np.asarray(action_mask).size)


def uniform_over(actions: np.ndarray, num_actions: int) -> np.ndarray:
    """float64 probabilities of `num_actions` actions: uniform over `actions`, 0 elsewhere."""
    p = np.zeros(num_actions)
    p[actions] = 1.0 / len(actions)
    return p
