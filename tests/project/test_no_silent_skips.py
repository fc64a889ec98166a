"""tests/conftest.py fails a run with a skip outside the Ray files (issue 43: a dependency that `make
test` installs must never turn its tests into silent skips)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
SKIPS = {
    "a test that skips": "import pytest\n\ndef test_skips():\n    pytest.skip('x')\n\ndef test_passes():\n    pass\n",
    "a module that skips": "import pytest\npytest.importorskip('no_such_module_here')\n\ndef test_passes():\n    pass\n",
}


def run_pytest(folder: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *flags, "tests"],
                          cwd=folder, capture_output=True, text=True, timeout=120)


def make_suite(folder: Path, path: str, text: str) -> None:
    (folder / path).parent.mkdir(parents=True)
    shutil.copy(CONFTEST, folder / "tests" / "conftest.py")
    (folder / "tests" / "test_passes.py").write_text("def test_passes():\n    pass\n")
    (folder / path).write_text(text)


@pytest.mark.parametrize("kind", sorted(SKIPS))
@pytest.mark.parametrize("flags", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_skip_fails_the_run(kind, flags, tmp_path):
    make_suite(tmp_path, "tests/test_elsewhere.py", SKIPS[kind])
    result = run_pytest(tmp_path, *flags)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "skipped tests fail this run" in result.stdout and "tests/test_elsewhere.py" in result.stdout


def test_the_ray_files_may_skip(tmp_path):
    make_suite(tmp_path, "tests/training/test_ray_cluster.py", SKIPS["a module that skips"])
    result = run_pytest(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 skipped" in result.stdout
