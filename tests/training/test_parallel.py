"""Job lists run where they say (training/parallel.py): with `workers=2` two processes other than this
one do the jobs, each with one torch and one BLAS thread (measured there), through `run_jobs` and
through `domino evaluate --workers 2`; `--address` without Ray is one line naming the extra, before
anything is written, for every command that takes it; a job that fails is one line naming it, exit
status 2, for every command; a script that starts workers without a `__main__` guard is told so in
one line. (On a Ray cluster: tests/training/test_ray_cluster.py, in `make test-rllib`'s venv.)

The thread counts can fail only on a machine of two cores or more: with one, every process runs one
thread whatever the worker's start does.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import pytest

from domino_agents import registry
from domino_training.cli import main as domino_main
from domino_training.parallel import WorkerInfo, ran_in, run_jobs, worker_info

RAY_EXTRA = "pip install 'domino-envs[ray]'"


def meet(folder: str, deadline: float) -> int:
    """A job that waits (until `deadline`, a time.time()) for two processes each to have begun one, so
    both workers of a pool of two must take jobs; a pool of one process never gets there. Its pid."""
    Path(folder, str(os.getpid())).touch()
    while len(os.listdir(folder)) < 2 and time.time() < deadline:
        time.sleep(0.01)
    return os.getpid()


# a file for --import: `meet` (its first move in a process waits for a second process's, as `meet` the
# job does) and `boom`, an agent that fails as it moves (so in a worker: the parent only builds it)
AGENTS = '''
import os
import time
from pathlib import Path

import numpy as np

from domino_agents import register_agent

waited = False


class Meet:
    name = "meet"

    def __init__(self, game, seed=None, folder=""):
        self.folder = Path(folder)

    def reset(self, seed=None):
        pass

    def act(self, observation, action_mask):
        global waited
        if not waited:
            waited = True
            (self.folder / str(os.getpid())).touch()
            deadline = time.time() + 60
            while len(list(self.folder.iterdir())) < 2 and time.time() < deadline:
                time.sleep(0.01)
        return int(np.flatnonzero(action_mask)[0])


class Boom(Meet):
    name = "boom"

    def act(self, observation, action_mask):
        raise RuntimeError("boom")


register_agent("meet", Meet)
register_agent("boom", Boom)
'''


def command(argv: list[str]) -> int:
    """`domino ARGV` in this process, its exit status (a SystemExit's too), the registry restored after."""
    with mock.patch.dict(registry.AGENTS):
        try:
            return domino_main(argv)
        except SystemExit as e:
            return e.code


def error_lines(err: str) -> list[str]:
    """stderr less numba's compile notices (a cold cache's, the parent's and each worker's)."""
    return [line for line in err.splitlines() if "compiling numba kernels" not in line]


# ------------------------------------------------------------------------------ where jobs run
def test_two_workers_run_the_jobs_in_two_processes_of_one_thread_each(tmp_path):
    """Each job's WorkerInfo (the `witness`) is the process that ran it (the job's own pid), two
    processes, neither this one, each with one torch and one BLAS thread."""
    folder = tmp_path / "met"
    folder.mkdir()
    witness: dict[int, WorkerInfo] = {}
    ran = dict(run_jobs(meet, [(str(folder), time.time() + 60)] * 6, workers=2, witness=witness))
    assert sorted(ran) == sorted(witness) == list(range(6))
    assert all(witness[i].pid == ran[i] for i in ran)
    pids = set(ran.values())
    assert len(pids) == 2 and os.getpid() not in pids and {int(p) for p in os.listdir(folder)} == pids
    assert {(w.torch_threads, w.blas_threads) for w in witness.values()} == {(1, 1)}, witness
    assert {(w.node_id, w.task_id) for w in witness.values()} == {(None, None)}
    assert ran_in(witness.values(), "jobs") == (f"6 jobs in 2 processes (pids {', '.join(map(str, sorted(pids)))}), "
                                                "1 torch thread and 1 BLAS thread each")


def test_one_worker_runs_the_jobs_here():
    witness: dict[int, WorkerInfo] = {}
    assert list(run_jobs(os.getpid, [()] * 3, witness=witness)) == [(i, os.getpid()) for i in range(3)]
    here = worker_info()
    assert set(witness.values()) == {here} and here.pid == os.getpid() and here.blas_threads >= 1


def test_evaluate_says_where_its_shards_ran(tmp_path, capsys):
    """`domino evaluate --workers 2` names on stderr the processes that played its shards: two, not
    this one, the same two whose agents moved, one torch and one BLAS thread each."""
    agents, folder = tmp_path / "agents.py", tmp_path / "met"
    agents.write_text(AGENTS)
    folder.mkdir()
    argv = ["evaluate", "--import", str(agents), "--game", "draw_v0", "--agents", f"meet:folder={folder}", "random",
            "--deals", "8", "--workers", "2", "--no-progress"]
    assert command(argv) == 0
    err = capsys.readouterr().err
    said = [line for line in error_lines(err) if line.startswith("domino evaluate: ")]
    assert len(said) == 1, err
    m = re.fullmatch(r"domino evaluate: 8 shards in 2 processes \(pids (\d+), (\d+)\), 1 torch thread and 1 BLAS "
                     r"thread each", said[0])
    assert m, said
    pids = {int(m[1]), int(m[2])}
    assert os.getpid() not in pids and {int(p) for p in os.listdir(folder)} == pids


# ------------------------------------------------------------------------------ --address without Ray
@pytest.mark.parametrize("argv", [
    ["evaluate", "--agents", "random", "greedy", "--deals", "2", "--no-progress", "--json", "OUT/r.json"],
    ["rate", "random", "greedy", "--game", "draw_v0", "--deals", "2", "--out", "OUT"],
    ["benchmark", "--profile", "ci", "--out", "OUT", "--report", "OUT/r.md"],
    ["exploit", "random", "--game", "draw_v0", "--out", "OUT"],
], ids=lambda argv: argv[0])
def test_an_address_without_ray_is_one_line_naming_the_extra(argv, tmp_path, monkeypatch, capsys):
    """Exit status 2, one line naming the `ray` extra, nothing written: never the jobs run here instead."""
    monkeypatch.setitem(sys.modules, "ray", None)  # Ray not installed, as in CI (here too where it is)
    out = tmp_path / "out"
    assert command([a.replace("OUT", str(out)) for a in argv] + ["--address", "auto"]) == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and "--address 'auto'" in lines[0] and RAY_EXTRA in lines[0], lines
    assert not out.exists()


# ------------------------------------------------------------------------------ a failed job: one line
@pytest.mark.parametrize("name,argv,said", [
    ("evaluate", ["--game", "draw_v0", "--agents", "boom", "random", "--deals", "4", "--no-progress"],
     r"domino evaluate: error: the shard playing boom vs random, deals \d-\d, failed in its worker: RuntimeError: boom"),
    ("rate", ["boom", "random", "--game", "draw_v0", "--deals", "4"],
     r"domino rate: error: .*boom.* failed in its worker: RuntimeError: boom"),
])
def test_a_job_that_fails_is_one_line_naming_it(name, argv, said, tmp_path, capsys):
    agents = tmp_path / "agents.py"
    agents.write_text(AGENTS)
    assert command([name, "--import", str(agents), *argv, "--workers", "2"]) == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and re.match(said, lines[0]), lines


def test_a_benchmark_run_that_fails_is_one_line_naming_it(tmp_path, capsys):
    """A run of the suite's ci profile whose folder cannot be made, beside one that trains."""
    import yaml

    from domino_training.benchmark import suite as bench_suite

    suite, lock = tmp_path / "suite.yaml", tmp_path / "lock.json"
    data = yaml.safe_load((bench_suite.suite_folder() / "suite.yaml").read_text())
    data["runs"]["ci"]["learners"] = {"ppo": 1, "dmc": 1}
    suite.write_text(yaml.safe_dump(data, sort_keys=False))
    bench_suite.freeze(suite, lock)
    out = tmp_path / "out"
    (out / "runs" / "block" / "dmc").mkdir(parents=True)
    (out / "runs" / "block" / "dmc" / "seed0").write_text("a file where the run's folder goes")
    assert command(["benchmark", "--profile", "ci", "--suite", str(suite), "--lock", str(lock), "--out", str(out),
                    "--report", str(tmp_path / "r.md"), "--workers", "2"]) == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and lines[0].startswith("domino benchmark: the run block dmc seed 0 failed in its worker: "), lines


# ------------------------------------------------------------------------------ no __main__ guard
SCRIPT = '''from domino_training.evaluate import evaluate

{guard}report = evaluate("draw_v0", ["random", "greedy"], 4, workers=2, progress=False)
{indent}print("shards", len(report.shard_workers))
'''


def test_a_script_without_a_main_guard_is_told_where_to_put_the_call(tmp_path):
    """A spawned worker runs the main script again as it starts: unguarded, the script's evaluate
    starts workers there too. The script ends on one line saying what to do, not on each worker's
    spawn message and a broken pool; guarded, the same script plays."""
    def run(name: str, guard: str, indent: str) -> subprocess.CompletedProcess:
        script = tmp_path / name
        script.write_text(SCRIPT.format(guard=guard, indent=indent))
        return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=300)

    bare = run("bare.py", "", "")
    assert bare.returncode == 1 and bare.stdout == ""
    assert error_lines(bare.stderr)[-1] == (
        f"domino_training.parallel.UnguardedMainError: workers=2: each worker process starts by running "
        f"{tmp_path / 'bare.py'} again, which starts the workers again at its top level; put the code that starts "
        f"them under `if __name__ == \"__main__\":`"), bare.stderr
    assert "bootstrapping" not in bare.stderr and "failed in its worker" not in bare.stderr
    assert bare.stderr.count("Traceback") == 1, bare.stderr  # the script's own, not one a worker
    guarded = run("guarded.py", 'if __name__ == "__main__":\n    ', "    ")
    assert guarded.returncode == 0 and guarded.stdout == "shards 4\n", guarded.stderr


def test_the_unguarded_exit_code_is_read_after_the_pool_has_reaped_its_workers():
    """The pool's manager thread reaps the workers as the pool breaks; a worker waited on here at the
    same moment can show no exit code yet (the CI failure behind this test: a JobError instead of
    UnguardedMainError). The code is read once that thread has ended."""
    import threading

    from domino_training import parallel

    class Worker:  # a worker whose exit code only the manager thread's reap makes known
        exitcode = None

        def join(self, timeout=None):
            pass

    workers = [Worker(), Worker()]

    def reap():
        time.sleep(0.3)
        workers[0].exitcode, workers[1].exitcode = parallel._UNGUARDED_EXIT, -15

    pool = mock.Mock(_processes={1: workers[0], 2: workers[1]}, _executor_manager_thread=threading.Thread(target=reap))
    pool._executor_manager_thread.start()
    err = parallel._unguarded(pool, 2)
    assert isinstance(err, parallel.UnguardedMainError) and str(err).startswith("workers=2: each worker process"), err
    workers[0].exitcode = 1  # a worker that failed for its own reasons: the job's error stands
    assert parallel._unguarded(mock.Mock(_processes={1: workers[0], 2: workers[1]}, _executor_manager_thread=None), 2) is None
