"""tests/mutations/run.py stays runnable: every planting's file exists, each of its anchors occurs
exactly once there (an anchor that moved would stop the full run with an error, or plant nothing),
and the tests it runs exist and its selection (files, node ids, `-k`) collects at least one test (a
selection that collects nothing passes on any planting: "missed" would never show). The full mutation
run is slow and stays out of `make test`; this check is what CI runs of it."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from _pytest.mark.expression import Expression

from tests.mutations.run import MUTATIONS, ROOT, selected_by


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


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> dict[str, list[str]]:
    """node id -> the names `-k` matches, for every test in the files the plantings name (one
    --collect-only run with tests/mutations/collect_names.py)."""
    out = tmp_path_factory.mktemp("collected") / "names.json"
    files = sorted({a.split("::")[0] for m in MUTATIONS for a in m.tests if a.startswith("tests/")})
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-p", "tests.mutations.collect_names", *files], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "DOMINO_COLLECTED_NAMES": str(out)}, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.name for m in MUTATIONS])
def test_the_planting_selects_a_test(mutation, collected):
    assert selected_by(mutation.tests, collected), f"{mutation.name}: {mutation.tests} collects no test"


def test_the_selection_helper_follows_pytest_k():
    names = {"tests/a/test_x.py::test_one[draw]": ["test_one[draw]", "test_x.py", "a"],
             "tests/a/test_x.py::test_two": ["test_two", "test_x.py", "a"],
             "tests/b/test_y.py::test_one": ["test_one", "test_y.py", "b"]}
    assert selected_by(["tests/a/test_x.py", "-k", "one"], names) == ["tests/a/test_x.py::test_one[draw]"]
    assert selected_by(["tests/a/test_x.py", "-k", "not one and two"], names) == ["tests/a/test_x.py::test_two"]
    assert selected_by(["tests/b/test_y.py::test_one"], names) == ["tests/b/test_y.py::test_one"]
    assert selected_by(["tests/a/test_x.py", "-k", "DRAW"], names) == ["tests/a/test_x.py::test_one[draw]"]
    assert selected_by(["tests/a/test_x.py", "-k", "three"], names) == []
    assert Expression.compile("a or b")  # the helper parses -k as pytest does
