"""Job lists on a Ray cluster (training/parallel.py, `--address`): on a local `ray start --head
--num-cpus 2` cluster, the jobs run as Ray tasks (each job's WorkerInfo holds a task id of its own and
a node of the cluster, in a process not the driver's, one torch and one BLAS thread), `domino
evaluate --address auto` and `domino benchmark --profile ci --address auto` give the serial runs'
results; a wrong address is a one-line error.

Ray is the `ray` extra, not installed by `make test`: this file runs in `make test-rllib`'s venv, which
has it (the import below is skipped only where Ray is absent, as in CI, where
tests/training/test_parallel.py checks that `--address` without Ray is refused in one line).
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")
import ray  # noqa: E402

from domino_training.cli import main as domino_main  # noqa: E402
from domino_training.evaluate import evaluate  # noqa: E402
from domino_training.evaluate import main as evaluate_main  # noqa: E402
from domino_training.parallel import run_jobs, worker_info  # noqa: E402
from tests.helpers import fenced_blocks  # noqa: E402

RAY = str(Path(sys.executable).parent / "ray")
SCALING = Path(__file__).resolve().parents[2] / "docs" / "scaling.md"


def docs_lines() -> list[list[str]]:
    """The command lines of docs/scaling.md's "Try it on one machine" block, as words."""
    section = SCALING.read_text().split("### Try it on one machine", 1)[1]
    return [shlex.split(line) for line in fenced_blocks(section, "bash")[0].splitlines() if line.strip()]


def without(argv: list[str], *flags: str) -> list[str]:
    """argv less each of `flags` and its value."""
    out, skip = [], False
    for word in argv:
        if skip:
            skip = False
        elif word in flags:
            skip = True
        else:
            out.append(word)
    return out


@pytest.fixture(scope="module")
def cluster():
    """The docs' local head node (their first line), stopped after the module as their last line does."""
    start, stop = docs_lines()[0], docs_lines()[-1]
    assert start[:2] == ["ray", "start"] and stop == ["ray", "stop"], (start, stop)
    assert shutil.which(RAY) or Path(RAY).is_file(), "the ray command of this venv"
    subprocess.run([RAY, "stop", "--force"], capture_output=True, timeout=120)
    subprocess.run([RAY, *start[1:]], check=True, capture_output=True, timeout=300)
    yield "auto"
    ray.shutdown()
    subprocess.run([RAY, *stop[1:], "--force"], capture_output=True, timeout=120)


def domino_line(command: str) -> list[str]:
    lines = [words[1:] for words in docs_lines() if words[:2] == ["domino", command]]
    assert len(lines) == 1, f"docs/scaling.md: one `domino {command}` line in the block, got {lines}"
    return lines[0]


def ran_as_ray_tasks(infos: list) -> None:
    """Each job a Ray task of its own, on a live node of the cluster, in a worker process (not this
    driver), with one torch and one BLAS thread: what a run that connected and then ran here lacks."""
    nodes = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    assert infos and all(i.task_id for i in infos), infos
    assert len({i.task_id for i in infos}) == len(infos)
    assert {i.node_id for i in infos} <= nodes and os.getpid() not in {i.pid for i in infos}
    assert {(i.torch_threads, i.blas_threads) for i in infos} == {(1, 1)}, infos


def test_the_jobs_run_as_ray_tasks(cluster):
    """The witness run_jobs fills is what each task measured of itself (the job is `worker_info`)."""
    witness = {}
    ran = dict(run_jobs(worker_info, [(True,)] * 4, workers=2, address=cluster, witness=witness))
    assert sorted(ran) == sorted(witness) == [0, 1, 2, 3]
    assert all((ran[i].pid, ran[i].node_id, ran[i].task_id) == (w.pid, w.node_id, w.task_id)
               for i, w in witness.items())
    ran_as_ray_tasks(list(witness.values()))


def test_evaluate_on_the_cluster_equals_the_serial_run(cluster, tmp_path):
    agents = ["random", "greedy", "heuristic"]
    serial = evaluate("block_v0", agents, 6, seed=3, progress=False, replay_path=str(tmp_path / "a.jsonl"))
    remote = evaluate("block_v0", agents, 6, seed=3, progress=False, replay_path=str(tmp_path / "b.jsonl"),
                      workers=2, address=cluster)
    assert json.dumps(remote.to_json()) == json.dumps(serial.to_json())
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()
    assert serial.shard_workers == [] and len(remote.shard_workers) == 3 * 6  # 3 pairs, 6 shards each (6 deals)
    ran_as_ray_tasks(remote.shard_workers)


def test_the_docs_evaluate_line_gives_the_serial_json(cluster, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = domino_line("evaluate")
    assert "--address" in argv
    assert domino_main(argv) == 0
    assert domino_main([*without(argv, "--address", "--workers", "--json"), "--json", "serial.json"]) == 0
    assert (tmp_path / "cluster.json").read_text() == (tmp_path / "serial.json").read_text()


def test_the_docs_benchmark_line_writes_the_serial_scores(cluster, tmp_path, monkeypatch):
    def rows(out: Path) -> list[dict]:
        out_rows = []
        for line in (out / "scores.jsonl").read_text().splitlines():
            r = json.loads(line)
            out_rows.append({k: (v.replace(str(out), "OUT") if isinstance(v, str) else v) for k, v in r.items()
                             if "seconds" not in k})
        return out_rows

    monkeypatch.chdir(tmp_path)
    argv = domino_line("benchmark")
    assert "--address" in argv and "--reps" not in argv
    assert domino_main(argv) == 0
    serial = [*without(argv, "--address", "--workers", "--out", "--report"), "--out", "serial", "--report", "serial.md"]
    assert domino_main(serial) == 0
    cluster_out = tmp_path / argv[argv.index("--out") + 1]
    assert rows(cluster_out) == rows(tmp_path / "serial")


def test_an_unreachable_address_is_one_line(capsys):
    ray.shutdown()
    with pytest.raises(SystemExit) as e:
        evaluate_main(["--game", "draw_v0", "--agents", "random", "greedy", "--deals", "2", "--no-progress",
                       "--address", "127.0.0.1:1"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--address '127.0.0.1:1'" in err and "ray start --head" in err
