"""What each action id of a game means, derived only from the game's documented action encoding.

Rule-based agents need to know which tile (or card) an action plays and where; the engines
document their encodings in their module docstrings, so this module rebuilds that meaning as
plain arrays, once per engine, without touching any state:

    kind[a]    PLACE (a tile or card goes on the table), JOKER (magic7: a joker on a slot),
               DRAW (magic7), KILL (magic7), PASS (sum7's wait, magic7's pass)
    tile[a]    the tile id placed / killed (tiles.py ids for domino sets, card ids for magic7;
               52 for "kill a joker"), -1 for none
    arm[a]     the arm / side / slot (line games: arm; magic7 jokers: 2*suit + end), -1 for none
    weight[a]  the penalty this action sheds from the hand: pip total of the tile (line games),
               Table-1 penalty of the card (magic7: a joker sheds 20), 0 for draw/kill/pass

Why a separate table: it keeps agents game-agnostic where they can be (the greedy agent is one
argmax over `weight`) and is the same table the compiled PIMC rollouts use for their greedy
rollout policy. If an engine changes its encoding this module must follow its docstring.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from domino_envs.tiles import TILE_A, TILE_B

PLACE, JOKER, DRAW, KILL, PASS = 0, 1, 2, 3, 4
KIND_NAMES = {PLACE: "place", JOKER: "joker", DRAW: "draw", KILL: "kill", PASS: "pass"}

# magic7: Table-1 penalties by card id (suit * 13 + rank - 1) and the joker
MAGIC7_JOKER_PENALTY = 20


def magic7_penalty(card: int) -> int:
    """Table-1 penalty of a magic7 card id (0..51) or joker (52, 53)."""
    return MAGIC7_JOKER_PENALTY if card >= 52 else card % 13 + 1


@dataclass(frozen=True)
class ActionTable:
    """Per-action meaning of one engine's action space (see module doc)."""

    family: str  # "line" (draw, block, pete, racehorse), "sum7" or "magic7"
    arms: int  # arms per tile in the encoding (line games, sum7); 0 for magic7
    kind: np.ndarray
    tile: np.ndarray
    arm: np.ndarray
    weight: np.ndarray


_LINE_ENGINES = ("DrawGame", "PeteGame", "RacehorseGame")
KNOWN_ENGINES = _LINE_ENGINES + ("Sum7Game", "Magic7Game")


def action_table(game) -> ActionTable:
    """The ActionTable of an engine instance; ValueError naming the supported engines otherwise."""
    cls = type(game).__name__
    n = int(game.num_actions)
    kind = np.full(n, PLACE, dtype=np.int64)
    tile = np.full(n, -1, dtype=np.int64)
    arm = np.full(n, -1, dtype=np.int64)
    weight = np.zeros(n, dtype=np.float64)
    if cls in _LINE_ENGINES or cls == "Sum7Game":
        n_place = n - 1 if cls == "Sum7Game" else n
        n_tiles = 28 if cls != "DrawGame" else int(game.n_tiles)
        if n_place % n_tiles:
            raise ValueError(f"{game.name}: {n_place} placement actions is not a multiple of {n_tiles} tiles; "
                             "the documented encoding is tile * arms + arm")
        arms = n_place // n_tiles
        ids = np.arange(n_place)
        tile[:n_place] = ids // arms
        arm[:n_place] = ids % arms
        weight[:n_place] = TILE_A[tile[:n_place]] + TILE_B[tile[:n_place]]
        if cls == "Sum7Game":
            kind[n - 1] = PASS
        return ActionTable("sum7" if cls == "Sum7Game" else "line", arms, kind, tile, arm, weight)
    if cls == "Magic7Game":
        if n != 115:
            raise ValueError(f"{game.name}: expected the documented 115 magic7 actions, got {n}")
        for a in range(52):
            tile[a] = a
            weight[a] = magic7_penalty(a)
        for a in range(52, 60):
            kind[a] = JOKER
            tile[a] = 52
            arm[a] = a - 52
            weight[a] = MAGIC7_JOKER_PENALTY
        kind[60] = DRAW
        for a in range(61, 113):
            kind[a] = KILL
            tile[a] = a - 61
        kind[113] = KILL
        tile[113] = 52
        kind[114] = PASS
        return ActionTable("magic7", 0, kind, tile, arm, weight)
    raise ValueError(f"{getattr(game, 'name', cls)}: no action table for engine {cls}; known engines: {list(KNOWN_ENGINES)}")


def greedy_scores(table: ActionTable) -> np.ndarray:
    """The greedy preference of every action: weight shed; a kill scores minus the penalty it
    locks in (kill the cheapest); a pass / wait ranks below everything (used by GreedyAgent and
    by PIMC's greedy rollouts)."""
    score = table.weight.astype(np.float64).copy()
    for a in np.flatnonzero(table.kind == KILL):
        score[a] = -magic7_penalty(int(table.tile[a]))
    score[table.kind == PASS] = -1000.0
    return score
