"""Agents that play through the public API only: `act(observation, action_mask) -> action`.

`make_agent(spec, game, seed)` builds one by name (agents/registry.py); `register_agent(name, cls)`
adds your own, so every command that takes agent specs plays it (docs/examples/my_agent.py)."""
from .base import Agent
from .greedy import GreedyAgent
from .random_agent import RandomAgent
from .registry import agent_names, make_agent, register_agent

__all__ = ["Agent", "GreedyAgent", "RandomAgent", "agent_names", "make_agent", "register_agent"]
