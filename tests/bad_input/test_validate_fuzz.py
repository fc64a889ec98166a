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

import pytest

from domino_envs import make_game
from domino_envs.core import StateError

ROOT = Path(__file__).resolve().parents[2]
ROWS = 1500  # rows per config (each child runs its game's configs in turn)
SEED = 20
TIMEOUT_S = 300

# each game's configs: the defaults plus one that reaches the other code paths (more seats, match
# mode, spinners, the other zero rules, a double-nine set)
CASES = {
    "draw_v0": [{}, {"num_players": 4, "max_pip": 9, "match": True}],
    "block_v0": [{"num_players": 3}],
    "seven_toed_pete_v0": [{}, {"match": True, "double_extra_turn": True}],
    "racehorse_v0": [{}, {"num_players": 3, "spinner": "all_doubles", "match": True},
                     {"num_players": 4, "teams": True, "spinner": "first_double"}],
    "sum7_v0": [{}, {"num_players": 3, "zero_rule": "wild", "match": True}],
    "magic7_v0": [{"num_players": 3}],
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


# ---- regression rows: each is refused by validate
def _pete_all_played():
    from domino_envs.games import pete

    g = make_game("seven_toed_pete_v0")
    s = g.new_state()
    g.reset(s, 0)
    s[pete.PLAYED_MASK] = 255  # every slot within its range (issue 20)
    return g, s


REGRESSION = {
    "pete: a played mask naming tiles in a hand": _pete_all_played,
}


@pytest.mark.parametrize("case", list(REGRESSION))
def test_regression_rows_are_refused(case):
    game, row = REGRESSION[case]()
    with pytest.raises(StateError):
        game.validate(row)
