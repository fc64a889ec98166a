"""The slot tables (domino_envs/slots.py): each state slot declared once, and what derives from it.

- the builder on its own: contiguous offsets, sizes, used counts, views, blocks, refusals;
- every game and config of tests/env_cases.py: its table tiles the row exactly (no gap, no overlap,
  the layout block's inner entries included), the slot map prints every entry;
- validate refuses a value just outside each declared range, for every range-checked entry of
  every config (parametrized over the tables, so a new slot is covered without touching this file);
- the observation tables: the kernels' offsets (ObsLayout.at, or its affine form coef) are the
  pieces' offsets, and every observation kernel writes every entry of the declared size (a
  NaN-filled buffer comes back full).
"""
from __future__ import annotations

import functools
import importlib
import re

import numpy as np
import pytest

from domino_envs import make_game
from domino_envs.core import HEADER, HEADER_SIZE, StateError
from domino_envs.layout import lay_size
from domino_envs.slots import Entry, ObsLayout, Slots
from tests.env_cases import CONFIG_IDS, CONFIGS

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
GAME_MODULES = ["draw", "pete", "racehorse", "sum7", "magic7"]


# ------------------------------------------------------------------------------ the builder
class _Game:
    num_players = 3


def test_offsets_are_contiguous_and_sizes_add_up():
    t = Slots("toy", start=5)
    a = t.slot("a", 2, 0, 9)
    b = t.slot("b")
    c = t.slot("c", 4, -1, lambda g: g.num_players - 1, used=lambda g: g.num_players)
    d = t.slot("d", 3)
    assert (a, b, c, d) == (5, 7, 8, 12)
    assert t.close() == 15 == t.size
    e = t.entries(_Game())
    assert [(x.name, x.start, x.size, x.lo, x.hi) for x in e] == [
        ("a", 5, 2, 0, 9), ("b", 7, 1, None, None), ("c", 8, 3, -1, 2),
        ("c of absent seats", 11, 1, 0, 0), ("d", 12, 3, None, None)]
    # only the range-checked runs, in the Game.slot_ranges format
    assert t.ranges(_Game()) == [("a", 5, 2, 0, 9), ("c", 8, 3, -1, 2), ("c of absent seats", 11, 1, 0, 0)]


def test_a_base_table_comes_first_and_a_view_adds_no_slots():
    base = Slots("head")
    base.slot("x", 2)
    base.close()
    t = Slots("row", base=base)
    first = t.slot("y", 3, 0, 1)
    v = t.view("y's middle", first + 1, 1, doc="scratch")
    assert first == 2 and v == 3
    assert t.close() == 5
    names = [e.name for e in t.entries(None)]
    assert names == ["x", "y", "y's middle"]
    assert [e.name for e in t.entries(None, views=False)] == ["x", "y"]


def test_a_block_takes_its_entries_from_a_function_of_the_game():
    t = Slots("row")
    t.slot("a")
    start = t.size

    def inner(game):
        return [Entry("blk lo", start, 1, 0, game.num_players), Entry("blk rest", start + 1, 2)]

    assert t.block("blk", 3, inner) == 1
    t.close()
    assert t.ranges(_Game()) == [("blk lo", 1, 1, 0, 3)]


def test_the_builder_refuses_tables_that_would_mislead():
    t = Slots("row")
    t.slot("a", 2)
    with pytest.raises(ValueError, match="declared twice"):
        t.slot("a")
    with pytest.raises(ValueError, match="both bounds or neither"):
        t.slot("b", 1, 0)
    with pytest.raises(ValueError, match="used count but no range"):
        t.slot("b", 2, used=1)
    with pytest.raises(ValueError, match="outside the slots declared"):
        t.view("v", 1, 5)
    t.close()
    with pytest.raises(ValueError, match="after close"):
        t.slot("late")
    with pytest.raises(ValueError, match="must be closed first"):
        Slots("child", base=Slots("open base"))
    u = Slots("u")
    u.slot("c", 2, 0, 1, used=lambda g: 5)
    u.close()
    with pytest.raises(ValueError, match="uses 5 of its 2 slots"):
        u.entries(None)
    w = Slots("w")
    w.block("blk", 2, lambda g: [Entry("stray", 7, 1, 0, 0)])
    w.close()
    with pytest.raises(ValueError, match="lies outside the block"):
        w.entries(None)


def test_the_header_is_declared_by_the_same_builder():
    assert HEADER.closed and HEADER.size == HEADER_SIZE
    assert [e.name for e in HEADER.entries(None)][:2] == ["turn", "done"]


# ------------------------------------------------------------------------------ every game's table
@functools.cache
def _game(i: int):
    name, kwargs = CONFIGS[i]
    return make_game(name, **kwargs)


