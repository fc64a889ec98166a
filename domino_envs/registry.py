"""Registered games: one line per environment name, the one place a game is named outside its engine.

Everything the layers above need to know of a game comes from its line here or from its engine
class (core.Game: its action table, its table description for pictures, its heuristic family, its
docs page): the vector env's compiled dispatch, the pictures, the agents, the golden tests and the
docs test all derive their lists from `GAMES`. Adding a game: docs/adding_a_game.md.
"""
from __future__ import annotations

import importlib
from typing import NamedTuple

from .core import ConfigError, Game, build_config


class GameEntry(NamedTuple):
    """One registered environment: where its engine is, how its config differs, what it is called."""

    module: str  # the engine's module, importable
    engine: str  # the engine class in it (a core.Game subclass)
    defaults: dict  # config defaults that differ from the engine's Config
    title: str  # the game's name as a person reads it (pictures' title)


GAMES: dict[str, GameEntry] = {
    "draw_v0": GameEntry("domino_envs.games.draw", "DrawGame", {}, "Draw Game"),
    "block_v0": GameEntry("domino_envs.games.draw", "DrawGame", {"drawing": False, "first_seat": 0}, "Block Game"),
    "sum7_v0": GameEntry("domino_envs.games.sum7", "Sum7Game", {}, "Sum 7"),
    "seven_toed_pete_v0": GameEntry("domino_envs.games.pete", "PeteGame", {}, "Seven-Toed Pete"),
    "racehorse_v0": GameEntry("domino_envs.games.racehorse", "RacehorseGame", {}, "Racehorse"),
    "magic7_v0": GameEntry("domino_envs.games.magic7", "Magic7Game", {}, "Magic-7"),
}


def game_names() -> list[str]:
    return sorted(GAMES)


def engine_class(name: str) -> type[Game]:
    """The engine class of a registered game (ConfigError naming the registered games if none)."""
    if name not in GAMES:
        raise ConfigError(f"unknown game {name!r}; registered games: {game_names()}")
    entry = GAMES[name]
    return getattr(importlib.import_module(entry.module), entry.engine)


def engine_classes() -> list[type[Game]]:
    """Every registered engine class once, in registry order."""
    out: list[type[Game]] = []
    for name in GAMES:
        cls = engine_class(name)
        if cls not in out:
            out.append(cls)
    return out


def title(name: str) -> str:
    """The title of a registered game; any other name (an engine built by hand) is its own title."""
    entry = GAMES.get(name)
    return entry.title if entry is not None else name


def make_game(name: str, **config) -> Game:
    """The rules engine of a registered game, bound to a config (unknown keys rejected)."""
    cls = engine_class(name)
    return cls(build_config(cls.Config, name, GAMES[name].defaults, config), name=name)


def resolve_game(game, config: dict, front: str) -> Game:
    """The engine a front was given: a registered name built with `config`, or a Game instance
    (which has its config already: config keys beside it are an error, not silently ignored)."""
    if isinstance(game, str):
        return make_game(game, **config)
    if not isinstance(game, Game):
        raise ConfigError(f"{front}: game={game!r} must be a registered name or a Game instance")
    if config:
        raise ConfigError(f"{game.name}: config keys {sorted(config)} given with a Game instance, which has "
                          f"its config already; pass them with the game's name instead")
    return game


def config_value(text: str):
    """A command-line config value: true/false, none, an int, a float, else the string itself."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def config_from_pairs(items: list[str], flag: str = "--set") -> dict:
    """Command-line ``KEY=VALUE`` items -> a game config dict (values read by `config_value`);
    ConfigError naming an item without ``=`` or a key. The game checks the keys and values."""
    config = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ConfigError(f"{flag} {item!r}: write KEY=VALUE")
        config[key] = config_value(value)
    return config
