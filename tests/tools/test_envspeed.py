"""`domino bench` (training/tools/envspeed.py) on a tiny budget: every rate it prints is measured and
written to its JSON, a peer library that is not installed is one line saying so (and no ratio against
it), an installed one gives the ratio, and the start-up probe times a fresh process."""
from __future__ import annotations

import json
import sys

from domino_training.cli import main as cli_main
from domino_training.tools import envspeed

PEERS = ("pettingzoo_connect_four_v3", "openspiel_python_block_dominoes")


def _bench(tmp_path, monkeypatch, capsys) -> tuple[dict, list[str], list]:
    started = []
    monkeypatch.setattr(envspeed, "_startup_seconds", lambda name, cold: started.append((name, cold)) or 0.25)
    path = tmp_path / "bench.json"
    assert cli_main(["bench", "--seconds", "0.05", "--games", "block_v0", "--json", str(path)]) == 0
    return json.loads(path.read_text()), capsys.readouterr().out.splitlines(), started


def test_bench_measures_every_rate_and_says_in_one_line_each_peer_that_is_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # neither peer importable: the bench extra not installed
    monkeypatch.setitem(sys.modules, "pettingzoo.classic", None)
    data, lines, started = _bench(tmp_path, monkeypatch, capsys)
    row = data["games"]["block_v0"]
    assert set(row) == {"pettingzoo_decisions_per_s"} | {f"vector_batch_{b}_decisions_per_s" for b in envspeed.BATCHES}
    assert all(v > 0 for v in row.values())
    assert data["peers"] == {f"{p}_decisions_per_s": None for p in PEERS} and data["ratios"] == {}
    for peer in PEERS:
        (line,) = [x for x in lines if peer in x]
        assert line.split() == [peer, "not", "installed"]
    assert not [x for x in lines if x.endswith("x")]  # no ratio against a missing peer
    assert started == [("draw_v0", False), ("draw_v0", True)]
    assert data["startup_seconds"] == {"draw_v0_warm_cache": 0.25, "draw_v0_cold_compile": 0.25}
    (table_row,) = [x for x in lines if x.startswith("block_v0 ")]
    assert len(table_row.split()) == 1 + len(row)


def test_bench_against_an_installed_peer_prints_the_ratio(tmp_path, monkeypatch, capsys):
    data, lines, _ = _bench(tmp_path, monkeypatch, capsys)
    peer = data["peers"]["openspiel_python_block_dominoes_decisions_per_s"]
    assert peer > 0
    ratio = data["ratios"]["block_v0_pettingzoo_vs_openspiel_block_dominoes"]
    assert ratio == data["games"]["block_v0"]["pettingzoo_decisions_per_s"] / peer
    assert any(x.startswith("block_v0_pettingzoo_vs_openspiel_block_dominoes") and x.endswith(f"{ratio:.1f}x")
               for x in lines)


def test_the_startup_probe_times_a_fresh_process_with_the_cache_warm():
    seconds = envspeed._startup_seconds("draw_v0", cold=False)
    assert 0 < seconds < 60
