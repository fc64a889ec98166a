"""No silent compile waits (issue 42): a `domino` command says once that numba is compiling (a cache
miss), never when it loads from the cache; `domino warm` compiles a game's kernels ahead, so the
commands that play that game compile nothing afterwards."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

NOTICE = "numba kernels: the first run after"
DOMINO = [sys.executable, "-m", "domino_training.cli"]
KERNELS = """
from numba import njit

@njit(cache=True)
def double(x):
    return 2 * x

@njit(cache=True)
def triple(x):
    return 3 * x
"""
SCRIPT = """
import sys
from domino_envs._numba_cache import announce_compiling
announce_compiling(prefix="probe")
sys.path.insert(0, sys.argv[1])
import kernels
print(kernels.double(2) + kernels.triple(2))
"""


def _env(cache: Path) -> dict:
    return {**os.environ, "NUMBA_CACHE_DIR": str(cache)}


def test_a_compile_is_announced_once_and_a_cache_load_not_at_all(tmp_path):
    (tmp_path / "kernels.py").write_text(KERNELS)
    runs = [subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True,
                           env=_env(tmp_path / "cache"), timeout=120) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0 and run.stdout.strip() == "10", run.stderr
    cold, warm = runs[0].stderr, runs[1].stderr
    assert cold.count(NOTICE) == 1 and cold.startswith("probe: compiling " + NOTICE), cold  # two functions, one line
    assert str(tmp_path / "cache") in cold and "domino warm" in cold
    assert NOTICE not in warm, warm  # both loaded from the cache


def test_warm_compiles_a_game_once_and_leaves_nothing_for_train_or_evaluate(tmp_path):
    env = _env(tmp_path / "cache")

    def domino(*args):
        run = subprocess.run([*DOMINO, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
        assert run.returncode == 0, run.stderr[-2000:]
        return run

    first = domino("warm", "sum7_v0")
    compiled = re.search(r"^sum7_v0: [\d.]+ s, (\d+) functions compiled$", first.stdout, flags=re.M)
    assert compiled and int(compiled[1]) > 10, first.stdout
    assert first.stderr.count(NOTICE) == 1 and "compiling sum7_v0's numba kernels" in first.stderr, first.stderr
    again = domino("warm", "sum7_v0")
    assert re.search(r"^sum7_v0: [\d.]+ s, already compiled \(cache warm\)$", again.stdout, flags=re.M), again.stdout
    train = domino("train", "sum7_v0", "--run-dir", "run", "--no-progress", "--set", "ppo.num_envs=8",
                   "--set", "ppo.rollout_steps=8", "--set", "network.hidden=[16]", "--set", "budget.env_steps=2176",
                   "--set", "imitation.decisions=2000", "--set", "imitation.epochs=1",  # 2,048 of the budget's steps
                   "--set", "eval.every_env_steps=1088", "--set", "eval.deals=2", "--set", "eval.final_deals=2")
    evaluate = domino("evaluate", "--game", "sum7_v0", "--agents", "ppo:checkpoint=run/policy.npz", "heuristic",
                      "pimc:n=2,rollout=policy,policy=run/policy.npz", "--deals", "2", "--no-progress")
    for run in (again, train, evaluate):
        assert NOTICE not in run.stderr, run.args


def test_a_worker_of_an_announcing_command_announces_too(tmp_path):
    """A spawned worker (training/parallel.py) starts with its parent's notice and games."""
    (tmp_path / "kernels.py").write_text(KERNELS)
    script = SCRIPT.replace('announce_compiling(prefix="probe")',
                            'from domino_training.parallel import _start\n_start(None, (), ("sum7_v0",))')
    run = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                         env=_env(tmp_path / "cache"), timeout=120)
    assert run.returncode == 0, run.stderr
    assert re.fullmatch(r"domino \(worker \d+\): compiling sum7_v0's " + NOTICE + r".*\n", run.stderr), run.stderr
    quiet = script.replace('("sum7_v0",)', "None")
    run = subprocess.run([sys.executable, "-c", quiet, str(tmp_path)], capture_output=True, text=True,
                         env=_env(tmp_path / "cache2"), timeout=120)
    assert run.returncode == 0 and NOTICE not in run.stderr, run.stderr
