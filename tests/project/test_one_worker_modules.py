"""The Makefile's `pytest -n 2 --dist loadgroup` runs each module of tests/conftest.py ONE_WORKER whole in
one worker, so its module fixture (a fresh wheel install, compiled training kernels) is built once.
Checked on a copy: a folder whose tests/project/test_install.py counts its fixture's setups, beside
single tests for the other worker, run by pytest with the project's scheduler hook."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"


def test_a_one_worker_module_builds_its_module_fixture_once(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(textwrap.dedent(f'''
        import importlib.util
        spec = importlib.util.spec_from_file_location("project_conftest", {str(CONFTEST)!r})
        project = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(project)
        pytest_xdist_make_scheduler = project.pytest_xdist_make_scheduler
        '''))
    (tmp_path / "tests" / "project").mkdir(parents=True)
    (tmp_path / "tests" / "project" / "test_install.py").write_text(textwrap.dedent(f'''
        import os
        import time
        import pytest

        @pytest.fixture(scope="module")
        def installed():
            with open({str(tmp_path / "setups.txt")!r}, "a") as f:
                f.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")

        @pytest.mark.parametrize("i", range(6))
        def test_uses_the_install(installed, i):
            time.sleep(0.1)
        '''))
    (tmp_path / "tests" / "test_other.py").write_text(textwrap.dedent('''
        import time
        import pytest

        @pytest.mark.parametrize("i", range(20))
        def test_single(i):
            time.sleep(0.02)
        '''))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-q", "-p", "no:cacheprovider",
                           "tests"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "26 passed" in proc.stdout, proc.stdout + proc.stderr
    assert (tmp_path / "setups.txt").read_text().splitlines() in (["gw0"], ["gw1"])
