"""The strength ladder's machinery (issue 46): `rate` fanned out over processes and resumable from a
cache folder (training/benchmark/ratings.py), the time per decision, and the ladder script
(training/scripts/ladder.py) at a tiny scale. Small deals and cheap agents: these test the plumbing,
not the ratings."""
from __future__ import annotations

import json
import time

import pytest

from domino_training.benchmark import ratings
from domino_training.benchmark.ratings import decision_seconds, rate

TWO_SIDED = ("block_v0", ["random", "greedy", "heuristic", "pimc:n=2,rollout=random"], 4)
FREE_FOR_ALL = ("seven_toed_pete_v0", ["random", "greedy", "heuristic", "pimc:n=2,rollout=random", "trained"], 6)
KINDS = pytest.mark.parametrize("game,specs,deals", [TWO_SIDED, FREE_FOR_ALL], ids=["two_sided", "free_for_all"])


@pytest.fixture(autouse=True)
def small_units(monkeypatch):
    """Two deals a free-for-all unit, so six deals make three units (the parent splits them)."""
    monkeypatch.setattr(ratings, "DEALS_PER_UNIT", 2)


def as_json(r) -> str:
    return json.dumps(r.to_json(), sort_keys=True)


def refuse_to_play(monkeypatch):
    def play_table(*args, **kw):
        raise AssertionError("a unit was played, not read from the cache")

    monkeypatch.setattr(ratings, "play_table", play_table)


def count_plays(monkeypatch) -> list:
    calls = []
    real = ratings.play_table

    def play_table(game, specs, deals, seed, table_index=0, agents=None):
        calls.append(table_index)
        return real(game, specs, deals, seed, table_index, agents)

    monkeypatch.setattr(ratings, "play_table", play_table)
    return calls


@KINDS
def test_two_workers_rate_exactly_like_one(game, specs, deals, tmp_path):
    one = rate(game, specs, deals, seed=3, bootstrap=20)
    two = rate(game, specs, deals, seed=3, bootstrap=20, workers=2, cache=tmp_path)
    assert as_json(two) == as_json(one)
    assert len(list(tmp_path.glob("*.json"))) == (6 if game == "block_v0" else 3)  # pairs, or chunks of 2 deals


@KINDS
def test_a_cached_rerun_plays_nothing_and_rates_the_same(game, specs, deals, tmp_path, monkeypatch):
    lines = []
    first = rate(game, specs, deals, seed=3, bootstrap=20, cache=tmp_path, echo=lines.append)
    assert any("done" in line for line in lines)
    refuse_to_play(monkeypatch)
    lines.clear()
    again = rate(game, specs, deals, seed=3, bootstrap=20, cache=tmp_path, echo=lines.append)
    assert as_json(again) == as_json(first)
    assert lines and lines[0].startswith(f"{len(list(tmp_path.glob('*.json')))} of ") and "playing 0" in lines[0]


def test_a_killed_run_resumes_from_the_units_it_finished(tmp_path, monkeypatch):
    """A run that dies in its fourth pair keeps three; the rerun plays the other three, and rates as
    a run never killed does."""
    game, specs, deals = TWO_SIDED
    whole = rate(game, specs, deals, seed=3, bootstrap=20)
    real = ratings.play_table

    def dies(game_, specs_, deals_, seed_, t=0, agents=None):
        if t == 3:
            raise KeyboardInterrupt
        return real(game_, specs_, deals_, seed_, t, agents)

    monkeypatch.setattr(ratings, "play_table", dies)
    with pytest.raises(KeyboardInterrupt):
        rate(game, specs, deals, seed=3, bootstrap=20, cache=tmp_path)
    assert len(list(tmp_path.glob("*.json"))) == 3
    monkeypatch.setattr(ratings, "play_table", real)
    calls = count_plays(monkeypatch)
    assert as_json(rate(game, specs, deals, seed=3, bootstrap=20, cache=tmp_path)) == as_json(whole)
    assert sorted(calls) == [3, 4, 5]


def test_a_cache_of_other_deals_or_another_seed_is_not_reused(tmp_path, monkeypatch):
    game, specs, deals = TWO_SIDED
    real = ratings.play_table
    rate(game, specs, deals, seed=3, bootstrap=20, cache=tmp_path)
    for d, s in ((deals + 1, 3), (deals, 4)):
        monkeypatch.setattr(ratings, "play_table", real)
        fresh = rate(game, specs, d, seed=s, bootstrap=20)
        calls = count_plays(monkeypatch)
        assert as_json(rate(game, specs, d, seed=s, bootstrap=20, cache=tmp_path)) == as_json(fresh)
        assert sorted(calls) == list(range(6)), (d, s)  # every pair played again


def test_free_for_all_reuses_only_the_chunks_a_run_shares(tmp_path, monkeypatch):
    """More deals: the first deals' tables are the same draws, so their chunks are read back and only
    the new deals are played; another seed plays everything again."""
    game, specs, _ = FREE_FOR_ALL
    rate(game, specs, 4, seed=3, bootstrap=20, cache=tmp_path)
    fresh = rate(game, specs, 6, seed=3, bootstrap=20)
    calls = count_plays(monkeypatch)
    assert as_json(rate(game, specs, 6, seed=3, bootstrap=20, cache=tmp_path)) == as_json(fresh)
    assert calls == [4, 5]  # play_table's table index is the deal
    calls.clear()
    rate(game, specs, 4, seed=5, bootstrap=20, cache=tmp_path)
    assert calls == [0, 1, 2, 3]


