"""The small configs (configs/small/): the Draw and Block Games on the double-two and double-three
sets, the same rules on fewer tiles. The generic tests (api, properties, vector == AEC, bad input)
run them through tests/env_cases.py; here: the files, the refusals that stay, and the rules on a
hand-set double-two deal."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from domino_envs import ConfigError, make_game
from domino_envs.games import draw as D
from domino_training.configs import load, make_from_file
from tests.env_cases import CONFIGS
from tests.helpers import random_game

SMALL = sorted((Path(__file__).resolve().parents[2] / "configs" / "small").glob("*.yaml"))


def test_there_are_two_games_in_two_sizes():
    sizes = {}
    for path in SMALL:
        name, config = load(path)
        sizes.setdefault(name, set()).add(config["max_pip"])
    assert sizes == {"draw_v0": {2, 3}, "block_v0": {2, 3}}


@pytest.mark.parametrize("path", SMALL, ids=lambda p: p.stem)
def test_small_config_file_builds_its_game_and_the_generic_tests_run_it(path):
    name, config = load(path)
    env = make_from_file(path)
    assert env.game.config == make_game(name, **config).config
    # the generic tests list the config (defaults left out)
    default = make_game(name).config_dict()
    differs = {k: v for k, v in env.game.config_dict().items() if default[k] != v}
    assert (name, differs) in CONFIGS


@pytest.mark.parametrize("max_pip,tiles", [(2, 6), (3, 10)])
def test_small_sets_have_their_tiles_and_actions(max_pip, tiles):
    game = make_game("draw_v0", max_pip=max_pip, hand_size=2)
    assert game.n_tiles == tiles and game.num_actions == 2 * tiles
    o = game.decode(game.observe(_dealt(game, 1), 0))
    assert o["hand"].shape == (tiles,) and o["ends"].shape == (2, max_pip + 1)


def _dealt(game, seed):
    s = game.new_state()
    game.reset(s, seed)
    return s


@pytest.mark.parametrize("kwargs,match", [
    ({"max_pip": 2}, r"max_pip=2 has no D-1 hand size; set hand_size \(1\.\.3 with 2 players\)"),
    ({"max_pip": 3, "num_players": 3}, r"max_pip=3 has no D-1 hand size; set hand_size \(1\.\.3 with 3 players\)"),
    ({"max_pip": 4, "hand_size": 2}, r"max_pip=4 is not allowed; allowed values: \[2, 3, 6, 9\]"),
    ({"max_pip": 2, "hand_size": 4}, r"hand_size=4 must be an integer in 1\.\.3"),
    ({"max_pip": 2, "hand_size": 2, "num_players": 4}, r"hand_size=2 must be an integer in 1\.\.1"),
])
def test_what_stays_refused(kwargs, match):
    for name in ("draw_v0", "block_v0"):
        with pytest.raises(ConfigError, match=match):
            make_game(name, **kwargs)


def test_double_two_deal_plays_by_the_draw_rules():
    game = make_game("draw_v0", max_pip=2, hand_size=2)
    s = game.new_state()
    game.reset(s, 0)
    game.set_deal(s, {"hands": [[(2, 2), (0, 0)], [(0, 1), (1, 1)]], "stock": [(0, 2), (1, 2)], "first": 0})
    assert game.legal_actions(s) == [game.encode_action(0, 0, 0), game.encode_action(2, 2, 0)]
    game.step(s, game.encode_action(2, 2, 0))
    # D-2: seat 1 holds no 2 and draws 0-2, playable, so it stops there and must play it (forced:
    # both ends show 2); then seat 0's 0-0 is its one legal play and it goes out (D-3: it scores
    # seat 1's 1 + 2 pips)
    assert game.is_over(s)
    assert int(s[D.DRAWN + 1]) == 1 and game.boneyard(s) == [(1, 2)]
    assert game.line(s)[-1][0] == 0  # tile id 0 is 0-0, placed last
    assert list(game.rewards(s)) == [3.0, -3.0]


@pytest.mark.parametrize("name,kwargs", [c for c in CONFIGS if c[1].get("max_pip") in (2, 3)],
                         ids=lambda c: str(c))
def test_small_games_end_zero_sum_and_conserve_tiles(name, kwargs):
    game = make_game(name, **kwargs)
    s = game.new_state()
    rng = np.random.default_rng(3)
    for seed in range(200):
        _, total = random_game(game, s, seed, rng, check=lambda st: game.invariants_ok(st) or pytest.fail("tiles"))
        assert abs(total.sum()) < 1e-9
