"""What `domino serve` refuses (issue 56, criterion 3), through Starlette's test client: a bad Host,
Origin or token; specs, paths and code from the browser; bad fields (hypothesis over the routes'
fields too). Each refusal gets its status and one message, never a traceback, and leaves the game's
state as it was."""
from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domino_envs.errors import ConfigError
from domino_training.web.app import CSP, Settings, build_parser, settings_from
from tests.web.helpers import ORIGIN, client, game_of, moves, new_game, version


@pytest.fixture(scope="module")
def replays(tmp_path_factory):
    return tmp_path_factory.mktemp("replays")


@pytest.fixture(scope="module")
def c(tmp_path_factory, replays):
    return client(Settings(data_dir=tmp_path_factory.mktemp("data"), replays=replays, max_games=500))


@pytest.fixture
def game(c):
    """A fresh Block game against the heuristic, the human (seat 0) to move."""
    path = new_game(c, "block_v0", ["human", "heuristic"], seed=21)
    live = game_of(c, path)
    assert live.turn == 0
    return path, live


def snapshot(live):
    return live.state.copy(), live.version, len(live.events), live.over


def unchanged(live, before) -> bool:
    state, v, n, over = snapshot(live)
    return np.array_equal(state, before[0]) and (v, n, over) == before[1:]


def refused(r, status: int, *words: str) -> str:
    """The response is an error page with `status` and one message holding `words`; its message."""
    assert r.status_code == status, (r.status_code, r.text[-400:])
    assert "Traceback" not in r.text and 'File "' not in r.text
    assert r.headers["content-security-policy"] == CSP
    message = r.text.split('<p id="error" role="alert">', 1)[1].split("</p>", 1)[0]
    for w in words:
        assert w in message, (w, message)
    return message


# ------------------------------------------------------------------------------ host, origin, token
def test_a_foreign_host_header_is_refused(c, game):
    path, live = game
    before = snapshot(live)
    refused(c.get(path, headers={"Host": "evil.example"}), 403, "evil.example")
    refused(c.post(path + "/move", data={"seat": "0", "version": "0", "action": moves(c.get(path).text)[0]},
                   headers={"Host": "evil.example:80", "Origin": "http://evil.example:80"}), 403, "Host")
    assert unchanged(live, before)
    assert c.get(path, headers={"Host": "localhost:8000"}).status_code == 200


@pytest.mark.parametrize("origin", [None, "http://evil.example", "null", "http://127.0.0.1:9999", "https://127.0.0.1"])
def test_a_post_from_another_origin_is_refused(c, game, origin):
    path, live = game
    before = snapshot(live)
    html = c.get(path).text
    headers = {} if origin is None else {"Origin": origin}
    refused(c.post(path + "/move", data={"seat": "0", "version": version(html), "action": moves(html)[0]},
                   headers=headers), 403, "Origin")
    refused(c.post("/games", data={"game": "block_v0", "seat0": "human", "seat1": "random"}, headers=headers), 403)
    assert unchanged(live, before)