def test_a_changed_policy_file_is_not_read_from_the_cache(tmp_path):
    path = tmp_path / "p.npz"
    path.write_bytes(b"one")
    spec = f"mlp:checkpoint={path}"
    before = ratings._files_digest("block_v0", spec)
    path.write_bytes(b"two")
    assert ratings._files_digest("block_v0", spec) != before != ""
    assert ratings._files_digest("block_v0", "trained") == ratings._files_digest(
        "block_v0", "pimc:n=4,rollout=policy,policy=trained") != ""
    assert ratings._files_digest("block_v0", "trained") != ratings._files_digest("draw_v0", "trained")
    assert ratings._files_digest("block_v0", "pimc:n=4") == ""


def test_decision_seconds_times_only_the_agents_own_decisions(monkeypatch):
    """An agent that sleeps 5 ms a move among random opponents: its mean is 5 ms (the opponents'
    quick moves would pull a mean over every decision down), over the timed hands only."""
    from types import SimpleNamespace

    real = ratings.make_agent
    made = []

    def make_agent(spec, game, **kw):
        if spec != "slow":
            return real(spec, game, **kw)
        inner = real("random", game)

        def act(obs, mask):
            agent.moves += 1
            time.sleep(0.005)
            return inner.act(obs, mask)

        agent = SimpleNamespace(reset=inner.reset, act=act, moves=0)
        made.append(agent)
        return agent

    monkeypatch.setattr(ratings, "make_agent", make_agent)
    out = decision_seconds("block_v0", "slow", hands=3)
    assert 0.005 <= out["seconds"] < 0.008
    assert 0 < out["decisions"] < made[0].moves  # the untimed first hand's moves are not counted
    assert out["hands"] == 3
    assert decision_seconds("block_v0", "random", hands=2)["seconds"] < 0.001


def test_the_ladder_script_writes_a_section_per_env_and_a_row_per_agent(tmp_path, monkeypatch):
    from domino_training.scripts import ladder

    agents = ["random", "greedy", "heuristic", "pimc:n=2"]
    page = tmp_path / "ladder.md"
    argv = ["--deals", "3", "--agents", *agents, "--bootstrap", "10", "--cost-hands", "1",
            "--runs", str(tmp_path / "runs"), "--out-page", str(page)]
    assert ladder.main(["block_v0", "seven_toed_pete_v0", *argv]) == 0
    text = page.read_text()
    sections = text.split("\n## ")[1:]
    assert [s.split("\n")[0] for s in sections] == ["block_v0", "seven_toed_pete_v0"]
    for sec in sections:
        rows = [line for line in sec.split("\n\n")[3].split("\n")[2:]]
        assert sorted(r.split(" | ")[0].strip("| `") for r in rows) == sorted(agents), sec
        assert all(r.endswith("s |") for r in rows)  # the time per decision column
        assert "Regenerate: `python -m domino_training.scripts.ladder " in sec and "--deals 3" in sec
    assert "bradley-terry" in sections[0] and "plackett-luce" in sections[1]
    data = json.loads(page.with_suffix(".json").read_text())
    # the summary: per env its top-rated agent and those whose interval reaches its rating
    for env in ("block_v0", "seven_toed_pete_v0"):
        ratings = data[env]["ratings"]["ratings"]
        top = max(ratings, key=lambda x: x["rating"])
        row = next(line for line in text.split("\n") if line.startswith(f"| {env} |")).split(" | ")
        assert row[1] == f"`{top['agent']}`" and row[-1] == "- |"  # no `trained` in this ladder
        listed = set() if row[3] == "-" else {a.strip("`") for a in row[3].split(", ")}
        assert listed == {x["agent"] for x in ratings if x is not top and x["hi"] >= top["rating"]}
    # one env again: read back (nothing played, no timing again), the other section kept
    refuse_to_play(monkeypatch)
    monkeypatch.setattr(ladder, "decision_seconds", None)
    assert ladder.main(["block_v0", *argv]) == 0
    assert page.read_text() == text


def test_rate_command_keeps_its_units_in_out_and_reads_them_back(tmp_path, capsys, monkeypatch):
    from domino_training.cli import main as cli_main

    argv = ["rate", "random", "greedy", "heuristic", "--game", "block_v0", "--deals", "3", "--bootstrap", "10",
            "--out", str(tmp_path / "units")]
    assert cli_main(argv) == 0
    first = capsys.readouterr().out
    assert "random" in first and len(list((tmp_path / "units").glob("*.json"))) == 3  # one file a pair
    refuse_to_play(monkeypatch)
    assert cli_main([*argv, "--workers", "2"]) == 0
    assert capsys.readouterr().out == first
    with pytest.raises(SystemExit) as e:  # refused by the parser (commands.add_workers)
        cli_main([*argv, "--workers", "0"])
    assert e.value.code == 2 and "workers=0" in capsys.readouterr().err


def test_a_rating_outside_its_interval_is_said_on_its_section():
    """A rating outside its own bootstrap interval (openskill's hand-by-hand fit put Magic-7's there once) is
    said on its section, and nothing is said where every rating is inside."""
    from domino_training.scripts import DOCS, ladder

    entry = json.loads((DOCS / "ladder.json").read_text())["magic7_v0"]
    assert "with care" not in ladder.section("magic7_v0", entry)
    trained = next(x for x in entry["ratings"]["ratings"] if x["agent"] == "trained")
    trained["rating"] = trained["lo"] - 0.2
    text = ladder.section("magic7_v0", entry)
    assert "Read this section's order with care: the rating of `trained` lies outside" in text
