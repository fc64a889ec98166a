"""`domino mcp` (training/tools/mcp_server.py) through the mcp package's own client: over stdio
(`python -m domino_training.cli mcp` spawned as a subprocess) a whole hand of Block against the
heuristic to the result, and the refusals as tool errors of one clear line; over streamable HTTP on
127.0.0.1, one game started and a foreign Host header refused."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from domino_training.tools.mcp_server import main as mcp_main

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _data(result) -> dict:
    """A tool's structured result ({"result": ...} for a list), or its error text."""
    if result.is_error:
        return {"error": result.content[0].text}
    return result.structured_content if result.structured_content is not None else {"text": result.content[0].text}


async def _whole_hand(client) -> dict:
    """Block against heuristic from a fixed seed: every turn reads legal_moves, plays alternately by
    number and by name; the refusals along the way. Returns what the tests look at."""
    seen = {"moves": 0, "texts": [], "events": []}
    started = _data(await client.call_tool("new_game", {"game": "block_v0", "opponents": ["heuristic"], "seed": 11}))
    gid = started["game_id"]
    seen["started"] = started
    seen["early_result"] = _data(await client.call_tool("result", {"game_id": gid}))
    seen["bad_id"] = _data(await client.call_tool("observe", {"game_id": "no-such-game"}))
    legal = {m["action"] for m in _data(await client.call_tool("legal_moves", {"game_id": gid}))["result"]}
    seen["illegal_action"] = min(set(range(56)) - legal)  # an action of Block that the rules forbid now
    seen["illegal"] = _data(await client.call_tool("play", {"game_id": gid, "move": f"#{seen['illegal_action']}"}))
    seen["out_of_range"] = _data(await client.call_tool("play", {"game_id": gid, "move": 99}))
    seen["observed"] = _data(await client.call_tool("observe", {"game_id": gid}))["text"]
    over = False
    while not over:
        moves = _data(await client.call_tool("legal_moves", {"game_id": gid}))["result"]
        assert moves and [m["number"] for m in moves] == list(range(1, len(moves) + 1))
        move = moves[-1]["number"] if seen["moves"] % 2 else moves[0]["name"]
        played = _data(await client.call_tool("play", {"game_id": gid, "move": move}))
        assert "error" not in played, played
        seen["moves"] += 1
        seen["events"] += played["events"]
        seen["texts"].append(played["text"])
        over = played["over"]
    seen["after_end"] = _data(await client.call_tool("play", {"game_id": gid, "move": 1}))
    seen["result"] = _data(await client.call_tool("result", {"game_id": gid}))
    seen["unknown_agent"] = _data(await client.call_tool("new_game", {"game": "block_v0", "opponents": ["pimc:n=5"]}))
    seen["unknown_rule"] = _data(await client.call_tool("new_game", {"game": "block_v0", "rules": {"colour": "red"}}))
    seen["unknown_game"] = _data(await client.call_tool("new_game", {"game": "chess_v0"}))
    seen["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
    return seen


@pytest.fixture(scope="module")
def stdio_session():
    params = StdioServerParameters(command=sys.executable, args=["-m", "domino_training.cli", "mcp"],
                                   env=ENV, cwd=str(REPO))

    async def run():
        async with Client(params, read_timeout_seconds=120) as client:
            return await _whole_hand(client)

    return anyio.run(run)


def test_a_whole_hand_of_block_against_heuristic_to_the_result(stdio_session):
    s = stdio_session
    assert s["tools"] == ["legal_moves", "new_game", "observe", "play", "result"]
    assert s["started"]["seat"] == 0 and "Block Game (block_v0)" in s["started"]["rules"]
    assert "you are seat 0" in s["started"]["text"] and "your legal moves" in s["started"]["text"]
    assert s["moves"] >= 3 and "the game is over" in s["texts"][-1]
    assert any(e.startswith("seat 1 ") for e in s["events"])  # the heuristic moved on the server
    res = s["result"]
    assert res["seats"] == ["human", "heuristic"] and res["your_seat"] == 0
    assert sum(res["returns"]) == pytest.approx(0) and res["winners"]  # Block is zero-sum
    assert res["your_win_share"] == pytest.approx(1 / len(res["winners"]) if 0 in res["winners"] else 0)


@pytest.mark.parametrize("key,words", [
    ("bad_id", "unknown game id 'no-such-game': start one with new_game"),
    ("illegal", "is not allowed now; choose a move 1.."),
    ("out_of_range", "99 is out of range: choose a move 1.."),
    ("after_end", "not your turn: the game is over"),
    ("early_result", "the game is not over"),
    ("unknown_agent", "opponent 'pimc:n=5' is not on the menu"),
    ("unknown_rule", "unknown config key(s) ['colour']"),
    ("unknown_game", "unknown game 'chess_v0'"),
])
def test_refusals_are_tool_errors_of_one_line(stdio_session, key, words):
    error = stdio_session[key].get("error", "")
    assert words in error and "\n" not in error and "Traceback" not in error, error


def test_an_illegal_move_is_named_with_the_legal_ones(stdio_session):
    from domino_envs import make_game

    name = make_game("block_v0").describe_action(stdio_session["illegal_action"])
    error = stdio_session["illegal"]["error"]
    assert f"illegal move: {name} is not allowed now" in error and "(legal moves: 1. " in error


def test_a_refused_move_changes_nothing(stdio_session):
    """The illegal and out-of-range moves came before the first move: the text after them is the text
    the game started with."""
    assert stdio_session["observed"] == stdio_session["started"]["text"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_streamable_http_on_127_0_0_1_refuses_a_foreign_host():
    import httpx

    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "domino_training.cli", "mcp", "--transport", "http",
                             "--port", str(port)], cwd=REPO, env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
                time.sleep(0.2)

        async def run():
            async with Client(url) as client:
                return _data(await client.call_tool("new_game", {"game": "draw_v0", "seed": 1}))

        started = anyio.run(run)
        assert "you are seat 0" in started["text"]
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        foreign = httpx.post(url, json=body, headers={"Host": "evil.example:80", "Accept": "application/json"})
        assert foreign.status_code in (403, 421), foreign.text  # DNS rebinding refused by the mcp package
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.parametrize("args,message", [
    (["--transport", "ftp"], "argument --transport: invalid choice: 'ftp'"),
    (["--port", "0"], "--port 0 is not a port"),
    (["--agent", "nobody"], "unknown agent 'nobody'"),
])
def test_bad_arguments_exit_2_with_one_line(capsys, args, message):
    assert mcp_main(args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err

