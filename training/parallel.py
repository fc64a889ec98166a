"""Independent jobs over local processes or a Ray cluster, for every job list of the project.

A job list (the shards of an evaluation, the runs of a benchmark, the seeds of a learned best
response; the scripts' tuning settings, shipped trainings and timed policies' scores) is a list of
picklable argument tuples and one top-level function. `run_jobs` runs them in this process
(workers=1), in `workers` spawned processes (one torch and one BLAS thread each), or as Ray tasks on
the cluster at `address` ("auto", "HOST:PORT"; the `ray` extra), and yields (index, result) as each
finishes. The caller alone writes results, in whatever order it needs (the job's index says which it
is; `in_order` gives them in list order), so a lost worker never leaves half a line behind. A job
that fails stops the list: the jobs not started are cancelled, and a `JobError` names the job and
carries the worker's own error. A command catches it (a ValueError) and says it in one line, exit 2.

Where each job ran: pass `witness`, a dict, and `run_jobs` puts a `WorkerInfo` under each finished
job's index: the process id, the torch and BLAS threads it had when the job began (measured there:
torch.get_num_threads() and threadpoolctl's count of the loaded BLAS library), and on Ray the node
and task ids. An argument rather than a second value beside each result, so no caller's result
handling changes, and the measure costs nothing where nobody asks (tests, and `domino evaluate`'s
line saying where its shards ran).

Checks before any work: `check_workers` (an int >= 1) and `check_address` (Ray importable where an
address is named), so a command refuses in one line before it writes anything. A script that starts
workers at its top level, with no `if __name__ == "__main__":` guard, has each spawned worker run it
again on start: the worker stops there quietly and the script gets one `UnguardedMainError` saying
where to put the call (not Python's spawn message from every worker).

What a cluster needs: the project installed on every node (the same version), and any file a job
reads or writes (a policy named in an agent spec, a benchmark's --out) at the same path on every
node; a task works in the driver's folder, so relative paths work as they do locally. Jobs carry
specs, never weights.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from domino_envs._numba_cache import announce_compiling, announcing
from domino_envs.errors import DominoError

RAY_EXTRA = "pip install 'domino-envs[ray]'"
_UNGUARDED_EXIT = 87  # a spawned worker that found itself starting workers while it imports the main script


class JobError(DominoError):
    """A job of a parallel list failed where it ran; `index` is its place in the list."""

    def __init__(self, message: str, index: int):
        super().__init__(message)
        self.index = index


class UnguardedMainError(DominoError):
    """Workers started from a script's top level, which each spawned worker runs again on start."""


@dataclass(frozen=True)
class WorkerInfo:
    """Where a job ran: its process, the torch and BLAS threads it had when it began (None: torch not
    loaded there; threadpoolctl missing or no BLAS loaded), and on Ray its node and task (hex ids)."""

    pid: int
    torch_threads: int | None
    blas_threads: int | None
    node_id: str | None = None
    task_id: str | None = None


