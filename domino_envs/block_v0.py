"""The Block Game (Draw Game without drawing) as a PettingZoo AEC environment. See domino_envs.games.draw."""
from .env import env_factory

env, raw_env = env_factory("block_v0")
