"""One rule-based heuristic per game, found from the engine: `make_heuristic(game, seed, **params)`.

The engine names its heuristic family (`Game.heuristic`: "family" or "family:variant", a plain
string, so the env layer imports nothing of the agents); the class is found by convention as
``domino_agents.heuristic_<family>.<Family>Heuristic`` (heuristic_line.py for Draw and Block,
heuristic_fives.py for Seven-Toed Pete and Racehorse, heuristic_sum7.py, heuristic_magic7.py). A
new game with a heuristic adds that module; a game without one (``heuristic = None``) gets a
ConfigError saying so.
"""
from __future__ import annotations

import importlib

from domino_envs.errors import ConfigError


def heuristic_family(game) -> str:
    """The family part of the engine's `heuristic` ("fives" of "fives:pete"); ConfigError if none."""
    named = getattr(game, "heuristic", None)
    if not named:
        raise ConfigError(f"{game.name}: this game has no rule-based heuristic (its engine "
                          f"{type(game).__name__} names none: heuristic = {named!r}); use another agent, "
                          f"e.g. random or greedy")
    return named.partition(":")[0]


def heuristic_class(game):
    """The heuristic class for `game`'s engine (ConfigError if the game has none or the named
    module or class does not exist)."""
    family = heuristic_family(game)
    module, name = f"domino_agents.heuristic_{family}", f"{family.capitalize()}Heuristic"
    try:
        cls = getattr(importlib.import_module(module), name, None)
    except ModuleNotFoundError as err:
        if err.name != module:  # the module exists but something it imports does not
            raise
        cls = None
    if cls is None:
        raise ConfigError(f"{game.name}: its engine names the heuristic family {family!r}, but "
                          f"{module}.{name} does not exist")
    return cls


def make_heuristic(game, seed: int | None = None, **params):
    return heuristic_class(game)(game, seed=seed, **params)
