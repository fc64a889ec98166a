"""What a picture of a position shows, as plain data: the seats, the play on the felt, the facts.

Each engine fills in a `Table` for its own positions (`Game.describe_table`), so the renderer
(pictures.py) draws any game without knowing which one it is: a line of dominoes (`LinePlay`),
Magic-7's suit rows (`RowsPlay`) or nothing yet. Pure data and two small helpers; no drawing,
no Pillow, no game module (the engines import this, not the other way round).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .core import H_DONE, H_HAND
from .tiles import TILE_A, TILE_B


@dataclass
class Seat:
    label: str
    count: int  # tiles held (Magic-7: live tiles)
    lines: list[str]  # score, chips, notes
    to_act: bool = False
    viewer: bool = False
    tiles: list | None = None  # face up: dominoes (a, b) or Magic-7 card ids; None: face down
    killed: int = 0  # Magic-7
    killed_tiles: list | None = None  # face up (own hand or full table)


@dataclass
class LinePlay:
    center: tuple[int, int]
    moves: list[tuple[int, int, int]]  # (arm, inner pip, outer pip) in play order after the centre
    branches: dict[int, tuple[int, int, int]] = field(default_factory=dict)  # arm -> (host arm, index, 0|1)
    open_arms: set[int] = field(default_factory=set)
    closed_arms: set[int] = field(default_factory=set)  # closed by a rule (Sum 7's zero traps)


@dataclass
class RowsPlay:  # Magic-7
    rows: list[tuple[int, int]]  # (low, high) rank per suit, (0, 0) while the 7 is not out
    on_joker: set[int]  # card ids lying on a joker
    waiting: dict[tuple[int, int], int]  # (suit, 0 low | 1 high) -> target card of an unfilled joker


@dataclass
class Table:
    name: str
    title: str
    info: list[str]
    seats: list[Seat]
    bottom: int  # seat drawn at the bottom of the picture
    play: LinePlay | RowsPlay | None
    footer: str = ""
    max_pip: int = 6


def hand_number(state) -> int:
    """The hand (Magic-7: game) a position belongs to, counted from 1: the one in play, or the
    last one once the episode is over."""
    return int(state[H_HAND]) + (0 if state[H_DONE] else 1)


def line_play(view: dict, order: list, open_arms) -> LinePlay | None:
    """The LinePlay of a `layout.lay_arms` view (centre, each arm's (inner, outer) pips, the
    spinners), with the arms in play order (`order`: (tile, arm) per placement, the centre first)
    and the arms open now; None before the first tile."""
    if view["center"] < 0:
        return None
    c = view["center"]
    used = {a: 0 for a in view["arms"]}
    moves = []
    for _, arm in order[1:]:
        inner, outer = view["arms"][arm][used[arm]]
        used[arm] += 1
        moves.append((arm, int(inner), int(outer)))
    branches = {}
    for _, host, idx, first in view["spinners"]:
        branches[first] = (host, idx, 0)
        branches[first + 1] = (host, idx, 1)
    return LinePlay((int(TILE_A[c]), int(TILE_B[c])), moves, branches, set(open_arms))
