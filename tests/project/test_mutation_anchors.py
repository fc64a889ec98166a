"""tests/mutations/run.py stays runnable: every planting's file exists, each of its anchors occurs
exactly once there (an anchor that moved would stop the full run with an error, or plant nothing),
and the tests it runs exist. The full mutation run is slow and stays out of `make test`; this check
is what CI runs of it."""
from __future__ import annotations

import re

import pytest

from tests.mutations.run import MUTATIONS, ROOT


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.name for m in MUTATIONS])
def test_the_planting_still_matches_the_code(mutation):
    path = ROOT / mutation.path
    assert path.is_file(), f"{mutation.name}: {mutation.path} does not exist"
    text = path.read_text()
    for old, new in mutation.replacements:
        assert text.count(old) == 1, f"{mutation.name}: anchor found {text.count(old)} times: {old[:80]!r}"
        assert old != new
    files = [a.split("::")[0] for a in mutation.tests if a.startswith("tests/")]
    assert files, f"{mutation.name} runs no test file"
    assert all((ROOT / f).is_file() for f in files), files


def test_names_are_unique_words():
    """A repeated name would run one of the two plantings only (the command line picks by name); a name
    with a space or a capital could not be typed as one argument of the documented form."""
    names = [m.name for m in MUTATIONS]
    repeated = sorted({n for n in names if names.count(n) > 1})
    assert not repeated, f"names used twice: {repeated}"
    assert all(re.fullmatch(r"[a-z0-9_]+", n) for n in names), [n for n in names if not re.fullmatch(r"[a-z0-9_]+", n)]
