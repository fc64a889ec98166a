"""No row that passes `validate` crashes a public method (issue 20, part 1).

One child process per game (tests/bad_input/fuzz_rows.py) builds rows by mutating real positions
and, for each row `validate` accepts, calls every public method that takes a row; a Python
exception other than a DominoError subclass is a failure it reports. A crash kills only the child:
the parent then tries the row the child was on alone (``--only``) and prints it; if that row alone
does not crash, the crash came from an earlier row's damage and the rows are narrowed down by
halves. Seeded and deterministic.

The regression rows at the end (the issue's Pete repro and each crash the fuzz found before the
checks existed) are plain asserts that `validate` refuses them.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from domino_envs import make_game
from domino_envs.core import H_TURN, StateError
from domino_envs.games import draw, racehorse, sum7

ROOT = Path(__file__).resolve().parents[2]
ROWS = 1000  # rows per config (each child runs its game's configs in turn): 1,000-3,000 rows a game
SEED = 20
TIMEOUT_S = 300

# each game's configs: the defaults plus one that reaches the other code paths (more seats, match
# mode, spinners, the other zero rules, a double-nine set)
CASES = {
    "draw_v0": [{}, {"num_players": 4, "max_pip": 9, "match": True}],
    "block_v0": [{"num_players": 3}, {"max_pip": 9}],
    "seven_toed_pete_v0": [{}, {"match": True, "double_extra_turn": True}],
    "racehorse_v0": [{}, {"num_players": 3, "spinner": "all_doubles", "match": True},
                     {"num_players": 4, "teams": True, "spinner": "first_double"}],
    "sum7_v0": [{}, {"num_players": 3, "zero_rule": "wild", "match": True}],
    "magic7_v0": [{"num_players": 3}, {"num_players": 5, "num_games": 2}],
}


def _child(name: str, configs: list, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "tests.bad_input.fuzz_rows", name, json.dumps(configs), str(SEED), str(ROWS),
           *extra]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S)


def _last_row(out: str) -> int | None:
    rows = [int(line.split()[1]) for line in out.splitlines() if line.startswith("ROW ")]
    return rows[-1] if rows else None


def _report(proc: subprocess.CompletedProcess) -> dict | None:
    for line in proc.stdout.splitlines():
        if line.startswith("REPORT "):
            return json.loads(line[len("REPORT "):])
    return None


def _crashes_alone(name: str, configs: list, first: int, last: int) -> bool:
    """Whether rows first..last, tried by a fresh child, crash it."""
    proc = _child(name, configs, "--start", str(first), "--stop", str(last + 1))
    return _report(proc) is None


def _narrow(name: str, configs: list, last: int) -> str:
    """The crashing row of a child that died on row `last`, as text for the failure message."""
    lo, hi = 0, last
    if _crashes_alone(name, configs, last, last):
        lo = last
    else:  # the damage came earlier: halve [lo, last] keeping a crashing range that ends at `last`
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if _crashes_alone(name, configs, mid, last):
                lo = mid
            else:
                hi = mid - 1
    shown = _child(name, configs, "--show", str(lo)).stdout.strip()
    return f"row {lo} (rows {lo}..{last} tried in a fresh child crash it): {shown}"


@pytest.mark.parametrize("name", list(CASES))
def test_rows_that_pass_validate_never_crash(name):
    configs = CASES[name]
    proc = _child(name, configs)
    report = _report(proc)
    if report is None:  # the child died (a crash) or stopped without a report
        last = _last_row(proc.stdout)
        where = _narrow(name, configs, last) if last is not None else "before any row"
        pytest.fail(f"{name}: the fuzz child died (exit {proc.returncode}) at {where}\n"
                    f"stderr tail: {proc.stderr[-2000:]}")
    assert report["rows"] == ROWS * len(configs)
    # enough rows get through validate for the calls to mean something
    assert report["passed"] >= ROWS * len(configs) // 10, report["passed"]
    failures = report["failures"]
    assert not failures, f"{name}: {len(failures)} calls raised a non-DominoError; first: " \
                         f"{json.dumps(failures[:3], indent=1)}"


# ---- regression rows: each is refused by validate (the crashes and escapes the fuzz found before the checks)
def _position(name: str, steps: int, **config):
    """(game, a row after `steps` random legal steps from a seeded deal)."""
    g = make_game(name, **config)
    s = g.new_state()
    g.reset(s, 7)
    rng = np.random.default_rng(7)
    for _ in range(steps):
        legal = g.legal_actions(s)
        g.step(s, legal[int(rng.integers(len(legal)))])
    return g, s


def _pete_all_played():
    from domino_envs.games import pete

    g, s = _position("seven_toed_pete_v0", 0)
    s[pete.PLAYED_MASK] = 255  # every slot within its range (issue 20: sample_hidden died of a bus error)
    return g, s


def _played_mask_after_a_step(name, module):
    def make():
        g, s = _position(name, 1)
        s[module.PLAYED_MASK] = int(s[module.HANDS + 1])  # seat 0 "placed" seat 1's tiles: the sampler died
        return g, s
    return make


def _arm_end_off_by_one():
    from domino_envs.games import pete
    from domino_envs.layout import _A_END, _arm

    g, s = _position("seven_toed_pete_v0", 3)
    slot = _arm(pete.LAY, 0) + _A_END
    s[slot] = (s[slot] + 1) % 7  # the left end no longer shows what the tiles placed give
    return g, s


def _arm_tiles_inflated():
    from domino_envs.layout import _A_TILES, _arm

    g, s = _position("draw_v0", 2)
    s[_arm(draw.LAY, 1) + _A_TILES] = 28  # in range, but the history holds 2 tiles: a step wrote past it
    return g, s


def _void_contradicts_hand():
    from domino_envs.games import pete
    from domino_envs.tiles import TILE_A

    g, s = _position("seven_toed_pete_v0", 2)
    seat = (int(s[H_TURN]) + 1) % 4
    tile = next(t for t in range(28) if (int(s[pete.HANDS + seat]) >> t) & 1)
    s[pete.VOID + seat] |= 1 << int(TILE_A[tile])  # "lacks" a number it holds: no consistent redeal
    return g, s


def _pending_of_absent_seat():
    g, s = _position("racehorse_v0", 0, num_players=3)
    s[racehorse.PENDING + 3] = 1  # a step paid it into seat 3's reward slot, which a 3-seat game must keep 0
    return g, s


REGRESSION = {
    "pete: a played mask naming tiles in a hand": _pete_all_played,
    "racehorse: a played mask naming another seat's hand": _played_mask_after_a_step("racehorse_v0", racehorse),
    "sum7: a played mask naming another seat's hand": _played_mask_after_a_step("sum7_v0", sum7),
    "draw: a played mask naming another seat's hand": _played_mask_after_a_step("draw_v0", draw),
    "pete: an arm end the history does not give": _arm_end_off_by_one,
    "draw: an arm's tile count the history does not give": _arm_tiles_inflated,
    "pete: a void the seat's own hand contradicts": _void_contradicts_hand,
    "racehorse: pending rewards of an absent seat": _pending_of_absent_seat,
}


@pytest.mark.parametrize("case", list(REGRESSION))
def test_regression_rows_are_refused(case):
    game, row = REGRESSION[case]()
    with pytest.raises(StateError, match="corrupted state row"):
        game.validate(row)


@pytest.mark.parametrize("name", ["racehorse_v0", "sum7_v0", "magic7_v0"])
def test_deal_of_a_sampled_row_is_refused(name):
    """A sample_hidden row blanks the dealt deck slots: deal_of said ValueError (negative shift)."""
    game, row = _position(name, 2)
    sample = game.sample_hidden(row, 0, np.random.default_rng(0))
    game.validate(sample)  # a sample is a row the engine can use
    with pytest.raises(StateError, match="does not hold its deal"):
        game.deal_of(sample)


def test_deal_of_a_sampled_draw_game_row_is_its_hands_until_a_draw_then_refused():
    """Before anyone draws, the hands as dealt are each seat's hand and placed tiles, so a sampled Draw Game
    row has a deal (OpenSpiel's resample rebuilds histories from it); once a tile is drawn the dealt deck
    slots it would need are blanked, and it is refused."""
    from domino_envs.games.draw import DRAWN, HANDS, PLAYED_MASK

    for steps in range(40):
        game, row = _position("draw_v0", steps)
        if game.is_over(row):
            break
        seat = game.current_seat(row)
        sample = game.sample_hidden(row, seat, np.random.default_rng(steps))
        if row[DRAWN:DRAWN + 2].sum() == 0:
            deal = game.deal_of(sample)
            for k in range(2):
                held = int(sample[HANDS + k] | sample[PLAYED_MASK + k])
                assert deal["hands"][k] == game._tiles_of_mask(held)
            assert deal["hands"][seat] == game.deal_of(row)["hands"][seat] and deal["first"] == game.deal_of(row)["first"]
        else:
            with pytest.raises(StateError, match="does not hold its deal"):
                game.deal_of(sample)
            return
    raise AssertionError("no draw in 40 steps of the seeded game")
