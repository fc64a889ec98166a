"""One rule-based heuristic per game, chosen by engine: `make_heuristic(game, seed, **params)`.

The heuristics themselves live in one module per family (heuristic_line.py for Draw and Block,
heuristic_fives.py for Seven-Toed Pete and Racehorse, heuristic_sum7.py, heuristic_magic7.py);
this module only maps an engine to its class so the registry and the CLI can say "heuristic".
"""
from __future__ import annotations

import importlib

_BY_ENGINE = {
    "DrawGame": ("domino_agents.heuristic_line", "LineHeuristic"),
    "PeteGame": ("domino_agents.heuristic_fives", "FivesHeuristic"),
    "RacehorseGame": ("domino_agents.heuristic_fives", "FivesHeuristic"),
    "Sum7Game": ("domino_agents.heuristic_sum7", "Sum7Heuristic"),
    "Magic7Game": ("domino_agents.heuristic_magic7", "Magic7Heuristic"),
}


def heuristic_class(game):
    """The heuristic class for `game`'s engine (ValueError listing the supported engines)."""
    cls = type(game).__name__
    if cls not in _BY_ENGINE:
        raise ValueError(f"{game.name}: no heuristic for engine {cls}; known engines: {sorted(_BY_ENGINE)}")
    module, name = _BY_ENGINE[cls]
    return getattr(importlib.import_module(module), name)


def make_heuristic(game, seed: int | None = None, **params):
    return heuristic_class(game)(game, seed=seed, **params)
