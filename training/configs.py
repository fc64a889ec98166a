"""Per-game YAML configs (configs/*.yaml): `game: <name>` plus a `config:` mapping of rule keys.

The mapping is overlaid on the engine's defaults by `domino_envs.make`, so an unknown key or a bad
value fails there with the list of what is allowed.
"""
from __future__ import annotations

from pathlib import Path

import yaml

import domino_envs


def load(path: str | Path) -> tuple[str, dict]:
    """(game name, config dict) from a YAML file; ValueError naming what is malformed."""
    data = yaml.safe_load(Path(path).read_text())
    if not isinstance(data, dict) or "game" not in data:
        raise ValueError(f"{path}: expected a mapping with a 'game' key (and optional 'config'), got {data!r}")
    extra = set(data) - {"game", "config"}
    if extra:
        raise ValueError(f"{path}: unknown top-level key(s) {sorted(extra)}; allowed: ['config', 'game']")
    config = data.get("config") or {}
    if not isinstance(config, dict):
        raise ValueError(f"{path}: 'config' must be a mapping, got {config!r}")
    return data["game"], config


def make_from_file(path: str | Path, **env_kwargs):
    """The PettingZoo env a config file describes."""
    name, config = load(path)
    return domino_envs.make(name, **config, **env_kwargs)
