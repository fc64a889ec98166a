"""Language-model agents (issue 57): the reply contract, the fake models end to end on every game, each reply
category against a local fake server with its counts in the table and JSON, the cache, the key, bad input."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from domino_agents.llm import LLMAgent, Reply, extract_move
from domino_agents.registry import make_agent
from domino_envs.registry import game_names, make_game
from domino_envs.replay import load
from domino_training.evaluate import evaluate, run_matchup

from .fake_llm_server import FakeLLMServer

SECRET = "sk-test-Zq8f3Lr0Xw2Vb7Nm4Tk9"


@pytest.fixture(scope="module")
def server():
    with FakeLLMServer() as s:
        yield s


@pytest.fixture()
def fresh(server):
    """The module's server with an empty script and request log, the default answer restored."""
    server.script.clear()
    server.requests.clear()
    yield server
    server.script.clear()


def spec(server, **params) -> str:
    items = {"model": "m1", "base_url": server.base_url, "network_retries": 0, "backoff": 0, **params}
    return "llm:" + ",".join(f"{k}={v}" for k, v in items.items())


def decide(agent: LLMAgent, game, row):
    from domino_envs.core import H_TURN

    seat = int(row[H_TURN])
    agent.observe_state(row, seat)
    mask = game.legal_mask(row)
    return agent.act(game.observe(row, seat), mask), mask


# ---------------------------------------------------------------------------- the contract
@pytest.mark.parametrize("text, move", [
    ('{"move": 2} no, better: {"move": 3}', "3"),
    ('I think {"move": 1}.\nMOVE: 4', "4"),
    ('MOVE: 2\nOn second thought {"move": "6-4 left"}', "6-4 left"),
    ('{"reason": "heavy", "move": 5}', "5"),
    ("I would play move 3", None),
    ('{"mv": 3}', None),
    ('{"move": true}', None),
    ("", None),
])
def test_the_last_contract_move_is_read_and_nothing_else(text, move):
    assert extract_move(text) == move


def test_a_single_legal_move_makes_no_call():
    game = make_game("block_v0")
    calls = []
    agent = LLMAgent(game, lambda m: calls.append(m) or '{"move": 1}', seed=0, seat=0)
    row = game.new_state()
    game.reset(row, 3)
    mask = np.zeros(game.num_actions, dtype=np.int8)
    mask[int(np.flatnonzero(game.legal_mask(row))[0])] = 1
    assert agent.act(game.observe(row, 0), mask) == int(np.flatnonzero(mask)[0])
    assert calls == [] and agent.step_info() is None


# ---------------------------------------------------------------------------- criterion 1
@pytest.mark.parametrize("game_name", game_names())
def test_fake_heuristic_plays_exactly_as_the_heuristic(game_name, tmp_path):
    """Text view, reply, parsing and play end to end: the same win shares and the same moves, hand by hand."""
    game = make_game(game_name)
    runs = {}
    for focal in ("llm:model=fake:heuristic", "heuristic"):
        with open(tmp_path / "r.jsonl", "w") as fh:
            mine, _ = run_matchup(game, focal, "heuristic", 2, 11, 0, replay_file=fh)
        runs[focal] = (mine.win, [[(s.seat, s.action) for s in r.steps] for r in load(tmp_path / "r.jsonl")])
        if focal.startswith("llm"):
            infos = [s.info["llm"] for r in load(tmp_path / "r.jsonl") for s in r.steps if s.info]
            assert infos and all(i["replies"] == ["ok"] for i in infos)
    (w1, moves1), (w2, moves2) = runs.values()
    assert np.array_equal(w1, w2)
    assert moves1 == moves2


