"""Racehorse (Seven-Toed Pete, points version) as a PettingZoo AEC environment. See domino_envs.games.racehorse."""
from .env import env_factory

env, raw_env = env_factory("racehorse_v0")
