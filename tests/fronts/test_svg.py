"""The SVG painter (domino_envs/svg.py): the same scene as the PNG (tiles where the PNG has them),
well-formed XML holding what the picture shows, hostile labels escaped, nothing a page's CSP
refuses, no hidden tile drawn, and no Pillow needed."""
from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domino_envs import make_game, pictures
from domino_envs.pictures import RowsPlay, describe, draw_table
from domino_envs.svg import picture_svg, table_svg
from domino_envs.tiles import tile_id
from tests.fronts.test_pictures import CASES, _position

NS = "{http://www.w3.org/2000/svg}"


def _parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == NS + "svg"
    return root


def _groups(root, kind):
    return [g for g in root.iter(NS + "g") if g.get("class") == kind]


def _texts(root) -> list[str]:
    return [t.text or "" for t in root.iter(NS + "text")]


def _body(g) -> tuple[float, float, float, float]:
    """A piece's box from its SVG: the second rect (the first is its shadow), the stroke's inset undone."""
    r = g.findall(NS + "rect")[1]
    inset = float(r.get("stroke-width", 0)) / 2
    x, y, w, h = (float(r.get(k)) for k in ("x", "y", "width", "height"))
    return x - inset, y - inset, x + w + inset, y + h + inset


@pytest.mark.parametrize("viewer", [None, 0, "full"])
@pytest.mark.parametrize("case", list(CASES))
def test_svg_is_xml_holding_what_the_png_shows(case, viewer):
    game, state = _position(case)
    table = describe(game, state, viewer)
    root = _parse(table_svg(table))
    texts = _texts(root)
    assert table.title in texts and root.find(NS + "title").text == table.title
    for k, seat in enumerate(table.seats):
        assert any(t.startswith(seat.label) for t in texts), seat.label
        for line in seat.lines:
            assert any(line in t for t in texts), line
        backs = [g for g in _groups(root, "back") if g.get("data-seat") == str(k)]
        hand = [g for g in _groups(root, "hand") if g.get("data-seat") == str(k)]
        if seat.tiles is None:
            assert len(backs) == seat.count + seat.killed and not hand
        else:
            magic7 = isinstance(table.play, RowsPlay)
            want = [int(t) if magic7 else tile_id(*t) for t in seat.tiles]
            assert [int(g.get("data-tile")) for g in hand] == want and not backs
    if isinstance(table.play, RowsPlay):
        laid = sum(hi - lo + 1 for lo, hi in table.play.rows if lo) + len(table.play.waiting)
        assert len(_groups(root, "card")) == laid
    elif table.play is not None:
        line = _groups(root, "line")
        assert len(line) == len(table.play.moves) + 1
        assert sorted(int(g.get("data-tile")) for g in line) == sorted(
            [tile_id(*table.play.center)] + [tile_id(i, o) for _, i, o in table.play.moves])


@pytest.mark.parametrize("case", ["block", "racehorse_branches", "magic7_joker_killed", "draw_long_line"])
def test_svg_pieces_lie_where_the_png_draws_them(case):
    """Each piece's box in the SVG, scaled to the PNG, covers that piece in the PNG: a face-down tile's
    middle is the back's colour, a face-up domino's edge ivory (one layout, two painters)."""
    game, state = _position(case)
    table = describe(game, state, 1)
    img = draw_table(table).astype(int)
    root = _parse(table_svg(table))
    checked = 0
    for kind in ("back", "hand", "line"):
        for g in _groups(root, kind):
            x0, y0, x1, y1 = (v / pictures._SS for v in _body(g))
            if kind == "back":
                x, y, want = (x0 + x1) / 2, y0 + (y1 - y0) * 0.2, pictures._BACK  # off a killed one's cross
            elif isinstance(table.play, RowsPlay):  # a card: its rank is drawn at the top, its corner is ivory
                x, y, want = x0 + (x1 - x0) * 0.15, y1 - (y1 - y0) * 0.08, pictures._IVORY
            else:  # the first half, diagonally between its middle and its top-left pip: bare ivory
                off = min(x1 - x0, y1 - y0) * 0.135
                vertical = y1 - y0 > x1 - x0
                x, y = ((x0 + x1) / 2, y0 + (y1 - y0) / 4) if vertical else (x0 + (x1 - x0) / 4, (y0 + y1) / 2)
                x, y, want = x - off, y - off, pictures._IVORY
            px = img[int(round(y)), int(round(x))]
            assert np.abs(px - np.array(want)).max() < 40, (kind, g.get("data-tile"), (x, y), px, want)
            checked += 1
    assert checked >= 8