@functools.cache
def _row(i: int) -> np.ndarray:
    """A row of config i in the middle of a game (some tiles placed): valid, and read-only."""
    g = _game(i)
    s = g.new_state()
    rng = np.random.default_rng(i)
    g.reset(s, 7)
    for _ in range(3):
        if g.is_over(s):
            break
        g.step(s, int(rng.choice(g.legal_actions(s))))
    s.flags.writeable = False
    return s


@pytest.mark.parametrize("i", range(len(CONFIGS)), ids=CONFIG_IDS)
def test_the_table_tiles_the_row_exactly(i):
    g = _game(i)
    table = type(g).slots
    assert table.closed and g.state_size == table.size
    runs = table.entries(g, views=False)
    pos = 0
    for e in runs:  # in row order, each run starting where the last ended: no gap, no overlap
        assert e.start == pos, f"{e.name} starts at {e.start}, the previous run ended at {pos}"
        assert e.size >= 0
        if e.checked:
            assert e.lo <= e.hi, e
        pos = e.start + e.size
    assert pos == g.state_size
    for v in [e for e in table.entries(g) if e not in runs]:  # views lie within the row
        assert 0 <= v.start and v.start + v.size <= g.state_size and not v.checked


@pytest.mark.parametrize("i", range(len(CONFIGS)), ids=CONFIG_IDS)
def test_the_slot_map_prints_every_entry_once(i):
    g = _game(i)
    text = g.slot_map()
    lines = text.splitlines()
    entries = type(g).slots.entries(g)
    assert lines[0].split() == ["slot", "first", "size", "range", "note"]
    assert lines[-1] == f"row size {g.state_size}"
    assert len(lines) == len(entries) + 2
    for line, e in zip(lines[1:-1], entries):
        assert line.startswith(e.name)
        fields = line[len(e.name):].split()
        assert fields[:3] == [str(e.start), str(e.size), f"{e.lo}..{e.hi}" if e.checked else "-"], line


def test_a_layout_block_holds_header_arms_spinners_history_and_spare():
    g = make_game("racehorse_v0", spinner="first_double")  # 4 arms used in a block sized for 16
    from domino_envs.games import racehorse

    block = [e for e in g.slots.entries(g) if e.name.startswith("layout")]
    assert block[0].start == racehorse.LAY
    assert sum(e.size for e in block) == lay_size(16)
    names = [e.name for e in block]
    assert "layout arm 3 open" in names and "layout arm 4 end" not in names
    assert "layout spinner 0 host arm" in names and "layout spinner 1 host arm" not in names
    spare = block[-1]
    assert spare.name == "layout spare" and spare.size == lay_size(16) - lay_size(4) and not spare.checked


def test_module_offsets_are_the_tables_offsets():
    """The constants the kernels read are the table's starts (spot checks per game)."""
    from domino_envs.games import draw, magic7, pete, racehorse, sum7

    for mod, pairs in [(draw, {"HANDS": "hands", "JUST_DREW": "just drew", "DECK": "deck"}),
                       (pete, {"CHIPS": "chips", "COUNT": "count", "DECK": "deal scratch"}),
                       (racehorse, {"PENDING": "pending rewards", "PLAYED_MASK": "played"}),
                       (sum7, {"PASSES": "passes", "WINNERS": "winners"}),
                       (magic7, {"KMASK": "kill mask", "PLAYABLE": "playable"})]:
        starts = {e.name: e.start for e in mod.ROW.entries(make_game(_NAME_OF[mod.__name__]))}
        for const, name in pairs.items():
            assert getattr(mod, const) == starts[name], (mod.__name__, const)
        assert mod.STATE_SIZE == mod.ROW.size


_NAME_OF = {"domino_envs.games.draw": "draw_v0", "domino_envs.games.pete": "seven_toed_pete_v0",
            "domino_envs.games.racehorse": "racehorse_v0", "domino_envs.games.sum7": "sum7_v0",
            "domino_envs.games.magic7": "magic7_v0"}


# ------------------------------------------------------------------------------ validate, per entry
def _checked_entries():
    for i, (name, kwargs) in enumerate(CONFIGS):
        g = make_game(name, **kwargs)
        for e in g.slots.entries(g, views=False):
            if e.checked and e.size > 0:
                yield pytest.param(i, e.name, id=f"{CONFIG_IDS[i]}:{e.name}")