def test_another_host_needs_the_token(tmp_path):
    c = client(Settings(host="0.0.0.0", token="a-long-token", data_dir=tmp_path))
    refused(c.get("/"), 403, "token")
    refused(c.get("/?token=wrong-token"), 403, "token")
    r = c.get("/new?game=draw_v0&token=a-long-token", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/new?game=draw_v0"
    assert "domino_token=a-long-token" in r.headers["set-cookie"] and "samesite=strict" in r.headers["set-cookie"].lower()
    assert c.get("/").status_code == 200, "the cookie carries the token from then on"


def test_serve_makes_a_token_for_another_host_and_checks_its_flags(tmp_path):
    def args(*argv):
        return build_parser().parse_args(["--data-dir", str(tmp_path), *argv])

    assert settings_from(args()).token is None
    made = settings_from(args("--host", "192.0.2.7")).token
    assert made and len(made) >= 16
    assert settings_from(args("--host", "192.0.2.7", "--token", "given-token")).token == "given-token"
    for bad, word in ((("--port", "70000"), "--port"), (("--max-games", "0"), "--max-games"),
                      (("--replays", str(tmp_path / "missing")), "--replays"), (("--agent", "nosuch"), "nosuch"),
                      (("--agent", "pimc:n=0"), "pimc:n=0")):
        with pytest.raises(ConfigError, match=word):
            settings_from(args(*bad))
    assert isinstance(args(), argparse.Namespace)


def test_every_response_carries_the_csp_and_no_cors_header(c, game):
    path, _ = game
    responses = [c.get("/"), c.get(path), c.get("/static/app.js"), c.get("/static/app.css"), c.get("/nowhere"),
                 c.get("/games/nosuchgame"), c.options(path, headers={"Origin": "http://evil.example",
                                                                     "Access-Control-Request-Method": "POST"}),
                 c.get("/", headers={"Origin": "http://evil.example"}), c.get("/", headers={"Host": "evil.example"}),
                 c.post("/games", data={}, headers=ORIGIN, follow_redirects=False)]
    for r in responses:
        assert r.headers["content-security-policy"] == CSP, r.url
        assert not [h for h in r.headers if h.lower().startswith("access-control-")], r.headers
    assert "<script>" not in c.get(path).text and " style=" not in c.get(path).text, "no inline script or style"
    # no-referrer would make Chromium send "Origin: null" with the pages' own forms, which the Origin check refuses
    assert c.get("/").headers["referrer-policy"] == "same-origin"
    for icon in ("/static/favicon.svg", "/favicon.ico"):
        assert c.get(icon).status_code == 200, "a browser asks for the icon: no 404 in its console"


# ------------------------------------------------------------------------------ agents, replays by id only
@pytest.mark.parametrize("seat", ["pimc:n=100000", "mlp:checkpoint=/etc/passwd", "__import__('os')", "Human", ""])
def test_agents_come_from_the_menu_by_id_only(c, seat):
    n = len(c.app.app.state.games.games)
    refused(c.post("/games", data={"game": "block_v0", "seat0": "human", "seat1": seat}, headers=ORIGIN), 400,
            "seat1")
    assert len(c.app.app.state.games.games) == n


@pytest.mark.parametrize("name", ["../secret", "..", ".hidden", "a/b", "nosuch", "x" * 200, "%2e%2e%2fsecret"])
def test_replays_by_id_only_inside_the_folder(c, replays, name):
    (replays.parent / "secret.jsonl").write_text("{}\n")
    r = c.get(f"/replays/{name}/0")
    assert r.status_code == 404 and "Traceback" not in r.text


def test_a_bad_or_oversized_replay_file_is_shown_as_text(c, replays):
    from domino_training.web import app as web_app

    (replays / "broken.jsonl").write_text('{"format": "domino-replay/1"}\n')
    message = refused(c.get("/replays/broken/0"), 422, "broken line 1", "missing")
    assert str(replays) not in message, "the message names the replay by its id, not the server's path"
    (replays / "big.jsonl").write_text(" " * (web_app.REPLAY_CAP + 1))
    refused(c.get("/replays/big/0"), 422, "bytes")
    (replays / "binary.jsonl").write_bytes(b"\xff\xfe\x00")
    refused(c.get("/replays/binary/0"), 422, "UTF-8")
    path = new_game(c, "draw_v0", ["human", "greedy"], seed=1)
    live = game_of(c, path)
    while not live.over:
        live.play(0, live.legal(0)[0][0], live.version)
        live.advance()
    line = json.loads(live.replay().to_line())
    line["steps"][0]["action"] = (line["steps"][0]["action"] + 1) % live.game.num_actions
    line["config"]["num_players"] = 2
    (replays / "tampered.jsonl").write_text(json.dumps(line) + "\n")
    refused(c.get("/replays/tampered/0?step=3"), 422, "step 0")
    line["config"]["num_players"] = 7
    (replays / "badconfig.jsonl").write_text(json.dumps(line) + "\n")
    refused(c.get("/replays/badconfig/0"), 422, "num_players")


def test_untrusted_text_is_escaped(c, replays):
    """A replay's agent names and an operator's agent spec are text: the templates escape them."""
    path = new_game(c, "draw_v0", ["human", "greedy"], seed=1)
    live = game_of(c, path)
    while not live.over:
        live.play(0, live.legal(0)[0][0], live.version)
        live.advance()
    line = json.loads(live.replay().to_line())
    line["agents"] = ['<img src=x onerror="alert(1)">', "</td><script>alert(2)</script>"]
    (replays / "hostile.jsonl").write_text(json.dumps(line) + "\n")
    html = c.get("/replays/hostile/0").text
    assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in html and "<img src=x" not in html
    assert "<script>alert(2)" not in html and "&lt;script&gt;alert(2)" in html
    hostile = client(Settings(menu={"random": "random", "evil": "random<script>alert(3)</script>"}))
    page = hostile.get("/").text
    assert "<script>alert(3)" not in page and "&lt;script&gt;alert(3)&lt;/script&gt;" in page


# ------------------------------------------------------------------------------ statuses
def test_unknown_games_and_pages_are_404(c):
    refused(c.get("/games/nosuchgame"), 404, "nosuchgame")
    refused(c.post("/games/nosuchgame/move", data={"seat": "0", "version": "0", "action": "1"}, headers=ORIGIN), 404)
    refused(c.get("/nowhere"), 404)
    refused(c.get("/replays/nosuch/0"), 404)


def test_not_your_turn_and_a_stale_move_are_409_and_change_nothing(c, game):
    path, live = game
    html = c.get(path).text
    before = snapshot(live)
    refused(c.post(path + "/move", data={"seat": "1", "version": version(html), "action": moves(html)[0]},
                   headers=ORIGIN), 409, "not your turn")
    assert unchanged(live, before)
    ok = c.post(path + "/move", data={"seat": "0", "version": version(html), "action": moves(html)[0]},
                headers=ORIGIN, follow_redirects=False)
    assert ok.status_code == 303
    if live.over:
        pytest.fail("seed 21 should leave a game to play after one move")
    before = snapshot(live)
    again = c.post(path + "/move", data={"seat": "0", "version": version(html), "action": moves(html)[0]},
                   headers=ORIGIN)  # the double click: the same form again
    refused(again, 409, "stale")
    assert unchanged(live, before)


def test_an_illegal_move_is_422_naming_the_legal_ones(c, game):
    path, live = game
    html = c.get(path).text
    legal = live.legal(0)
    illegal = next(a for a in range(live.game.num_actions) if a not in dict(legal))
    before = snapshot(live)
    message = refused(c.post(path + "/move", data={"seat": "0", "version": version(html), "action": str(illegal)},
                             headers=ORIGIN), 422, "illegal", live.game.describe_action(illegal))
    for _, name in legal:
        assert name in message
    held = set(live.table(0).seats[0].tiles)
    from domino_envs.tiles import tile_id
    stuck = [tile_id(*t) for t in held if not any(int(live.game.action_table().tile[a]) == tile_id(*t)
                                                  for a, _ in legal)]
    if stuck:
        refused(c.post(path + "/move", data={"seat": "0", "version": version(html), "tile": str(stuck[0])},
                       headers=ORIGIN), 422, "illegal")
    assert unchanged(live, before)


@pytest.mark.parametrize("fields, word", [
    ({"seat": "x", "version": "0", "action": "1"}, "seat"),
    ({"seat": "0", "version": "-1", "action": "1"}, "version"),
    ({"seat": "0", "version": "0", "action": "99999"}, "action"),
    ({"seat": "0", "version": "0"}, "tile"),
    ({"seat": "5", "version": "0", "action": "1"}, "seat"),
    ({"version": "0", "action": "1"}, "seat"),
])
def test_a_bad_move_field_is_400(c, game, fields, word):
    path, live = game
    before = snapshot(live)
    refused(c.post(path + "/move", data=fields, headers=ORIGIN), 400, word)
    assert unchanged(live, before)


@pytest.mark.parametrize("fields, word", [
    ({"game": "chess_v0", "seat0": "human", "seat1": "random"}, "game"),
    ({"game": "block_v0", "seat0": "human"}, "seat1"),
    ({"game": "block_v0", "seat0": "human", "seat1": "random", "rule.nosuch": "1"}, "nosuch"),
    ({"game": "block_v0", "seat0": "human", "seat1": "random", "rule.num_players": "9"}, "num_players"),
    ({"game": "block_v0", "seat0": "human", "seat1": "random", "seed": "2e9"}, "seed"),
    ({"game": "block_v0", "seat0": "human", "seat1": "random", "seed": str(2**64)}, "seed"),
    ({"game": "block_v0", "seat0": "human", "seat1": "random", "deal": "-3"}, "deal"),
    ({"game": "block_v0", "seat0": "human", "seat1": "random", "rotation": "2"}, "rotation"),
])
def test_a_bad_new_game_field_is_400(c, fields, word):
    n = len(c.app.app.state.games.games)
    refused(c.post("/games", data=fields, headers=ORIGIN), 400, word)
    refused(c.get("/new?" + "&".join(f"{k}={v}" for k, v in fields.items() if k == "game" or k.startswith("rule."))),
            400) if word in ("game", "nosuch", "num_players") else None
    assert len(c.app.app.state.games.games) == n


def test_bad_views_and_hints_are_refused(c, game):
    path, live = game
    before = snapshot(live)
    refused(c.get(path + "?view=full"), 400, "agents only")
    refused(c.get(path + "?view=1"), 400, "not your seat")
    refused(c.get(path + "?hint=everything"), 400, "hint")
    refused(c.post(path + "/step", data={}, headers=ORIGIN), 409, "human")
    refused(c.get(path + "/replay"), 409, "over")
    assert unchanged(live, before)


def test_past_max_games_is_503(tmp_path):
    c = client(Settings(data_dir=tmp_path, max_games=2))
    new_game(c, "draw_v0", ["human", "random"], seed=1)
    new_game(c, "draw_v0", ["human", "random"], seed=2)
    refused(c.post("/games", data={"game": "draw_v0", "seat0": "human", "seat1": "random"}, headers=ORIGIN), 503,
            "--max-games 2")
    c.app.app.state.games.settings.idle_seconds = 0.0  # every game idle: they expire at the next new game
    new_game(c, "draw_v0", ["human", "random"], seed=3)
    assert len(c.app.app.state.games.games) == 1


def test_an_unexpected_error_is_a_500_page_without_a_traceback(c, game, monkeypatch):
    path, live = game
    from domino_training.tools.live import LiveGame

    def broken(self, seat, search=False):
        raise RuntimeError("secret internals at /srv/x.py line 3")

    monkeypatch.setattr(LiveGame, "hints", broken)
    r = c.get(path + "?hint=policy")
    message = refused(r, 500, "internal error")
    assert "secret internals" not in r.text and "RuntimeError" not in r.text and message


# ------------------------------------------------------------------------------ any field at all
FIELD = st.one_of(st.none(), st.text(max_size=12), st.integers(-3, 2**65).map(str),
                  st.sampled_from(["0", "1", "", " 1", "1.0", "0x1", "１", "human", "full", "none", "-0"]))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seat=FIELD, ver=FIELD, action=FIELD, tile=FIELD)
