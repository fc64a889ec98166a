"""What each action id of a game means, as plain arrays: the table `Game.action_table()` returns.

Rule-based agents need to know which tile (or card) an action plays and where, and what it sheds.
Each engine builds this table from its own action encoding (its module docstring's action
table), so the agents stay game-agnostic where they can be (the greedy agent is one argmax over
`weight`) and the compiled PIMC rollouts use the same table for their greedy policy:

    kind[a]         PLACE (a tile or card goes on the table), JOKER (magic7: a joker on a slot),
                    DRAW (magic7), KILL (magic7), PASS (sum7's wait, magic7's pass)
    tile[a]         the tile id placed / killed (tiles.py ids for domino sets, card ids for magic7;
                    52 for "kill a joker"), -1 for none
    arm[a]          the arm / side / slot (line games: arm; magic7 jokers: 2*suit + end), -1 for none
    weight[a]       the penalty this action sheds from the hand: pip total of the tile (line games),
                    Table-1 penalty of the card (magic7: a joker sheds 20), 0 for draw/kill/pass
    tile_weight[t]  the penalty tile (or card) id t counts while held: what placing it sheds, and
                    what killing it locks in

The table is derived from the encoding only, never from a state.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .tiles import TILE_A, TILE_B

PLACE, JOKER, DRAW, KILL, PASS = 0, 1, 2, 3, 4
KIND_NAMES = {PLACE: "place", JOKER: "joker", DRAW: "draw", KILL: "kill", PASS: "pass"}


@dataclass(frozen=True)
class ActionTable:
    """Per-action meaning of one engine's action space (see module doc)."""

    family: str  # the encoding: "line" (tile x arm: draw, block, pete, racehorse), "sum7" or "magic7"
    arms: int  # arms per tile in the encoding (line games, sum7); 0 for magic7
    kind: np.ndarray
    tile: np.ndarray
    arm: np.ndarray
    weight: np.ndarray
    tile_weight: np.ndarray


def empty_columns(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(kind, tile, arm, weight) of n actions before an engine fills them: every action a PLACE
    of no tile on no arm shedding nothing."""
    return (np.full(n, PLACE, dtype=np.int64), np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64),
            np.zeros(n, dtype=np.float64))


def tile_arm_table(family: str, n_tiles: int, arms: int, n_actions: int) -> ActionTable:
    """The table of a ``tile * arms + arm`` encoding over the first n_tiles tile ids (a tile sheds
    its pip total), followed by PASS actions up to n_actions (Sum 7's wait)."""
    kind, tile, arm, weight = empty_columns(n_actions)
    n_place = n_tiles * arms
    ids = np.arange(n_place)
    tile[:n_place] = ids // arms
    arm[:n_place] = ids % arms
    pips = (TILE_A[:n_tiles] + TILE_B[:n_tiles]).astype(np.float64)
    weight[:n_place] = pips[tile[:n_place]]
    kind[n_place:] = PASS
    return ActionTable(family, arms, kind, tile, arm, weight, pips)