@pytest.mark.parametrize("i,entry", list(_checked_entries()))
def test_validate_refuses_a_value_outside_each_declared_range(i, entry):
    g = _game(i)
    e = {x.name: x for x in g.slots.entries(g, views=False)}[entry]
    s = _row(i)
    g.validate(s)  # the row itself is fine
    tried = 0
    for slot in sorted({e.start, e.start + e.size - 1}):
        where = f"{e.name}[{slot - e.start}]" if e.size > 1 else e.name
        for value in (e.lo - 1, e.hi + 1):
            if not INT64_MIN <= value <= INT64_MAX:
                continue
            bad = s.copy()
            bad[slot] = value
            with pytest.raises(StateError, match=rf"{re.escape(where)} \(slot {slot}\) is {value}; "
                                                 rf"allowed {e.lo}\.\.{e.hi}"):
                g.validate(bad)
            tried += 1
    assert tried >= 2  # every range has a representable value outside it on at least one side


# ------------------------------------------------------------------------------ observation tables
@pytest.mark.parametrize("module", GAME_MODULES)
def test_the_kernels_offset_table_is_the_pieces_offsets(module):
    mod = importlib.import_module(f"domino_envs.games.{module}")
    obs: ObsLayout = mod.OBS
    import itertools

    cells = list(itertools.product(*obs.grid))
    assert cells
    for dims in cells:
        pieces = obs.pieces(*dims)
        assert tuple(n for n, _ in pieces) == obs.names
        o = 0
        for k, (_, shape) in enumerate(pieces):
            assert obs.at[dims + (k,)] == o
            o += int(np.prod(shape))
        assert obs.at[dims + (obs.size_index,)] == o


def test_affine_offsets_are_found_where_they_exist_and_only_there():
    lin = ObsLayout(lambda n: [("a", (n,)), ("b", (n, 3)), ("c", (1,))], range(2, 5))
    assert lin.coef.tolist() == [[0, 0, 0, 1], [0, 1, 4, 4]]  # b at n, c at 4n, size 4n + 1
    two = ObsLayout(lambda n, k: [("a", (k,)), ("b", (n,)), ("c", (2,))], (2, 3), (2, 4, 16))
    for n in (2, 3):
        for k in (2, 4, 16):
            assert np.array_equal(two.coef[0] + two.coef[1] * n + two.coef[2] * k, two.at[n, k])
    assert ObsLayout(lambda n: [("a", (n, n)), ("b", (1,))], range(2, 5)).coef is None
    assert ObsLayout(lambda n, k: [("a", (n, k)), ("b", (1,))], (2, 3), (2, 4)).coef is None


@pytest.mark.parametrize("module", GAME_MODULES)
def test_the_kernels_affine_offsets_are_the_table(module):
    """Sum 7, Magic-7 and Racehorse kernels compute offsets from OBS.coef: it must give OBS.at."""
    import itertools

    obs = importlib.import_module(f"domino_envs.games.{module}").OBS
    if module in ("sum7", "magic7", "racehorse"):
        assert obs.coef is not None
    if obs.coef is None:
        return
    for dims in itertools.product(*obs.grid):
        got = obs.coef[0] + sum(obs.coef[1 + d] * v for d, v in enumerate(dims))
        assert np.array_equal(got, obs.at[dims]), dims


@pytest.mark.parametrize("i", range(len(CONFIGS)), ids=CONFIG_IDS)
def test_decode_and_the_table_agree_for_the_config(i):
    g = _game(i)
    mod = importlib.import_module(type(g).__module__)
    row = [a for a in _table_rows(mod.OBS) if mod.OBS.pieces(*a) == g.obs_pieces()]
    assert row, "the game's obs_pieces is not one of its table's rows"
    at = mod.OBS.at[row[0]]
    obs = np.arange(g.obs_size, dtype=np.float32)
    for k, (name, piece) in enumerate(g.decode(obs).items()):
        assert piece.ravel()[0] == at[k], name  # the piece starts where the kernels write it
    assert at[-1] == g.obs_size


def _table_rows(obs):
    import itertools

    return list(itertools.product(*obs.grid))


@pytest.mark.parametrize("i", range(len(CONFIGS)), ids=CONFIG_IDS)
def test_every_observation_entry_is_written(i):
    """The kernel writes all obs_size entries (stream and values) whatever the buffer held: a
    NaN-filled buffer comes back equal to a fresh observation, for every seat along random games."""
    g = _game(i)
    rng = np.random.default_rng(100 + i)
    s = g.new_state()
    poisoned = np.empty(g.obs_size, dtype=np.float32)
    for seed in range(3):
        g.reset(s, seed)
        while True:
            for seat in range(g.num_players):
                poisoned[:] = np.nan
                got = g.observe(s, seat, out=poisoned)
                assert not np.isnan(got).any(), f"entries {np.flatnonzero(np.isnan(got))[:5]} never written"
                assert np.array_equal(got, g.observe(s, seat))
            if g.is_over(s):
                break
            g.step(s, int(rng.choice(g.legal_actions(s))))
