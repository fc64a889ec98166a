"""Independent jobs over local processes or a Ray cluster, for every job list of the project.

A job list (the shards of an evaluation, the runs of a benchmark, the seeds of a learned best
response; the scripts' tuning settings, shipped trainings and timed policies' scores) is a list of
picklable argument tuples and one top-level function. `run_jobs` runs them in this process
(workers=1), in `workers` spawned processes (one torch and one BLAS thread each), or as Ray tasks on
the cluster at `address` ("auto", "HOST:PORT"; the `ray` extra), and yields (index, result) as each
finishes. The caller alone writes results, in whatever order it needs (the job's index says which it
is; `in_order` gives them in list order), so a lost worker never leaves half a line behind. A job
that fails stops the list: the jobs not started are cancelled, and a `JobError` names the job and
carries the worker's own error.

What a cluster needs: the project installed on every node (the same version), and any file a job
reads or writes (a policy named in an agent spec, a benchmark's --out) at the same path on every
node; a task works in the driver's folder, so relative paths work as they do locally. Jobs carry
specs, never weights.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator

import numpy as np

from domino_envs._numba_cache import announce_compiling, announcing
from domino_envs.errors import DominoError


class JobError(DominoError):
    """A job of a parallel list failed where it ran; `index` is its place in the list."""

    def __init__(self, message: str, index: int):
        super().__init__(message)
        self.index = index


def check_workers(workers) -> None:
    """`workers` must be an int >= 1 (callers check it before any work; `run_jobs` again)."""
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers={workers!r} must be an integer >= 1 (1 runs every job in this process)")


def one_thread_per_worker() -> None:
    """Worker start: one BLAS and one torch thread, so N workers use N cores."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(1)


def _start(init: Callable | None, initargs: tuple, announce: tuple[str, ...] | None = None) -> None:
    """A worker's start: one thread each, the parent's compile notice, then the caller's `init`."""
    one_thread_per_worker()
    if announce is not None:  # the parent says when numba compiles (the `domino` command): so does each worker
        announce_compiling(prefix=f"domino (worker {os.getpid()})", games=announce)
    if init is not None:
        init(*initargs)


def _call_on_ray(fn: Callable, init: Callable | None, initargs: tuple, job: tuple, cwd: str):
    """A Ray task: in the driver's folder where the node has it (a Ray worker starts in the folder
    `ray start` ran in), so relative paths in specs and flags mean what they mean to the driver."""
    if os.path.isdir(cwd):
        os.chdir(cwd)
    _start(init, initargs)
    return fn(*job)


def run_jobs(fn: Callable, jobs: list[tuple], workers: int = 1, address: str | None = None,
             init: Callable | None = None, initargs: tuple = (), describe: Callable[[int], str] | None = None
             ) -> Iterator[tuple[int, object]]:
    """Yield (index, fn(*jobs[index])) for every job, as each finishes (in list order when workers=1
    and no address). `init(*initargs)` runs once in each worker before its jobs (a Ray task runs it
    before its own job). `describe(index)` words a failed job for the JobError."""
    check_workers(workers)
    cores = os.cpu_count() or 1
    if address is None and workers > cores:  # allowed, and said once, where the processes start
        print(f"note: {workers} workers on a machine with {cores} cores: they share the cores (no faster than "
              f"{cores})", file=sys.stderr)
    describe = describe or (lambda i: f"job {i}")

    def failed(i: int, err: BaseException) -> JobError:
        return JobError(f"{describe(i)} failed in its worker: {type(err).__name__}: {err}", i)

    if address is not None:
        yield from _run_on_ray(fn, jobs, address, init, initargs, failed)
        return
    if workers == 1:
        if init is not None:
            init(*initargs)
        for i, job in enumerate(jobs):
            yield i, fn(*job)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start, initargs=(init, initargs, announcing()))
    try:
        futures = {pool.submit(fn, *job): i for i, job in enumerate(jobs)}
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                result = fut.result()
            except Exception as err:
                raise failed(i, err) from err
            yield i, result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def in_order(results: Iterator[tuple[int, object]]) -> Iterator[tuple[int, object]]:
    """`run_jobs`' (index, result) pairs in list order: a finished job waits for every job before it,
    so a driver that writes as it reads writes the serial run's file for any number of workers."""
    finished: dict[int, object] = {}
    upcoming = 0
    for i, result in results:
        finished[i] = result
        while upcoming in finished:
            yield upcoming, finished.pop(upcoming)
            upcoming += 1


def _run_on_ray(fn, jobs, address, init, initargs, failed) -> Iterator[tuple[int, object]]:
    try:
        import ray
    except ImportError as err:
        raise ValueError(f"--address {address!r} runs the jobs on a Ray cluster, which needs the `ray` extra "
                         f"(pip install 'domino-envs[ray]'): {err}") from None
    if not ray.is_initialized():
        try:
            ray.init(address=address, log_to_driver=False, include_dashboard=False)
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise ValueError(f"--address {address!r}: no Ray cluster reached there ({err}); start one with "
                             f"`ray start --head` or name its HOST:PORT") from None
    task = ray.remote(num_cpus=1)(_call_on_ray)
    refs = {task.remote(fn, init, initargs, job, os.getcwd()): i for i, job in enumerate(jobs)}
    pending = list(refs)
    try:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            i = refs[ready[0]]
            try:
                result = ray.get(ready[0])
            except Exception as err:  # ray.exceptions.RayTaskError wraps the worker's own error
                raise failed(i, getattr(err, "cause", None) or err) from err
            yield i, result
    finally:
        for ref in pending:
            ray.cancel(ref)
