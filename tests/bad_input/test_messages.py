"""Bad input gets a clear error naming what was wrong and what is allowed."""
from __future__ import annotations

import numpy as np
import pytest

import domino_envs
from domino_envs import ConfigError, DealError, DominoError, IllegalActionError, make_game
from tests.env_cases import CONFIG_IDS, CONFIGS


def test_unknown_game_lists_registered_games():
    with pytest.raises(ConfigError, match=r"unknown game 'dominoes_v9'.*draw_v0"):
        domino_envs.make("dominoes_v9")


def test_unknown_config_key_lists_allowed_keys():
    with pytest.raises(ConfigError, match=r"unknown config key\(s\) \['players'\].*num_players"):
        domino_envs.make("draw_v0", players=3)


@pytest.mark.parametrize("key,value,pattern", [
    ("num_players", 5, r"num_players=5 must be an integer in 2\.\.4"),
    ("num_players", "3", r"num_players='3' must be an integer"),
    ("max_pip", 7, r"max_pip=7 is not allowed; allowed values: \[2, 3, 6, 9\]"),
    ("target", 0, r"target=0 must be an integer in 1\.\.1000000"),
    ("drawing", "yes", r"drawing='yes' must be True or False"),
    ("first_seat", 2, r"first_seat=2 must be an integer in 0\.\.1"),
    ("hand_size", 15, r"hand_size=15 must be an integer in 1\.\.14"),
])
def test_bad_config_values(key, value, pattern):
    with pytest.raises(ConfigError, match=pattern):
        domino_envs.make("draw_v0", **{key: value})


def test_bad_env_options():
    with pytest.raises(ConfigError, match=r"render_mode='rgb' is not supported; allowed: \[None, 'ansi', 'human', 'rgb_array'\]"):
        domino_envs.make("draw_v0", render_mode="rgb")
    with pytest.raises(DominoError, match=r"illegal_action='ignore' is not allowed"):
        domino_envs.make("draw_v0", illegal_action="ignore")


@pytest.mark.parametrize("name,kwargs", CONFIGS, ids=CONFIG_IDS)
def test_illegal_out_of_range_and_non_integer_actions(name, kwargs):
    env = domino_envs.make(name, **kwargs)
    env.reset(seed=11)
    n = env.action_space(env.agent_selection).n
    mask = env.observe(env.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(IllegalActionError, match=rf"action {illegal} \(.*\) is illegal .*legal actions: \[") as err:
        env.step(illegal)
    assert err.value.legal == np.flatnonzero(mask).tolist()
    with pytest.raises(IllegalActionError, match=rf"out of range; actions are 0\.\.{n - 1}"):
        env.step(n)
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(-1)
    with pytest.raises(IllegalActionError, match="is not an integer"):
        env.step(1.0)
    with pytest.raises(IllegalActionError, match="is not an integer"):
        env.step("3")
    with pytest.raises(IllegalActionError, match=r"step\(None\) is only for agents that are done"):
        env.step(None)
    # nothing was applied: the same agent is still to act with the same mask
    assert np.array_equal(env.observe(env.agent_selection)["action_mask"], mask)


def test_step_and_observe_before_reset():
    env = domino_envs.make("draw_v0")
    with pytest.raises(DominoError, match=r"call reset\(\) before step\(\)"):
        env.step(0)
    with pytest.raises(DominoError, match=r"call reset\(\) before observe\(\)"):
        env.observe("player_0")


def test_step_after_the_end():
    env = domino_envs.make("block_v0")
    env.reset(seed=0, options={"deal": {"hands": [[(6, 6), (0, 1)], [(2, 3), (4, 5)]]}})
    env.step(env.encode_action(6, 6, 0))
    assert all(env.terminations.values())
    with pytest.raises(IllegalActionError, match=r"is done .*step\(None\) removes it"):
        env.step(0)
    game = env.game
    with pytest.raises(IllegalActionError, match=r"the game is over; reset\(\) before stepping again"):
        game.step(env._state, 0)


def test_penalize_mode_terminates_offender_with_penalty():
    env = domino_envs.make("draw_v0", illegal_action="penalize", illegal_reward=-3.0)
    env.reset(seed=4)
    agent = env.agent_selection
    mask = env.observe(agent)["action_mask"]
    env.step(int(np.flatnonzero(mask == 0)[0]))
    assert all(env.terminations.values())
    assert env.rewards[agent] == -3.0
    assert sum(r for a, r in env.rewards.items() if a != agent) == 0.0
    assert env.infos[agent]["illegal_move"] is True
    with pytest.raises(IllegalActionError, match="out of range"):  # range errors always raise
        env2 = domino_envs.make("draw_v0", illegal_action="penalize")
        env2.reset(seed=1)
        env2.step(999)


@pytest.mark.parametrize("bad,pattern", [
    ({"hands": [[(1, 2)]]}, r"'hands' must be a list of 2 hands"),
    ({"hands": [[(1, 2)], [(1, 2)]]}, r"hand 1: tile \(1, 2\) is dealt twice"),
    ({"hands": [[(1, 2)], [(7, 7)]]}, r"hand 1: tile \(7, 7\) is not in a double-6 set"),
    ({"hands": [[(1, 2)], ["x"]]}, r"hand 1: 'x' is not a tile"),
    ({"hands": [[(1, 2)], []]}, r"every hand needs at least one tile"),
    ({"hands": [[(1, 2)], [(3, 4)]], "first": 2}, r"first=2 must be a seat 0\.\.1"),
    ({"hands": [[(1, 2)], [(3, 4)]], "stock": [(3, 4)]}, r"stock: tile \(3, 4\) is dealt twice"),
    ({"hands": [[(1, 2)], [(3, 4)]], "seat": 1}, r"a deal is a dict with keys"),
    ([[(1, 2)], [(3, 4)]], r"a deal is a dict with keys"),
])
def test_malformed_deals(bad, pattern):
    env = domino_envs.make("draw_v0")
    with pytest.raises(DealError, match=pattern):
        env.reset(seed=0, options={"deal": bad})


def test_block_game_deal_with_stock_rejected():
    game = make_game("block_v0")
    state = game.new_state()
    game.reset(state, 0)
    with pytest.raises(DealError, match="the Block Game has no stock"):
        game.set_deal(state, {"hands": [[(1, 2)], [(3, 4)]], "stock": [(5, 5)]})


def test_decode_rejects_wrong_shape():
    game = make_game("draw_v0")
    with pytest.raises(ValueError, match=r"observation has shape \(3,\), expected"):
        game.decode(np.zeros(3, dtype=np.float32))
