"""Job lists on a Ray cluster (training/parallel.py, `--address`): on a local `ray start --head
--num-cpus 2` cluster, `domino evaluate --address auto` and `domino benchmark --profile ci --address
auto` give the serial runs' results; a wrong address is a one-line error.

Ray is the `ray` extra, not installed by `make test`: this file runs in `make test-rllib`'s venv, which
has it (the import below is skipped only where Ray is absent, as in CI).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")
import ray  # noqa: E402

from domino_training.benchmark import cli  # noqa: E402
from domino_training.evaluate import evaluate  # noqa: E402
from domino_training.evaluate import main as evaluate_main  # noqa: E402

RAY = str(Path(sys.executable).parent / "ray")


@pytest.fixture(scope="module")
def cluster():
    """A local head node with 2 CPUs, as the docs start one; stopped after the module."""
    assert shutil.which(RAY) or Path(RAY).is_file(), "the ray command of this venv"
    subprocess.run([RAY, "stop", "--force"], capture_output=True, timeout=120)
    subprocess.run([RAY, "start", "--head", "--num-cpus", "2", "--include-dashboard", "false"], check=True,
                   capture_output=True, timeout=300)
    yield "auto"
    ray.shutdown()
    subprocess.run([RAY, "stop", "--force"], capture_output=True, timeout=120)


def test_evaluate_on_the_cluster_equals_the_serial_run(cluster, tmp_path):
    agents = ["random", "greedy", "heuristic"]
    serial = evaluate("block_v0", agents, 6, seed=3, progress=False, replay_path=str(tmp_path / "a.jsonl"))
    remote = evaluate("block_v0", agents, 6, seed=3, progress=False, replay_path=str(tmp_path / "b.jsonl"),
                      workers=2, address=cluster)
    assert json.dumps(remote.to_json()) == json.dumps(serial.to_json())
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()


def test_the_benchmark_on_the_cluster_writes_the_serial_scores(cluster, tmp_path):
    def rows(out: Path) -> list[dict]:
        out_rows = []
        for line in (out / "scores.jsonl").read_text().splitlines():
            r = json.loads(line)
            out_rows.append({k: (v.replace(str(out), "OUT") if isinstance(v, str) else v) for k, v in r.items()
                             if "seconds" not in k})
        return out_rows

    for name, extra in (("serial", []), ("ray", ["--address", cluster, "--workers", "2"])):
        assert cli.main(["--profile", "ci", "--out", str(tmp_path / name), "--report", str(tmp_path / f"{name}.md"),
                         "--reps", "50", *extra]) == 0
    assert rows(tmp_path / "ray") == rows(tmp_path / "serial")


def test_an_unreachable_address_is_one_line(capsys):
    ray.shutdown()
    with pytest.raises(SystemExit) as e:
        evaluate_main(["--game", "draw_v0", "--agents", "random", "greedy", "--deals", "2", "--no-progress",
                       "--address", "127.0.0.1:1"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--address '127.0.0.1:1'" in err and "ray start --head" in err
