"""Every shipped config file loads and builds its game; bad files fail clearly."""
from __future__ import annotations

from pathlib import Path

import pytest

import domino_envs
from domino_training.configs import load, make_from_file

CONFIG_DIR = Path(__file__).resolve().parents[2] / "configs"


def test_every_registered_game_has_a_config_file():
    names = {load(p)[0] for p in CONFIG_DIR.glob("*.yaml")}
    assert names == set(domino_envs.game_names())


@pytest.mark.parametrize("path", sorted(CONFIG_DIR.glob("*.yaml")), ids=lambda p: p.name)
def test_config_file_builds_the_default_game(path):
    name, config = load(path)
    env = make_from_file(path)
    default = domino_envs.make(name)
    assert env.game.config == default.game.config  # the files state the defaults exactly
    assert config


def test_bad_config_files(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("game: draw_v0\nconfig:\n  players: 3\n")
    with pytest.raises(domino_envs.ConfigError, match="unknown config key"):
        make_from_file(bad)
    bad.write_text("config: {}\n")
    with pytest.raises(ValueError, match="expected a mapping with a 'game' key"):
        load(bad)
    bad.write_text("game: draw_v0\nseed: 3\n")
    with pytest.raises(ValueError, match=r"unknown top-level key\(s\) \['seed'\]"):
        load(bad)
