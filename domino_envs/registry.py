"""Registered games: one line per environment name (module, engine class, config defaults)."""
from __future__ import annotations

import importlib

from .core import ConfigError, Game, build_config

# name -> (module, engine class, config defaults that differ from the engine's Config)
GAMES: dict[str, tuple[str, str, dict]] = {
    "draw_v0": ("domino_envs.games.draw", "DrawGame", {}),
    "block_v0": ("domino_envs.games.draw", "DrawGame", {"drawing": False, "first_seat": 0}),
    "sum7_v0": ("domino_envs.games.sum7", "Sum7Game", {}),
    "seven_toed_pete_v0": ("domino_envs.games.pete", "PeteGame", {}),
    "racehorse_v0": ("domino_envs.games.racehorse", "RacehorseGame", {}),
    "magic7_v0": ("domino_envs.games.magic7", "Magic7Game", {}),
}


def game_names() -> list[str]:
    return sorted(GAMES)


def make_game(name: str, **config) -> Game:
    """The rules engine of a registered game, bound to a config (unknown keys rejected)."""
    if name not in GAMES:
        raise ConfigError(f"unknown game {name!r}; registered games: {game_names()}")
    module, cls_name, defaults = GAMES[name]
    cls = getattr(importlib.import_module(module), cls_name)
    return cls(build_config(cls.Config, name, defaults, config), name=name)


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