# ---------------------------------------------------------------------------- replies against the server
def test_usage_seed_fingerprint_and_price_are_read(fresh, monkeypatch):
    monkeypatch.setenv("FAKE_LLM_KEY", SECRET)
    game = make_game("block_v0")
    agent = make_agent(spec(fresh, api_key_env="FAKE_LLM_KEY", price_in=1, price_out=2), game, seed=5)
    row = game.new_state()
    game.reset(row, 3)
    action, mask = decide(agent, game, row)
    assert mask[action]
    info = agent.step_info()["llm"]
    assert (info["tokens_in"], info["tokens_out"], info["tokens_reasoning"]) == (100, 20, 5)
    assert info["fingerprint"] == "fp_fake" and info["replies"] == ["ok"]
    assert info["cost"] == pytest.approx((100 * 1 + 20 * 2) / 1e6)
    body = fresh.requests[0]["body"]
    assert isinstance(body["seed"], int) and body["model"] == "m1" and body["temperature"] == 0
    assert fresh.requests[0]["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in json.dumps(body)


def test_429_500_and_timeouts_are_retried_and_counted_apart(fresh):
    game = make_game("block_v0")
    row = game.new_state()
    game.reset(row, 3)
    fresh.script += ["429", "500", ("sleep", 1.0)]
    agent = make_agent(spec(fresh, network_retries=3, timeout=0.3), game, seed=1)
    decide(agent, game, row)
    info = agent.step_info()["llm"]
    assert info["network_errors"] == 3 and info["replies"] == ["ok"] and info["fallback"] is None
    fresh.script += ["500", "500"]  # network_retries=1: the try fails as "network", the retry answers
    agent = make_agent(spec(fresh, network_retries=1), game, seed=1)
    decide(agent, game, row)
    info = agent.step_info()["llm"]
    assert info["network_errors"] == 2 and info["replies"] == ["network", "ok"]


def test_each_reply_category_is_counted_in_the_table_and_json(fresh, tmp_path):
    """Scripted replies: network, unparsable (-> random), truncated, empty (-> random), illegal then ok; then
    the default first move. The counts and the failed-reply rate come out in the JSON and the table."""
    fresh.script += ["500", ("reply", "I like dominoes."), ("length", 'Let me think: {"mo'), ("reply", "  "),
                     ("reply", '{"move": 999}')]
    report = evaluate("block_v0", [spec(fresh, retries=1), "heuristic"], deals=1, seed=0, progress=False)
    j = report.to_json()
    llm = j["matchups"][0]["llm"]
    assert llm["categories"] == {"ok": llm["decisions"] - 2, "illegal": 1, "unparsable": 1, "empty": 1,
                                 "truncated": 1, "network": 1}
    assert llm["fallbacks"] == {"random": 2, "forfeit": 0}
    assert llm["replies"] == llm["decisions"] + 3 == fresh.calls
    assert 0 < llm["illegal_reply_rate"]["mean"] < 1
    assert llm["tokens_per_decision"]["in"] > 0 and j["llm_calls"] == {"made": fresh.calls, "from_cache": 0}
    row = next(line for line in report.table().splitlines() if line.startswith("llm:") and " 1 " in line)
    assert row.split()[2:12] == [str(llm["decisions"]), str(llm["replies"]), str(llm["decisions"] - 2),
                                 "1", "1", "1", "1", "1", "2", "0"]


def test_forfeit_scores_the_hand_as_a_loss_and_the_replay_still_verifies(tmp_path):
    out = tmp_path / "r.jsonl"
    report = evaluate("block_v0", ["llm:model=fake:garbage,retries=0,on_fail=forfeit", "random"], deals=2,
                      seed=0, progress=False, replay_path=str(out))
    m = report.to_json()["matchups"][0]
    assert m["llm"]["fallbacks"]["forfeit"] == 4 and m["llm"]["decisions"] == 4  # one call a hand, then none
    assert m["win_rate"]["mean"] == 0.0
    replays = load(out)
    assert [r.extra["forfeit"] for r in replays] == [[0], [1], [0], [1]]
    for r in replays:
        r.verify()


# ---------------------------------------------------------------------------- cache, budget, concurrency
def test_a_rerun_from_the_cache_calls_nothing_and_writes_the_same_replay(fresh, tmp_path):
    s = spec(fresh, cache=tmp_path / "c.sqlite")
    evaluate("block_v0", [s, "heuristic"], deals=2, seed=4, progress=False, replay_path=str(tmp_path / "a.jsonl"))
    first = fresh.calls
    replies = sum(len(st.info["llm"]["replies"]) for r in load(tmp_path / "a.jsonl") for st in r.steps if st.info)
    assert first == replies > 0  # every decision asked its own question
    report = evaluate("block_v0", [s, "heuristic"], deals=2, seed=4, progress=False,
                      replay_path=str(tmp_path / "b.jsonl"))
    assert fresh.calls == first and report.calls == 0 and report.cached == replies
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_max_calls_stops_cleanly_and_a_rerun_goes_on_from_the_cache(fresh, tmp_path):
    s = spec(fresh, cache=tmp_path / "c.sqlite")
    full = evaluate("block_v0", [spec(fresh), "heuristic"], deals=4, seed=2, progress=False,
                    replay_path=str(tmp_path / "full.jsonl"))
    total = fresh.calls
    fresh.requests.clear()
    part = evaluate("block_v0", [s, "heuristic"], deals=4, seed=2, progress=False, max_calls=total // 2,
                    replay_path=str(tmp_path / "p.jsonl"))
    assert part.stopped and "--max-calls" in part.stopped and part.calls == fresh.calls == total // 2
    kept = part.matchups[(s, "heuristic")].win.size
    assert 0 < kept < 4 and len(load(tmp_path / "p.jsonl")) == 2 * kept
    assert "stopped" in part.to_json() and "stopped early" in part.table()
    rest = evaluate("block_v0", [s, "heuristic"], deals=4, seed=2, progress=False, replay_path=str(tmp_path / "p.jsonl"))
    assert part.calls + rest.calls == total and rest.stopped is None
    a, b = full.to_json()["matchups"][0], rest.to_json()["matchups"][0]
    assert a["win_rate"] == b["win_rate"] and a["llm"]["categories"] == b["llm"]["categories"]
    moves = [[[(st.seat, st.action) for st in r.steps] for r in load(tmp_path / name)] for name in ("full.jsonl", "p.jsonl")]
    assert moves[0] == moves[1]  # the resumed file holds every hand once, in order


def test_concurrent_deals_give_the_serial_results(fresh, tmp_path):
    def strip(path):
        reps = [r.to_json() for r in load(path)]
        for r in reps:
            for st in r["steps"]:
                st.get("info", {}).get("llm", {}).pop("seconds", None)
        return reps

    reports = []
    for c in (1, 4):
        reports.append(evaluate("draw_v0", ["llm:model=fake:random", "greedy"], deals=6, seed=1, progress=False,
                                concurrency=c, replay_path=str(tmp_path / f"{c}.jsonl")))
    a, b = (r.to_json() for r in reports)
    for j in (a, b):
        j["matchups"][0]["llm"].pop("seconds_per_decision")
    assert a == b
    assert strip(tmp_path / "1.jsonl") == strip(tmp_path / "4.jsonl")


# ---------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("extra, says", [
    ("api_key=" + SECRET, "carries a key"),
    ("model=" + SECRET, "looks like a key"),
    ("color=red", "unknown parameter"),
    ("base_url=ftp://example.org/v1", "not an http(s) URL"),
    ("api_key_env=DOMINO_NO_SUCH_VARIABLE", "DOMINO_NO_SUCH_VARIABLE"),
    ("on_fail=cry", "on_fail"),
])
def test_bad_specs_are_one_line_before_any_call(fresh, extra, says):
    base = {"model": "m1", "base_url": fresh.base_url}
    key, _, value = extra.partition("=")
    base[key] = value
    text = "llm:" + ",".join(f"{k}={v}" for k, v in base.items())
    done = subprocess.run([sys.executable, "-m", "domino_training.cli", "evaluate", "--game", "block_v0", "--agents",
                           text, "heuristic", "--deals", "1", "--no-progress"], capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], lines
    assert SECRET not in done.stderr + done.stdout
    assert fresh.calls == 0


