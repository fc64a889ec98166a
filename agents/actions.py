"""Agent logic over a game's action table (`game.action_table()`, domino_envs/actions.py).

The table itself (what each action id places, kills or draws, and the weight it sheds) is the
engine's: it is built from the game's own action encoding. What is left here is agent logic: the
greedy preference the greedy agent, its batched opponent and PIMC's greedy rollouts share.
"""
from __future__ import annotations

import numpy as np

from domino_envs.actions import KILL, PASS, ActionTable


def greedy_scores(table: ActionTable) -> np.ndarray:
    """The greedy preference of every action: weight shed; a kill scores minus the penalty it
    locks in (kill the cheapest); a pass / wait ranks below everything (used by GreedyAgent and
    by PIMC's greedy rollouts)."""
    score = table.weight.astype(np.float64).copy()
    kills = np.flatnonzero(table.kind == KILL)
    score[kills] = -table.tile_weight[table.tile[kills]]
    score[table.kind == PASS] = -1000.0
    return score
