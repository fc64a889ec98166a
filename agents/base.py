"""The Agent protocol every player in this project follows."""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Agent(Protocol):
    """A policy for one seat. Reads only the observation vector and the int8 action mask."""

    def reset(self, seed: int | None = None) -> None:
        """Start a new episode; seed any randomness the agent uses."""

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """A legal action id for this observation."""
