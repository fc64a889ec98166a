"""Seven-Toed Pete as a PettingZoo AEC environment. Rules, actions, observation: domino_envs.games.pete."""
from .env import env_factory

env, raw_env = env_factory("seven_toed_pete_v0")
