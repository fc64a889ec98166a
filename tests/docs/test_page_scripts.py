"""The scripts that measure the results pages run, on tiny budgets, into a scratch copy of their data:
search.py (a game's row, the costs), ismcts.py (deals against OpenSpiel's ISMCTS, kept and resumed),
speed.py (a `domino bench` file taken in) and scaling.py (the three arms timed in turns). Their pages
are then their data rendered, as tests/docs/test_pages.py checks for the committed ones."""
from __future__ import annotations

import json
import shutil

import pytest

from domino_envs.registry import game_names
from domino_training.scripts import DOCS, headroom, ismcts, pages, scaling, search, speed


@pytest.fixture
def docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("search.json", "speed.json", "scaling.json", "scaling.md", "benchmark_full/full.json",
                 "benchmark/quick.json"):  # scaling.md's second section: the full profile's cost
        (folder / name).parent.mkdir(exist_ok=True)
        shutil.copy(DOCS / name, folder / name)
    return folder


def test_search_measures_a_row_with_the_shipped_policy(docs, monkeypatch):
    monkeypatch.setattr(search, "costs", lambda game, hands=search.COST_HANDS: {
        search.PIMC: 0.01, search.guided_spec(game): 0.05, "trained": 0.0001})
    assert search.main(["block_v0", "--deals", "2", "--seed", "5", "--costs", "--load", "a test",
                        "--out-page", str(docs / "search.md")]) == 0
    data = json.loads((docs / "search.json").read_text())
    (row,) = [r for r in data["rows"] if r["game"] == "block_v0"]
    assert (row["deals"], row["seed"], row["agent"]) == (2, 5, search.GUIDED)
    assert row["policy_env_steps"] == search.shipped_env_steps("block_v0") and 0 <= row["win"]["mean"] <= 1
    assert sorted(data["costs"]["games"]) == sorted(game_names()) and data["costs"]["load"] == "a test"
    assert (docs / "search.md").read_text() == search.page(data)
    assert "| block_v0 | `pimc:n=64,rollout=policy,policy=trained` | 4.1M | 2 (5) |" in search.page(data)


def test_search_costs_time_three_agents():
    seconds = search.costs("block_v0", hands=1)
    assert list(seconds) == [search.PIMC, search.GUIDED, "trained"] and all(s > 0 for s in seconds.values())


def test_speed_takes_a_bench_file(docs, tmp_path):
    run = json.loads((DOCS / "speed.json").read_text())["envs"]
    bench = {k: run[k] for k in ("machine", "python", "games", "peers", "startup_seconds")}
    bench["seconds_per_measurement"] = 0.5
    bench["games"]["draw_v0"]["pettingzoo_decisions_per_s"] = 143_000.0
    (tmp_path / "bench.json").write_text(json.dumps(bench))
    assert speed.main(["--bench", str(tmp_path / "bench.json"), "--date", "2030-01-02",
                       "--out-page", str(docs / "speed.md")]) == 0
    text = (docs / "speed.md").read_text()
    assert "`domino bench --seconds 0.5` on the 2-core VM (2030-01-02;" in text and "| draw_v0 | 143k |" in text
    del bench["games"]["sum7_v0"]
    (tmp_path / "bench.json").write_text(json.dumps(bench))
    with pytest.raises(SystemExit):
        speed.main(["--bench", str(tmp_path / "bench.json"), "--out-page", str(docs / "speed.md")])


def test_scaling_times_the_three_arms_in_turns(docs, monkeypatch):
    calls = []

    def timed(commands):
        calls.append(commands)
        return float(len(calls))

    monkeypatch.setattr(scaling, "_timed", timed)
    monkeypatch.setattr(scaling, "DOCS", docs)
    monkeypatch.setattr(pages, "DOCS", docs)
    assert scaling.main(["--deals", "40", "--runs", "2"]) == 0
    arms = [len(c) for c in calls]
    assert arms == [1, 1, 2, 1, 1, 2]  # one process, two workers, the pair; then again
    assert calls[1][0][-2:] == ["--workers", "2"] and calls[2][0][calls[2][0].index("--deals") + 1] == "20"
    m = json.loads((docs / "scaling.json").read_text())["measurement"]
    assert m["seconds"] == {"one process": [1.0, 4.0], "two workers": [2.0, 5.0],
                            "two half evaluations side by side": [3.0, 6.0]}
    assert "| 2.5 (2 runs: 1.0-4.0) | 1.00x |" in (docs / "scaling.md").read_text()


