"""Domino Sum 7 as a PettingZoo AEC environment. Rules, actions, observation: domino_envs.games.sum7."""
from .env import env_factory

env, raw_env = env_factory("sum7_v0")