def worker_info(on_ray: bool = False) -> WorkerInfo:
    """This process now, measured (torch is read only if a job or the worker's start loaded it); in a
    Ray task (`on_ray`) with its node and task ids."""
    torch = sys.modules.get("torch")
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        blas = None
    else:
        blas = max((lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"), default=None)
    node = task = None
    if on_ray:
        import ray

        context = ray.get_runtime_context()
        node, task = context.get_node_id(), context.get_task_id()
    return WorkerInfo(os.getpid(), torch.get_num_threads() if torch is not None else None, blas, node, task)


def ran_in(infos: Iterable[WorkerInfo], what: str = "jobs") -> str:
    """Where a list's jobs ran, as words: "8 shards in 2 processes (pids 11, 12), 1 torch thread and 1
    BLAS thread each" (on Ray: "as 8 Ray tasks on 1 node, in ..."); unlike counts are each listed."""
    infos = list(infos)
    pids = sorted({i.pid for i in infos})
    where = f"in {len(pids)} process{'es' * (len(pids) != 1)} (pid{'s' * (len(pids) != 1)} {', '.join(map(str, pids))})"
    if any(i.task_id for i in infos):
        nodes = len({i.node_id for i in infos})
        where = f"as {len({i.task_id for i in infos})} Ray tasks on {nodes} node{'s' * (nodes != 1)}, {where}"

    def threads(name: str, counts: set) -> str:
        if len(counts) == 1 and None not in counts:
            (n,) = counts
            return f"{n} {name} thread{'s' * (n != 1)}"
        return f"{name} threads {', '.join('unmeasured' if n is None else str(n) for n in sorted(counts, key=str))}"

    return (f"{len(infos)} {what} {where}, {threads('torch', {i.torch_threads for i in infos})} and "
            f"{threads('BLAS', {i.blas_threads for i in infos})} each")


def check_workers(workers) -> None:
    """`workers` must be an int >= 1 (callers check it before any work; `run_jobs` again). More than one
    asked for by a spawned worker still importing the main script ends that worker (`_stop_if_bootstrapping`)."""
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers={workers!r} must be an integer >= 1 (1 runs every job in this process)")
    if workers > 1:
        _stop_if_bootstrapping()


def check_address(address: str | None) -> None:
    """An `address` needs Ray: a ValueError naming the extra where it cannot be imported (callers check
    it before any work; `run_jobs` again)."""
    if address is None:
        return
    try:
        import ray  # noqa: F401
    except ImportError as err:
        raise ValueError(f"--address {address!r} runs the jobs on a Ray cluster, which needs the `ray` extra "
                         f"({RAY_EXTRA}): {err}") from None


def _stop_if_bootstrapping() -> None:
    """In a spawned worker that is still importing the main script (Python's own check, as
    multiprocessing.spawn makes it), starting workers means the script starts them at its top level:
    this worker ends quietly with a code its parent reads (`_unguarded`)."""
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise SystemExit(_UNGUARDED_EXIT)


def _unguarded(pool, workers: int) -> UnguardedMainError | None:
    """The error for a broken pool whose workers ended on `_stop_if_bootstrapping`, else None.

    The pool's manager thread reaps the workers as it breaks the pool; a worker this thread waits on at
    the same moment can read as still running (one of the two waits gets no exit code), so the exit
    codes are read after that thread has ended, and after waiting on each worker here too."""
    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None:
        manager.join(timeout=30)
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for p in processes:
        p.join(timeout=5)
    if not any(p.exitcode == _UNGUARDED_EXIT for p in processes):
        return None
    main = getattr(sys.modules.get("__main__"), "__file__", None) or "the main module"
    return UnguardedMainError(
        f"workers={workers}: each worker process starts by running {main} again, which starts the workers again "
        f"at its top level; put the code that starts them under `if __name__ == \"__main__\":`")


def one_thread_per_worker() -> None:
    """Worker start: one BLAS and one torch thread, so N workers use N cores. The BLAS libraries a
    worker has already loaded (numpy's, with this module) read no variable any more: threadpoolctl
    sets them; the variables are for the ones loaded later."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    try:
        import torch
    except ImportError:
        pass
    else:
        torch.set_num_threads(1)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(limits=1)  # kept for the worker's life (the limits are undone only by a `with` block)


def _start(init: Callable | None, initargs: tuple, announce: tuple[str, ...] | None = None) -> None:
    """A worker's start: one thread each, the parent's compile notice, then the caller's `init`."""
    one_thread_per_worker()
    if announce is not None:  # the parent says when numba compiles (the `domino` command): so does each worker
        announce_compiling(prefix=f"domino (worker {os.getpid()})", games=announce)
    if init is not None:
        init(*initargs)


def _witnessed(fn: Callable, *job) -> tuple[object, WorkerInfo]:
    """A job with where it ran, measured as it begins."""
    info = worker_info()
    return fn(*job), info


def _call_on_ray(fn: Callable, init: Callable | None, initargs: tuple, job: tuple, cwd: str, witness: bool = False):
    """A Ray task: in the driver's folder where the node has it (a Ray worker starts in the folder
    `ray start` ran in), so relative paths in specs and flags mean what they mean to the driver."""
    if os.path.isdir(cwd):
        os.chdir(cwd)
    _start(init, initargs)
    info = worker_info(on_ray=True) if witness else None
    result = fn(*job)
    return (result, info) if witness else result


def run_jobs(fn: Callable, jobs: list[tuple], workers: int = 1, address: str | None = None,
             init: Callable | None = None, initargs: tuple = (), describe: Callable[[int], str] | None = None,
             witness: dict[int, WorkerInfo] | None = None) -> Iterator[tuple[int, object]]:
    """Yield (index, fn(*jobs[index])) for every job, as each finishes (in list order when workers=1
    and no address). `init(*initargs)` runs once in each worker before its jobs (a Ray task runs it
    before its own job). `describe(index)` words a failed job for the JobError. `witness`: a dict that
    gets each finished job's WorkerInfo under its index."""
    check_workers(workers)
    check_address(address)
    cores = os.cpu_count() or 1
    if address is None and workers > cores:  # allowed, and said once, where the processes start
        print(f"note: {workers} workers on a machine with {cores} cores: they share the cores (no faster than "
              f"{cores})", file=sys.stderr)
    describe = describe or (lambda i: f"job {i}")

    def failed(i: int, err: BaseException) -> JobError:  # one line, whatever lines the worker's error has
        return JobError(" ".join(f"{describe(i)} failed in its worker: {type(err).__name__}: {err}".split()), i)

    def seen(i: int, result):
        if witness is None:
            return result
        result, witness[i] = result
        return result

    if address is not None:
        for i, result in _run_on_ray(fn, jobs, address, init, initargs, failed, witness is not None):
            yield i, seen(i, result)
        return
    call = fn if witness is None else _witnessed
    lead = () if witness is None else (fn,)
    if workers == 1:
        if init is not None:
            init(*initargs)
        for i, job in enumerate(jobs):
            yield i, seen(i, call(*lead, *job))
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start, initargs=(init, initargs, announcing()))
    futures: dict = {}

    def broke(i: int, err: BaseException):
        """Raise job i's failure, or the script's missing __main__ guard where that stopped the workers."""
        unguarded = isinstance(err, BrokenProcessPool) and _unguarded(pool, workers)
        if unguarded:
            raise unguarded from None  # one line: the spawn noise and the broken pool are consequences
        raise failed(i, err) from err

    try:
        for i, job in enumerate(jobs):
            try:
                futures[pool.submit(call, *lead, *job)] = i
            except BrokenProcessPool as err:  # a worker already gone before the last submit
                broke(i, err)
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                result = fut.result()
            except Exception as err:
                broke(i, err)
            yield i, seen(i, result)
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


def _run_on_ray(fn, jobs, address, init, initargs, failed, witness: bool) -> Iterator[tuple[int, object]]:
    import ray

    if not ray.is_initialized():
        try:
            ray.init(address=address, log_to_driver=False, include_dashboard=False)
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise ValueError(f"--address {address!r}: no Ray cluster reached there ({err}); start one with "
                             f"`ray start --head` or name its HOST:PORT") from None
    task = ray.remote(num_cpus=1)(_call_on_ray)
    refs = {task.remote(fn, init, initargs, job, os.getcwd(), witness): i for i, job in enumerate(jobs)}
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
