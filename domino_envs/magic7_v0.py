"""Magic-7 as a PettingZoo AEC environment. Rules, actions, observation: domino_envs.games.magic7."""
from .env import env_factory

env, raw_env = env_factory("magic7_v0")
