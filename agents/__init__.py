"""Agents that play through the public API only: `act(observation, action_mask) -> action`."""
from .base import Agent
from .greedy import GreedyAgent
from .random_agent import RandomAgent

__all__ = ["Agent", "GreedyAgent", "RandomAgent"]
