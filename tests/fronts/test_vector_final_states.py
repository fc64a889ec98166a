"""The vector env's info["final_states"] are the finished games, not their successors (a regression
that once passed the whole suite; tests/mutations/run.py plants it)."""
from __future__ import annotations

import numpy as np
import pytest

from domino_envs import make_game
from domino_envs.core import H_DONE, H_REWARD
from domino_envs.fronts import deal_to_decision
from domino_envs.vector import make_vec, next_episode_seed
from tests.helpers import vector_reference_rows


# ------------------------------------------------------------------------------ final_states
@pytest.mark.parametrize("name,kwargs", [("draw_v0", {"num_players": 3}), ("sum7_v0", {})])
def test_vector_final_states_are_the_finished_games(name, kwargs):
    """info["final_states"] rows are the games as they ended (H_DONE set, the final rewards in
    the header) and every seat's observation of them is the engine's, stepped directly."""
    n_envs = 8
    venv = make_vec(name, n_envs, seed=11, **kwargs)
    game = make_game(name, **kwargs)
    refs = vector_reference_rows(game, n_envs, seed=11)
    obs, masks, seats = venv.reset()
    rng = np.random.default_rng(2)
    checked = 0
    while checked < 20:
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        obs, masks, seats, rewards, term, trunc, info = venv.step(actions)
        finals = {int(i): row for i, row in zip(info["final_index"], info["final_states"])}
        for i, s in enumerate(refs):
            game.step(s, int(actions[i]))
            if not game.is_over(s):
                assert i not in finals
                continue
            row = finals[i]
            assert row[H_DONE] == 1
            assert np.array_equal(row[H_REWARD:H_REWARD + game.num_players], s[H_REWARD:H_REWARD + game.num_players])
            for seat in range(game.num_players):
                assert np.array_equal(game.observe(row, seat), game.observe(s, seat)), f"env {i}, seat {seat}"
            assert np.array_equal(row, s)
            checked += 1
            deal_to_decision(game, s, int(next_episode_seed(s)))