HOSTILE = "<script>alert('x')</script> & \"quoted\" ]]> \x00\x07 <b>Bob</b>"


def test_a_hostile_label_is_escaped():
    game, state = _position("block")
    table = describe(game, state, 0)
    table.seats[1].label = HOSTILE
    table.seats[0].lines.append(HOSTILE)
    table.info.append(HOSTILE)
    svg = table_svg(table)
    root = _parse(svg)
    assert "<script" not in svg and "<b>" not in svg
    assert not [e for e in root.iter() if e.tag in (NS + "script", NS + "b", "script", "b")]
    clean = HOSTILE.replace("\x00", "").replace("\x07", "")
    texts = _texts(root)
    assert clean in texts and any(clean in t for t in texts if t != clean)
    assert [g for g in _groups(root, "seat") if g.find(NS + "title").text == clean]


@settings(max_examples=60, deadline=None)
@given(label=st.text(max_size=40))
def test_any_label_gives_well_formed_svg_that_shows_it(label):
    game, state = _position("draw")
    table = describe(game, state, 0)
    table.seats[1].label = label
    root = _parse(table_svg(table))
    shown = "".join(" " if ch in "\t\n\r" else ch for ch in label
                    if ch in "\t\n\r" or " " <= ch <= "\ud7ff" or "\ue000" <= ch <= "\ufffd" or ch >= "\U00010000")
    assert shown in _texts(root)


@pytest.mark.parametrize("case", ["block", "magic7_joker_killed", "pete_branches"])
def test_nothing_a_strict_csp_refuses(case):
    """No script, no style element or attribute, no link, no external reference: inline under
    ``default-src 'self'``."""
    game, state = _position(case)
    svg = picture_svg(game, state, "full")
    root = _parse(svg)
    for e in root.iter():
        assert e.tag.removeprefix(NS) not in ("script", "style", "a", "image", "use", "foreignObject")
        assert "style" not in e.attrib and not [k for k in e.attrib if k.startswith("on") or k.endswith("href")]
    assert "url(" not in svg and "javascript:" not in svg


def test_a_seats_svg_is_the_same_whatever_the_hidden_tiles_are():
    """No hidden information: a seat's SVG is byte-identical after the tiles it cannot see are
    resampled (sample_hidden), over positions of every game."""
    rng = np.random.default_rng(5)
    for case in CASES:
        game, state = _position(case)
        for seat in range(game.num_players):
            svg = picture_svg(game, state, seat)
            for _ in range(3):
                other = game.sample_hidden(state, seat, rng)
                assert picture_svg(game, other, seat) == svg, (case, seat)
        full = picture_svg(game, state, "full")  # the resampling changes what a seat may not see
        assert any(picture_svg(game, game.sample_hidden(state, seat, rng), "full") != full
                   for seat in range(game.num_players) for _ in range(3)), case


def test_the_svg_painter_needs_no_pillow():
    code = (
        "import sys\nsys.modules['PIL'] = None\n"
        "from domino_envs import make_game\nfrom domino_envs.svg import picture_svg\n"
        "from domino_training.tools.render import play_position\n"
        "g = make_game('block_v0'); s, _ = play_position(g, 1, 6)\n"
        "out = picture_svg(g, s, 0)\nassert out.startswith('<svg') and 'class=\"hand\"' in out\nprint('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-2000:]


def test_a_game_with_no_tile_played_yet():
    game = make_game("draw_v0")
    state = game.new_state()
    game.reset(state, 3)
    root = _parse(picture_svg(game, state, 0))
    assert "no tile played yet" in _texts(root) and not _groups(root, "line")
    assert len(_groups(root, "hand")) == describe(game, state, 0).seats[0].count
