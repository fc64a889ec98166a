"""Each slot of a state row declared once: its offset, size and allowed range come from one table.

A game module declares its row with a `Slots` table at import time::

    ROW = Slots("draw", base=HEADER)          # the game's slots follow the common header
    HANDS = ROW.slot("hands", MAX_PLAYERS, 0, tiles_mask, used=players)
    JUST_DREW = ROW.slot("just drew", 1, 0, 1)
    DECK = ROW.slot("deck", 4, doc="packed ...")           # no range: read through a view
    LAY = lay_block(ROW, 2, max_pip=..., n_tiles=...)      # a sub-block with its own table
    STATE_SIZE = ROW.close()

Each call returns the slot's first index as a plain int, so the kernels read module-level ints
that numba folds into the compiled code as constants, as the hand-chained offsets were. The same
table then gives the row size (`close`), what `Game.validate` checks (`ranges`, the
``(name, first, count, lo, hi)`` tuples of `Game.slot_ranges`) and a printable slot map
(`slot_map`). A range depends on the config where needed: a bound is an int or a function of the
game (``lambda g: g.num_players - 1``), and ``used`` (an int or such a function) says that only the
first `used` slots take the range while the rest (absent seats) must hold 0.

A slot without bounds is not range-checked (packed bytes read through a view, a seed, a slot the
game checks in code: say which in ``doc``). `block` reserves a run of slots whose inner table is a
function of the game (the layout's arms depend on the config); `view` names slots already
declared (a scratch area inside a block). `ObsLayout` does the same for the observation vector:
the named pieces, declared once as a function of the config's dimensions, give `obs_pieces` (so
`decode`) and a constant table of piece offsets that the observation kernels index.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

Bound = int | Callable[[Any], int]


def resolve(bound, game) -> int | None:
    """A bound's value for `game`: the int itself, or the function's result (None stays None)."""
    if bound is None or isinstance(bound, (int, np.integer)):
        return None if bound is None else int(bound)
    return int(bound(game))


@dataclass(frozen=True)
class Entry:
    """One run of slots of a given game: what `validate` checks and the slot map prints. lo/hi
    None: not range-checked (``doc`` says why)."""

    name: str
    start: int
    size: int
    lo: int | None = None
    hi: int | None = None
    doc: str = ""

    @property
    def checked(self) -> bool:
        return self.lo is not None


@dataclass(frozen=True)
class _Decl:
    name: str
    start: int
    size: int
    lo: Bound | None
    hi: Bound | None
    used: Bound | None
    doc: str
    expand: Callable[[Any], list[Entry]] | None = None  # a block: game -> entries (absolute)
    view: bool = False  # names slots declared elsewhere: no size of its own, never checked


class Slots:
    """A row's slot table (see the module docstring). Offsets count from `start`; with `base`,
    from the end of the base table, whose entries come first in `entries` and the slot map."""

    def __init__(self, name: str, start: int = 0, *, base: Slots | None = None):
        self.name = name
        self.base = base
        if base is not None:
            if not base.closed:
                raise ValueError(f"{name}: the base table {base.name!r} must be closed first")
            start = base.size
        self.start = start
        self._end = start
        self._decls: list[_Decl] = []
        self.closed = False

    # ---- declaring
    def _add(self, decl: _Decl) -> int:
        if self.closed:
            raise ValueError(f"{self.name}: slot {decl.name!r} declared after close()")
        if decl.size < 0:
            raise ValueError(f"{self.name}: slot {decl.name!r} has a negative size {decl.size}")
        if any(d.name == decl.name for d in self._decls):
            raise ValueError(f"{self.name}: slot {decl.name!r} is declared twice")
        self._decls.append(decl)
        if not decl.view:
            self._end += decl.size
        return decl.start

    def slot(self, name: str, size: int = 1, lo: Bound | None = None, hi: Bound | None = None, *,
             used: Bound | None = None, doc: str = "") -> int:
        """Reserve `size` slots after the last one; return the first index. Every value within
        lo..hi (or, with `used`, the first `used` slots within lo..hi and the rest 0); no bounds:
        not range-checked."""
        if (lo is None) != (hi is None):
            raise ValueError(f"{self.name}: slot {name!r} needs both bounds or neither")
        if used is not None and lo is None:
            raise ValueError(f"{self.name}: slot {name!r} has a used count but no range")
        return self._add(_Decl(name, self._end, int(size), lo, hi, used, doc))

    def block(self, name: str, size: int, expand: Callable[[Any], list[Entry]], doc: str = "") -> int:
        """Reserve `size` slots for a sub-block whose entries for a game are `expand(game)`
        (absolute slot numbers, within the block); return its first index."""
        return self._add(_Decl(name, self._end, int(size), None, None, None, doc, expand=expand))

    def view(self, name: str, start: int, size: int, doc: str = "") -> int:
        """Name `size` slots from `start` that another entry already reserves (no new slots, not
        checked); return `start`."""
        if not (self.start <= start and start + size <= self._end):
            raise ValueError(f"{self.name}: view {name!r} ({start}..{start + size - 1}) is outside the "
                             f"slots declared so far ({self.start}..{self._end - 1})")
        return self._add(_Decl(name, int(start), int(size), None, None, None, doc, view=True))

    def close(self) -> int:
        """No more slots; return the row size (the first slot past the table)."""
        self.closed = True
        return self._end

    @property
    def size(self) -> int:
        """The first slot past the table (the row size once closed)."""
        return self._end

    # ---- reading, for one game
    def entries(self, game, *, views: bool = True) -> list[Entry]:
        """Every run of slots in row order (the base table's first), bounds resolved for `game`."""
        out = self.base.entries(game, views=views) if self.base is not None else []
        for d in self._decls:
            if d.view and not views:
                continue
            if d.expand is not None:
                inner = d.expand(game)
                for e in inner:
                    if not (d.start <= e.start and e.start + e.size <= d.start + d.size):
                        raise ValueError(f"{self.name}: block {d.name!r} entry {e.name!r} lies outside "
                                         f"the block ({d.start}..{d.start + d.size - 1})")
                out += inner
                continue
            lo, hi = resolve(d.lo, game), resolve(d.hi, game)
            used = resolve(d.used, game)
            if used is None or lo is None:
                out.append(Entry(d.name, d.start, d.size, lo, hi, d.doc))
                continue
            if not 0 <= used <= d.size:
                raise ValueError(f"{self.name}: slot {d.name!r} uses {used} of its {d.size} slots")
            if used:
                out.append(Entry(d.name, d.start, used, lo, hi, d.doc))
            if used < d.size:
                out.append(Entry(f"{d.name} of absent seats", d.start + used, d.size - used, 0, 0,
                                 f"{d.name}: only the first {used} are used"))
        return out

    def ranges(self, game) -> list[tuple[str, int, int, int, int]]:
        """``(name, first slot, count, lo, hi)`` of every range-checked run (`Game.slot_ranges`)."""
        return [(e.name, e.start, e.size, e.lo, e.hi) for e in self.entries(game, views=False)
                if e.checked and e.size > 0]

    def slot_map(self, game) -> str:
        """The row as text, one line per run of slots: name, first slot, size, range, note."""
        rows = [("slot", "first", "size", "range", "note")]
        for e in self.entries(game):
            rng = f"{e.lo}..{e.hi}" if e.checked else "-"
            rows.append((e.name, str(e.start), str(e.size), rng, e.doc))
        w = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = [f"{r[0]:<{w[0]}}  {r[1]:>{w[1]}}  {r[2]:>{w[2]}}  {r[3]:<{w[3]}}  {r[4]}".rstrip() for r in rows]
        lines.append(f"row size {self.size}")
        return "\n".join(lines)


# Bounds every game's slots use, as functions of the game (its seats, its tiles, its observation's bound).
def seats(g) -> int:
    return g.num_players


def last_seat(g) -> int:
    return g.num_players - 1


def high(g) -> int:
    """The observation's bound (`Game.obs_high`) as an int: scores, penalties, awards."""
    return int(g.obs_high())


def tile_count(g) -> int:
    return g.n_tiles


def tile_mask(g) -> int:
    """Every tile of the game's set as a bitmask."""
    return (1 << g.n_tiles) - 1


def record_entries(table: Slots, game, start: int, prefix: str) -> list[Entry]:
    """The entries of a record table (offsets from 0) placed at `start`, names prefixed: one arm of
    the layout at its place in the row, say."""
    return [Entry(f"{prefix}{e.name}", start + e.start, e.size, e.lo, e.hi, e.doc)
            for e in table.entries(game)]


class ObsLayout:
    """The observation's named pieces, declared once as ``shapes(*dims) -> [(name, shape), ...]``
    over the config's dimensions (number of players, ...). `pieces(*dims)` is what a game's
    `obs_pieces` returns (and so what `decode` and `obs_size` use); `at` is an int64 array, indexed
    ``at[*dims, piece]``, holding the first entry of each piece (the last column: the size) for
    every combination of `grid` values, -1 elsewhere. Observation kernels read their offsets
    there (a global array: numba compiles it in as a constant), so they and `decode` cannot
    disagree; `index(name)` gives a piece's column as a plain int.

    Where every offset is affine in the dimensions (no product of two of them), `coef` holds it
    as ``coef[0, piece] + sum(coef[1 + d, piece] * dims[d])``, checked on every grid cell (None
    otherwise): a kernel that indexes `coef` with constant columns gets its offsets as folded
    constants times the dimensions, arithmetic LLVM optimizes like hand-written offsets (a load
    from `at` with a runtime row costs a few percent in the observation kernels)."""

    def __init__(self, shapes: Callable[..., list[tuple[str, tuple[int, ...]]]], *grid):
        self.shapes = shapes
        self.grid = [tuple(int(v) for v in axis) for axis in grid]
        names = None
        cells = list(itertools.product(*self.grid))
        for dims in cells:
            got = tuple(name for name, _ in shapes(*dims))
            if names is None:
                names = got
            elif got != names:
                raise ValueError(f"observation pieces differ between dimensions: {names} vs {got}")
        self.names: tuple[str, ...] = names or ()
        dims_shape = tuple(max(axis) + 1 for axis in self.grid)
        self.at = np.full(dims_shape + (len(self.names) + 1,), -1, dtype=np.int64)
        for dims in cells:
            self.at[dims] = self.offsets(*dims)
        self.coef = self._affine(cells)

    def _affine(self, cells) -> np.ndarray | None:
        """The affine form of the offsets (see the class docstring), or None if there is none."""
        if not self.grid:
            return None
        base = tuple(axis[0] for axis in self.grid)
        coef = np.zeros((len(self.grid) + 1, len(self.names) + 1), dtype=np.int64)
        for d, axis in enumerate(self.grid):
            if len(axis) > 1:
                step = tuple(axis[1] if k == d else v for k, v in enumerate(base))
                diff = self.at[step] - self.at[base]
                if np.any(diff % (axis[1] - axis[0])):
                    return None
                coef[1 + d] = diff // (axis[1] - axis[0])
        coef[0] = self.at[base] - sum(coef[1 + d] * v for d, v in enumerate(base))
        for dims in cells:
            if not np.array_equal(coef[0] + sum(coef[1 + d] * v for d, v in enumerate(dims)), self.at[dims]):
                return None
        return coef

    def pieces(self, *dims) -> list[tuple[str, tuple[int, ...]]]:
        return [(name, tuple(int(x) for x in shape)) for name, shape in self.shapes(*dims)]

    def offsets(self, *dims) -> list[int]:
        """First entry of each piece, then the observation size."""
        out, o = [], 0
        for _, shape in self.pieces(*dims):
            out.append(o)
            o += int(np.prod(shape))
        return out + [o]

    def index(self, name: str) -> int:
        """The column of piece `name` in `at` (the last column is the size: ``len(names)``)."""
        return self.names.index(name)

    def columns(self, *names: str) -> tuple[int, ...]:
        """The columns of pieces `names` (`index` of each), for a kernel's constants."""
        return tuple(self.index(name) for name in names)

    def affine(self) -> np.ndarray:
        """`coef`, for a kernel that computes its offsets from it; ValueError where the offsets are
        not affine in the dimensions (a shape change then shows at import: index `at` instead)."""
        if self.coef is None:
            raise ValueError(f"{self.shapes.__module__}: observation offsets are not affine in the dimensions "
                             f"{self.grid}; index ObsLayout.at instead")
        return self.coef

    @property
    def size_index(self) -> int:
        return len(self.names)
