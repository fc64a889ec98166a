"""The table as SVG: the same scene as the PNG pictures (pictures.scene), painted as SVG text, without Pillow.

One layout, two painters: pictures.py lays a described table out as shapes and paints them with
Pillow; this module writes the same shapes as SVG elements, so a tile sits at the same place in
both (coordinates are the scene's, pixels at twice the PNG's size; the viewBox maps them onto a
WIDTH x HEIGHT picture).

Safe to inline in a page served with ``Content-Security-Policy: default-src 'self'``: no script,
no style element or attribute (colours are presentation attributes), no link or external
reference. Every text (titles, seat labels such as agent names, facts) is XML-escaped, characters
XML cannot hold dropped: labels are untrusted input.

Hooks for a page: each piece is a ``<g>`` whose class names it and whose data attributes say
whose and which tile it is, with a ``<title>`` naming it:
  ``g.hand[data-seat][data-tile]``  a face-up tile in a seat's hand (the viewer's, or every seat's
                                    when the full table is drawn); data-tile is the engine's tile id
                                    (``tiles.tile_id(a, b)``; Magic-7: the card id, 52 a joker)
  ``g.back[data-seat]``             a face-down tile (no id: nothing about it is drawn)
  ``g.killed``, ``g.line``, ``g.card``   a killed tile, a tile in the line, a card in Magic-7's rows
  ``g.seat[data-seat]``             a seat's panel
The drawing holds only what the described table holds: a hidden hand is described by its count.
"""
from __future__ import annotations

import html
import re

from .pictures import _BG, _SS, HEIGHT, WIDTH, Ellipse, Group, Line, Polygon, RRect, Table, Text, describe, scene

_NOT_XML = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_ANCHOR_X = {"l": "start", "m": "middle", "r": "end"}
_ANCHOR_Y = {"a": "hanging", "m": "central", "d": "text-after-edge"}


def escape(text) -> str:
    """`text` safe inside an XML element or a quoted attribute: markup escaped, characters XML 1.0
    cannot hold (control characters, lone surrogates) dropped."""
    return html.escape(_NOT_XML.sub("", str(text)), quote=True)


def _num(v: float) -> str:
    return f"{v:.1f}".removesuffix(".0")


def _colour(c) -> str:
    return "none" if c is None else "#{:02x}{:02x}{:02x}".format(*c)


def _shape(s) -> str:
    if isinstance(s, RRect):
        x0, y0, x1, y1 = s.rect
        if s.outline is None:
            inset, stroke = 0.0, ""
        else:  # Pillow draws the outline inside the edge; an SVG stroke is centred on it
            inset = s.width / 2
            stroke = f' stroke="{_colour(s.outline)}" stroke-width="{_num(s.width)}"'
        r = max(0.0, s.radius - inset)
        return (f'<rect x="{_num(x0 + inset)}" y="{_num(y0 + inset)}" width="{_num(max(0.0, x1 - x0 - 2 * inset))}" '
                f'height="{_num(max(0.0, y1 - y0 - 2 * inset))}" rx="{_num(r)}" fill="{_colour(s.fill)}"{stroke}/>')
    if isinstance(s, Ellipse):
        x0, y0, x1, y1 = s.box
        return (f'<ellipse cx="{_num((x0 + x1) / 2)}" cy="{_num((y0 + y1) / 2)}" rx="{_num((x1 - x0) / 2)}" '
                f'ry="{_num((y1 - y0) / 2)}" fill="{_colour(s.fill)}"/>')
    if isinstance(s, Polygon):
        pts = " ".join(f"{_num(x)},{_num(y)}" for x, y in s.points)
        return f'<polygon points="{pts}" fill="{_colour(s.fill)}"/>'
    if isinstance(s, Line):
        x0, y0, x1, y1 = s.xy
        return (f'<line x1="{_num(x0)}" y1="{_num(y0)}" x2="{_num(x1)}" y2="{_num(y1)}" '
                f'stroke="{_colour(s.fill)}" stroke-width="{_num(s.width)}"/>')
    if isinstance(s, Text):
        x, y = s.xy
        return (f'<text x="{_num(x)}" y="{_num(y)}" font-size="{int(s.size * _SS)}" fill="{_colour(s.fill)}" '
                f'text-anchor="{_ANCHOR_X[s.anchor[0]]}" dominant-baseline="{_ANCHOR_Y[s.anchor[1]]}">'
                f'{escape(s.text)}</text>')
    if isinstance(s, Group):
        attrs = "".join(f' data-{k}="{escape(v)}"' for k, v in s.attrs.items())
        title = f"<title>{escape(s.label)}</title>" if s.label else ""
        return f'<g class="{s.kind}"{attrs}>{title}' + "".join(_shape(c) for c in s.items) + "</g>"
    raise TypeError(f"not a scene shape: {s!r}")


def table_svg(table: Table) -> str:
    """The SVG of a described table (pictures.describe): an ``<svg>`` element, WIDTH x HEIGHT, that
    stands alone as a file or inline in a page."""
    body = "".join(_shape(s) for s in scene(table))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH * _SS} {HEIGHT * _SS}" width="{WIDTH}" '
            f'height="{HEIGHT}" role="img" xml:space="preserve" font-family="Liberation Sans, Arial, Helvetica, sans-serif" class="domino-table">'
            f'<title>{escape(table.title)}</title><rect width="100%" height="100%" fill="{_colour(_BG)}"/>{body}</svg>')


def picture_svg(game, state, viewer=None) -> str:
    """The SVG of `state` from `viewer`: a seat (its hand face up), "full" (every hand) or None (none)."""
    return table_svg(describe(game, state, viewer))
