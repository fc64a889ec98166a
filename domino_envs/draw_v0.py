"""The Draw Game as a PettingZoo AEC environment. Rules, actions, observation: domino_envs.games.draw."""
from .env import env_factory

env, raw_env = env_factory("draw_v0")