def test_scaling_times_a_real_command():
    assert scaling._timed([["python", "-c", "pass"], ["python", "-c", "pass"]]) > 0
    with pytest.raises(SystemExit, match="failed"):
        scaling._timed([["python", "-c", "raise SystemExit(3)"]])


def test_headroom_measures_a_cell_and_the_ladder_page_shows_it(docs, monkeypatch):
    for name in ("ladder.json", "headroom.json", "trained.json", "ladder.md"):
        shutil.copy(DOCS / name, docs / name)
    (docs / "headroom.json").write_text(json.dumps({"rows": []}))
    monkeypatch.setattr(headroom, "DOCS", docs)
    monkeypatch.setattr(pages, "DOCS", docs)
    assert headroom.main(["block_v0", "--agent", "sees_all", "--deals", "2", "--seed", "5"]) == 0
    (row,) = json.loads((docs / "headroom.json").read_text())["rows"]
    assert (row["game"], row["deals"], row["seed"], row["spec"]) == ("block_v0", 2, 5, headroom.AGENTS["sees_all"])
    assert 0 <= row["win"]["lo"] <= row["win"]["mean"] <= row["win"]["hi"] <= 1 and row["fair_share"] == 0.5
    block = next(line for line in (docs / "ladder.md").read_text().splitlines() if line.startswith("| Block Game |"))
    assert block.startswith(f"| Block Game | 0.50 | {row['win']['mean']:.3f} [") and "(2) | - | - |" in block
    assert "](headroom.png)" in (docs / "ladder.md").read_text()  # the plot of the fair share and the ceilings
    from PIL import Image

    assert Image.open(docs / "headroom.png").size[0] > 1000
    asked = []
    monkeypatch.setattr(headroom, "measure", lambda g, a, *rest: asked.append((g, a)) or {**row, "game": g, "agent": a})
    assert headroom.main(["--all", "--agent", "sees_all", "--agent", "pimc256", "--deals", "2"]) == 0
    assert asked == [(g, "sees_all") for g in game_names() if g != "block_v0"] + [(g, "pimc256") for g in game_names()]


def test_ismcts_plays_deals_in_chunks_keeps_them_and_goes_on_where_it_was(tmp_path, monkeypatch, capsys):
    """The agent against OpenSpiel's ISMCTS (5 simulations here): each deal with the agent in both seats, kept
    a chunk at a time; a second run with more deals plays only the new ones, and two workers play the
    deals one does (the same win shares); the page is the data rendered."""
    def run(folder: str, *argv: str) -> dict:
        docs = tmp_path / folder
        docs.mkdir(exist_ok=True)
        monkeypatch.setattr(ismcts, "DOCS", docs)
        assert ismcts.main(["block_v0", "--agent", "greedy", "--sims", "5", "--chunk", "1", *argv]) == 0
        data = json.loads((docs / ismcts.DATA).read_text())
        assert (docs / "ismcts.md").read_text() == ismcts.page(data)
        return data

    first = run("one", "--deals", "2")
    (r,) = first["runs"]
    assert (r["game"], r["agent"], r["sims"], r["seed"]) == ("block_v0", "greedy", 5, 60)
    assert [d[0] for d in r["deals"]] == [0, 1] and all(0 <= x <= 1 for d in r["deals"] for x in d[1:])
    capsys.readouterr()
    (more,) = run("one", "--deals", "3")["runs"]
    assert "2 deals kept, 1 to play" in capsys.readouterr().err
    assert more["deals"][:2] == r["deals"] and [d[0] for d in more["deals"]] == [0, 1, 2]
    (two,) = run("two", "--deals", "3", "--workers", "2")["runs"]
    assert two["deals"] == more["deals"]
    line = next(x for x in ismcts.page({"runs": [more]}).splitlines() if x.startswith("| block_v0"))
    assert "| `greedy` | OpenSpiel ISMCTS-5 (UCT c=2, random rollouts) | 3 |" in line
    for bad, said in ((["--sims", "0"], "--sims must be at least 1"), (["--agent", "nope"], "--agent 'nope'")):
        with pytest.raises(SystemExit):
            ismcts.main(["block_v0", *bad])
        assert said in capsys.readouterr().err
    with pytest.raises(SystemExit):
        ismcts.main(["draw_v0"])  # no resampling after draws: not offered
