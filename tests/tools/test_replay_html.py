"""``domino render --html FILE`` (training/tools/replay_html.py): one self-contained HTML replay of a
saved game or of a game agents play, every position as SVG from each view, the move log, replay
text escaped, nothing fetched. (tests/web/test_browser.py opens one in Chromium and steps through it.)"""
from __future__ import annotations

import base64
import gzip
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

from domino_envs import make_game
from domino_envs.core import H_DONE, H_TURN
from domino_envs.replay import Recorder, load, save
from domino_training import cli

HOSTILE = "<img src=x onerror=alert(1)>&bob"


class _Tags(HTMLParser):
    """The page's tags with their attributes, and the text of each <script>."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def _page(path):
    text = path.read_text(encoding="utf-8")
    tags = _Tags()
    tags.feed(text)
    packed = tags.scripts[0]  # <script id="frames" type="application/octet-stream">
    data = json.loads(gzip.decompress(base64.b64decode(packed)))
    return text, tags, data


def write_replay(path, game_name="block_v0", seed=2, agents=("greedy", HOSTILE), **config):
    """A finished game of first-legal moves saved as a one-game replay file (agents labelled as given)."""
    game = make_game(game_name, **config)
    state = game.new_state()
    game.reset(state, seed)
    rec = Recorder(game, agents=list(agents))
    rec.start(state, seed)
    while not state[H_DONE]:
        seat = int(state[H_TURN])
        action = game.legal_actions(state)[0]
        game.step(state, action)
        rec.step(seat, action, state)
    save(path, [rec.finish(state)])
    return path


def test_html_of_a_saved_replay(tmp_path, capsys):
    path = write_replay(tmp_path / "games.jsonl")
    rep = load(path)[0]
    out = tmp_path / "out" / "game.html"
    assert cli.main(["render", "--replay", str(path), "--html", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    text, tags, data = _page(out)
    n = len(rep.steps) + 1
    assert data["n"] == n and sorted(data["frames"]) == ["0", "1", "full"]  # the open table and each seat's
    for frames in data["frames"].values():
        assert len(frames) == n and len(set(frames)) > n // 2
        for svg in frames:
            ET.fromstring(svg)
    assert data["to_act"][-1] is None and data["to_act"][0] == rep.steps[0].seat
    log = [a for t, a in tags.tags if t == "li" and "data-step" in a]
    assert [int(a["data-step"]) for a in log] == list(range(1, n))
    for st in rep.steps:
        assert f"seat {st.seat}: {st.name}" in text
    # self-contained: nothing fetched, no link out; the hostile agent name shown as text only
    assert not [a for t, a in tags.tags if "src" in a or "href" in a or t in ("link", "iframe", "img")]
    assert HOSTILE not in text and "&lt;img src=x onerror=alert(1)&gt;&amp;bob" in text
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text)
    ids = [a["id"] for _, a in tags.tags if "id" in a]
    assert {"first", "prev", "play", "next", "last", "step", "view", "frame", "log"} <= set(ids)
    assert len(ids) == len(set(ids))


def test_html_of_a_game_agents_play_from_one_seats_view(tmp_path):
    out = tmp_path / "g.html"
    assert cli.main(["render", "sum7_v0", "--seed", "3", "--agent", "greedy", "--seat", "1", "--html", str(out)]) == 0
    _, tags, data = _page(out)
    assert list(data["frames"]) == ["1"] and data["to_act"][-1] is None  # played to the end
    for svg in data["frames"]["1"]:
        seats = {g.get("data-seat") for g in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}g")
                 if g.get("class") == "hand"}
        assert seats <= {"1"}, "another seat's hand drawn face up"
    assert len([a for t, a in tags.tags if t == "li" and "data-step" in a]) == data["n"] - 1
    out2 = tmp_path / "g2.html"
    assert cli.main(["render", "sum7_v0", "--seed", "3", "--moves", "4", "--full", "--html", str(out2)]) == 0
    _, _, data = _page(out2)
    assert data["n"] == 5 and list(data["frames"]) == ["full"] and data["to_act"][-1] is not None


@pytest.mark.parametrize("argv, message", [
    (["draw_v0", "--out", "x.png", "--html", "x.html"], "one of them"),
    (["draw_v0", "--html", "x.png"], ".html"),
    (["draw_v0", "--seat", "3", "--html", "x.html"], "--seat 3"),
    (["--html", "x.html"], "GAME"),
    (["--replay", "missing.jsonl", "--html", "x.html"], "missing.jsonl"),
])
def test_bad_html_arguments_are_one_line_and_exit_2(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["render", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and err.startswith("domino render: error:")
    assert not list(tmp_path.iterdir())