def test_any_move_fields_get_a_status_and_a_refusal_changes_nothing(c, seat, ver, action, tile):
    path = new_game(c, "draw_v0", ["human", "greedy"], seed=4) if not hasattr(c, "_fuzz") else c._fuzz
    c._fuzz = path
    live = game_of(c, path)
    before = snapshot(live)
    data = {k: v for k, v in (("seat", seat), ("version", ver), ("action", action), ("tile", tile)) if v is not None}
    r = c.post(path + "/move", data=data, headers=ORIGIN, follow_redirects=False)
    assert r.status_code in (200, 303, 400, 409, 422), r.text[-300:]
    assert "Traceback" not in r.text
    if r.status_code not in (303,):
        assert unchanged(live, before)
    if live.over:
        del c._fuzz


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fields=st.dictionaries(st.sampled_from(["game", "seat0", "seat1", "seed", "deal", "rotation", "rule.max_pip",
                                               "rule.num_players", "rule.x"]), FIELD.filter(lambda v: v is not None),
                              max_size=6))
def test_any_new_game_fields_get_a_status(c, fields):
    r = c.post("/games", data=fields, headers=ORIGIN, follow_redirects=False)
    assert r.status_code in (303, 400, 503), r.text[-300:]
    assert "Traceback" not in r.text
    games = c.app.app.state.games
    if r.status_code == 303:  # keep room for the other tests
        with games.lock:
            games.games.pop(r.headers["location"].rsplit("/", 1)[-1], None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(view=FIELD, hint=FIELD, step=FIELD, name=st.text(max_size=20))
def test_any_query_fields_get_a_status(c, view, hint, step, name):
    params = {k: v for k, v in (("view", view), ("hint", hint), ("step", step)) if v is not None}
    from urllib.parse import quote

    if not hasattr(c, "_watched"):
        c._watched = new_game(c, "block_v0", ["greedy", "random"], seed=6)
        c._played = new_game(c, "block_v0", ["human", "greedy"], seed=6)
    watched, played = game_of(c, c._watched), game_of(c, c._played)
    before = [snapshot(watched), snapshot(played)]
    for url in ("/", "/new", "/results", "/replays", f"/replays/{quote(name, safe='')}/0", c._watched, c._played,
                c._watched + "/replay", c._played + "/replay", f"/games/{quote(name, safe='')}"):
        r = c.get(url, params=params)
        assert r.status_code in (200, 400, 404, 405, 409, 422), (url, r.status_code, r.text[-300:])
        assert "Traceback" not in r.text
    assert unchanged(watched, before[0]) and unchanged(played, before[1]), "a GET moves nothing"


@pytest.mark.parametrize("argv, word", [(["--port", "99999"], "--port"), (["--agent", "nosuch"], "nosuch"),
                                        (["--max-games", "0"], "--max-games"), (["--bogus"], "--bogus"),
                                        (["--token", "short"], "--token")])
def test_domino_serve_refuses_a_bad_flag_in_one_line(capsys, argv, word):
    from domino_training.cli import main

    assert main(["serve", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("domino serve: error: ") and word in err


def test_the_same_move_posted_twice_at_once_is_played_once(c):
    """A double click that reaches the server twice at the same moment: one goes through, the other
    finds the version moved on (409, checked under the game's lock with the move); the row holds one move."""
    import threading

    for seed in range(5):
        path = new_game(c, "draw_v0", ["human", "pimc16"], seed=30 + seed)
        live = game_of(c, path)
        html = c.get(path).text
        fields = {"seat": "0", "version": version(html), "action": moves(html)[0]}
        v = live.version
        codes = []
        go = threading.Barrier(2)

        def post(go, codes, path, fields):
            go.wait()
            codes.append(c.post(path + "/move", data=fields, headers=ORIGIN, follow_redirects=False).status_code)

        threads = [threading.Thread(target=post, args=(go, codes, path, fields)) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(codes) == [303, 409], codes
        assert [e["seat"] for e in live.events[v:]].count(0) == 1, "the human's move was applied once"