def test_the_key_reaches_no_replay_report_or_table(fresh, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_LLM_KEY", SECRET)
    s = spec(fresh, api_key_env="FAKE_LLM_KEY", cache=tmp_path / "c.sqlite")
    report = evaluate("block_v0", [s, "heuristic"], deals=1, progress=False, replay_path=str(tmp_path / "r.jsonl"))
    assert fresh.calls > 0 and all(r["authorization"] == f"Bearer {SECRET}" for r in fresh.requests)
    written = (tmp_path / "r.jsonl").read_text() + json.dumps(report.to_json()) + report.table()
    assert SECRET not in written and SECRET.encode() not in (tmp_path / "c.sqlite").read_bytes()


def test_a_callable_may_return_a_reply_or_a_string():
    game = make_game("block_v0")
    row = game.new_state()
    game.reset(row, 3)
    for answer in ('{"move": 1}', Reply('MOVE: 1', prompt_tokens=7)):
        agent = LLMAgent(game, lambda m, a=answer: a, seed=0)
        action, mask = decide(agent, game, row)
        assert action == int(np.flatnonzero(mask)[0]) and agent.step_info()["llm"]["replies"] == ["ok"]


def test_the_benchmark_script_times_both_arms_on_the_same_results():
    from domino_training.scripts import llmbench

    m = llmbench.measure_concurrency(1, 2, 0.0, repeats=1)
    assert m["serial_calls"] == m["concurrent_calls"] > 0 and m["serial_win"] == m["concurrent_win"]
    assert m["serial_s"] > 0 and m["concurrent_s"] > 0
    data = {"date": "2030-01-01", "machine": "a test", "command": "x", "concurrency": [m], "fake_deals": 1,
            "fakes": llmbench.fake_table(1)[:2]}
    text = llmbench.section(data)
    assert "| 1 | " in text and "`fake:heuristic`" in text


def test_a_refused_key_is_one_line_without_the_key(fresh, monkeypatch, tmp_path):
    """Hosted APIs quote a wrong key back in their 401: the error line carries neither it nor a masked form."""
    monkeypatch.setenv("FAKE_LLM_KEY", SECRET)
    fresh.script.append(("status", 401, f"Incorrect API key provided: {SECRET}. Or {SECRET[:8]}****{SECRET[-4:]}"))
    s = spec(fresh, api_key_env="FAKE_LLM_KEY")
    done = subprocess.run([sys.executable, "-m", "domino_training.cli", "evaluate", "--game", "block_v0", "--agents", s,
                           "heuristic", "--deals", "1", "--no-progress"], capture_output=True, text=True)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "HTTP 401" in lines[0], done.stderr
    assert SECRET not in done.stderr and SECRET[-4:] not in done.stderr


def test_the_prompt_is_the_same_whatever_the_hidden_tiles(fresh):
    """The agent reads only its seat from observe_state: a resampled row gives the same messages."""
    from domino_envs.core import H_TURN

    for game_name in game_names():
        game = make_game(game_name)
        row = game.new_state()
        game.reset(row, 8)
        for _ in range(6):
            if game.legal_mask(row).sum() >= 2:
                break
            game.step(row, int(np.flatnonzero(game.legal_mask(row))[0]))
        seat = int(row[H_TURN])
        seen = []
        for state in (row, game.sample_hidden(row, seat, np.random.default_rng(1))):
            agent = LLMAgent(game, lambda m, seen=seen: seen.append(m) or '{"move": 1}', seed=0)
            agent.observe_state(state, seat)
            agent.act(game.observe(row, seat), game.legal_mask(row))
        assert seen[0] == seen[1], game_name


def test_a_budget_stops_the_run_and_the_command_says_so(tmp_path):
    s = "llm:model=fake:random,price_in=10,price_out=10"
    done = subprocess.run([sys.executable, "-m", "domino_training.cli", "evaluate", "--game", "draw_v0", "--agents", s,
                           "greedy", "--deals", "6", "--budget", "0.25", "--no-progress", "--json", str(tmp_path / "r.json"),
                           "--save-replays", str(tmp_path / "r.jsonl")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    kept = report["matchups"][0]["deals"]
    assert "--budget 0.25 reached" in report["stopped"] and 0 < kept < 6
    assert len(load(tmp_path / "r.jsonl")) == 2 * kept and "stopped early" in done.stderr
    assert 0 < report["matchups"][0]["llm"]["cost"] < 0.25  # the deals kept; the unfinished one's calls are not


def test_without_the_llm_extra_the_spec_is_one_clear_error(monkeypatch):
    from domino_agents.llm import LLMConfigError
    from domino_agents.registry import make_agent
    from domino_envs.registry import make_game

    monkeypatch.setitem(sys.modules, "httpx", None)  # `import httpx` now raises ImportError, as with no extra
    with pytest.raises(LLMConfigError, match=r"needs the llm extra \(httpx is missing\): pip install"):
        make_agent("llm:model=m1,base_url=http://127.0.0.1:9/v1", make_game("block_v0"))
