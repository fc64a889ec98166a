"""Pictures of a position: the table as a person lays it out, as an RGB image (numpy uint8, H x W x 3).

What is drawn, and why: a reader (or a researcher watching an agent) should recognise the game at
a glance, so the picture is a table seen from above rather than a chart. The line games (Draw,
Block, Seven-Toed Pete, Racehorse, Sum 7) show domino tiles with pips in the standard positions,
laid from the first tile outwards along each arm, doubles crosswise, the spinner's branches going
up and down from it (marked with a red frame), and the open ends outlined in gold (a Sum 7 side
closed by a zero trap in red). Magic-7 shows its four suit rows, one column per rank with the 7s
in the middle, cards lying on a joker framed in purple, a joker still waiting for its card as a
joker tile naming it. Around the felt sits one panel per seat: its tile count (face-down tiles),
its score / chips / penalties, Magic-7's killed tiles (crossed out), and the seat to act in gold.
Only the viewer's own hand is drawn face up (the view ``render_mode="ansi"`` prints), or every
hand when the full table is asked for; a spectator sees none.

Layout algorithm: each arm lays its tiles in play order straight on while they fit the felt without
touching another tile, else snakes back (a corner tile, then the other way), the spinner's four arms
each bending to its own side; the largest tile size whose layout fits is used, centred.

What a game's picture shows is the engine's own description (`Game.describe_table`, filling in
the plain data of table.py), so this module draws every game without a branch on which one it is:
a line of dominoes, Magic-7's suit rows (its seats' tiles then drawn as cards), or an empty felt.

One layout, two painters: `scene` lays a described table out once as plain shapes (rounded
rectangles, lines, discs, polygons, texts, grouped per piece with its seat and tile id), with no
Pillow; `draw_table` paints them with Pillow and domino_envs/svg.py writes them as SVG.

Pillow is imported only inside the drawing functions (never by ``import domino_envs``, the vector
env or training); without it a drawing call raises `PillowMissingError`. The ``domino render``
command, which plays agents to a position first, is domino_training/tools/render.py.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .core import H_DONE, H_TURN
from .errors import ConfigError, PillowMissingError
from .registry import title
from .table import LinePlay, RowsPlay, Seat, Table  # noqa: F401 - what describe returns, importable from here too
from .tiles import tile_id

WIDTH, HEIGHT = 1024, 720  # every picture has this size (pixels)
_SS = 2  # drawn at twice the size, then downsampled: smooth pips and edges

# colours
_BG = (28, 22, 18)
_WOOD = (92, 58, 32)
_FELT = (22, 96, 58)
_FELT_DARK = (15, 70, 42)
_PANEL = (12, 58, 35)
_PANEL_LINE = (60, 128, 88)
_GOLD = (250, 200, 60)
_RED = (214, 48, 40)
_IVORY = (250, 246, 234)
_IVORY_EDGE = (120, 110, 95)
_PIP = (20, 24, 32)
_BACK = (34, 48, 74)
_TEXT = (238, 240, 232)
_MUTED = (170, 200, 180)
_JOKER = (122, 60, 170)
_SHADOW = (10, 40, 24)

def _pil():
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as err:
        raise PillowMissingError(
            "pictures (render_mode='rgb_array', domino render) need Pillow: pip install pillow "
            "(or pip install 'domino-envs[render]')") from err
    return Image, ImageDraw, ImageFont


# ------------------------------------------------------------------------------ what a table shows
def _viewer_arg(game, viewer):
    """None (spectator), "full" or a seat number, checked."""
    if viewer is None or viewer == "full":
        return viewer
    if isinstance(viewer, (bool, np.bool_)) or not isinstance(viewer, (int, np.integer)) \
            or not 0 <= viewer < game.num_players:
        raise ConfigError(f"{game.name}: viewer={viewer!r} must be a seat 0..{game.num_players - 1}, "
                          f"'full' (every hand face up) or None (no hand face up)")
    return int(viewer)


def describe(game, state: np.ndarray, viewer=None) -> Table:
    """What the picture of `state` shows, from `viewer`'s side (a seat, "full" or None): the seats,
    title and footer made here, the rest filled in by the engine (`Game.describe_table`)."""
    viewer = _viewer_arg(game, viewer)
    game._check_state(state)
    s = state
    n = game.num_players
    turn = -1 if s[H_DONE] else int(s[H_TURN])
    face_up = [viewer == "full" or viewer == k for k in range(n)]
    seats = [Seat(f"Seat {k}", 0, [], to_act=(k == turn), viewer=(viewer == k)) for k in range(n)]
    footer = " ".join(line for line in game.render(s, 0).splitlines() if line.startswith("over:"))
    table = Table(game.name, title(game.name), [], seats, _bottom(viewer), None, footer)
    game.describe_table(s, table, face_up)
    return table


def _bottom(viewer) -> int:
    """The seat drawn at the bottom: the viewer, else seat 0."""
    return viewer if isinstance(viewer, int) else 0


# ------------------------------------------------------------------------------ laying the line out
_DIRS = ((1, 0), (0, 1), (-1, 0), (0, -1))  # E S W N (screen y grows downwards)
_GAP = 0.1  # between neighbouring tiles, in tile half-lengths
_MIN_UNIT = 7  # smallest half-tile drawn, pixels: below it a crowded layout is laid on regardless


@dataclass
class _Tile:
    rect: tuple[float, float, float, float]  # x0 y0 x1 y1 in units (a tile is 2 x 1 units)
    pips: tuple[int, int]  # left/right, or top/bottom
    spinner: bool = False


class _NoFit(Exception):
    pass


class _Arm:
    def __init__(self, attach, d, drift, last_double=False):
        self.attach, self.d, self.main, self.drift = attach, d, d, drift
        self.turned = False
        self.last_double = last_double
        self.tiles: list[int] = []  # indices into the laid tiles


def _rect(attach, d, double):
    along, across = (1.0, 2.0) if double else (2.0, 1.0)
    cx = attach[0] + d[0] * (_GAP + along / 2)
    cy = attach[1] + d[1] * (_GAP + along / 2)
    w, h = (along, across) if d[0] else (across, along)
    return (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


def _pips_in_order(d, inner, outer):
    """(left, right) or (top, bottom) pips of a tile laid along d with `inner` towards where it came from."""
    return (inner, outer) if d[0] + d[1] > 0 else (outer, inner)


def _arm_lengths(play: LinePlay) -> dict[int, float]:
    """Length (units) of each arm laid out straight."""
    out: dict[int, float] = {}
    for arm, inner, outer in play.moves:
        out[arm] = out.get(arm, 0.0) + _GAP + (1.0 if inner == outer else 2.0)
    return out


def _lay_line(play: LinePlay, half_w: float, half_h: float, shift=(0.0, 0.0), strict: bool = True,
              last_resort: bool = False):
    """Tiles placed for a play area of +-half_w x +-half_h units around the point `shift` (the
    centre tile at the origin); _NoFit if they do not fit. Not `strict`: tiles may touch tiles
    already down (a crowded table of many spinners, where no strict layout fits); `last_resort`:
    a tile with no place inside the area is laid straight on anyway (the picture never fails)."""
    tiles: list[_Tile] = []
    eps = 0.02
    lo_x, hi_x, lo_y, hi_y = shift[0] - half_w, shift[0] + half_w, shift[1] - half_h, shift[1] + half_h

    def fits(r):
        if r[0] < lo_x or r[2] > hi_x or r[1] < lo_y or r[3] > hi_y:
            return False
        if not strict:
            return True
        for t in tiles:
            q = t.rect
            if r[0] < q[2] - eps and q[0] < r[2] - eps and r[1] < q[3] - eps and q[1] < r[3] - eps:
                return False
        return True

    a, b = play.center
    cdouble = a == b
    crect = (-0.5, -1.0, 0.5, 1.0) if cdouble else (-1.0, -0.5, 1.0, 0.5)
    if not fits(crect) and not last_resort:
        raise _NoFit
    centre_spinner = any(h == -1 for h, _, _ in play.branches.values())
    tiles.append(_Tile(crect, (a, b), centre_spinner))
    ex = 0.5 if cdouble else 1.0
    arms = {0: _Arm((-ex, 0.0), (-1, 0), (0, -1), cdouble), 1: _Arm((ex, 0.0), (1, 0), (0, 1), cdouble)}
    arms[0].tiles.append(0)
    arms[1].tiles.append(0)
    laid_dir: dict[tuple[int, int], tuple[int, int]] = {}  # (arm, index) -> direction it was laid in
    spinner_at = {(host, idx) for host, idx, _ in play.branches.values() if host >= 0}

    def open_branches(arm_id):
        host, idx, j = play.branches[arm_id]
        if host == -1:
            spin_tile, hd = 0, (1, 0)
            bdir, drift = ((0, -1), (1, 0)) if j == 0 else ((0, 1), (-1, 0))
        else:
            spin_tile = arms[host].tiles[idx + 1]
            hd = laid_dir[(host, idx)]
            bdir = ((0, -1), (0, 1))[j] if hd[0] else ((-1, 0), (1, 0))[j]
            drift = hd
        r = tiles[spin_tile].rect
        cx, cy = (r[0] + r[2]) / 2, (r[1] + r[3]) / 2
        arm = _Arm((cx + bdir[0] * 1.0, cy + bdir[1] * 1.0), bdir, drift, False)
        arm.tiles.append(spin_tile)
        arms[arm_id] = arm
        tiles[spin_tile].spinner = True

    def corner(arm, new_dir):
        ax, ay = arm.attach
        d = arm.d
        off = 1.0 if arm.last_double else 0.5
        return (ax - d[0] * 0.5 + new_dir[0] * off, ay - d[1] * 0.5 + new_dir[1] * off)

    for arm_id, inner, outer in play.moves:
        if arm_id not in arms:
            open_branches(arm_id)
        arm = arms[arm_id]
        double = inner == outer
        is_spinner = (arm_id, len(arm.tiles) - 1) in spinner_at
        back = (-arm.main[0], -arm.main[1])
        tries = []
        if arm.turned:
            tries.append((corner(arm, back), back, "back"))
            tries.append((arm.attach, arm.d, "straight"))
        else:
            tries.append((arm.attach, arm.d, "straight"))
            tries.append((corner(arm, arm.drift), arm.drift, "turn"))
        # crowded (many spinners): turn the other way, or set off in any free direction
        left_turn = (-arm.drift[0], -arm.drift[1])
        tries.append((corner(arm, left_turn), left_turn, "new"))
        tries += [(arm.attach, arm.d, "new_straight")]
        for attach, d, how in tries:
            # a double lies crosswise, but in line round a corner (a spinner always crosswise: its
            # branches leave from its two long ends)
            across = double and (how in ("straight", "new_straight") or is_spinner)
            r = _rect(attach, d, across)
            if fits(r) or last_resort and how == "new_straight":
                break
        else:
            raise _NoFit
        if how.startswith("new") and d != arm.main and (-d[0], -d[1]) != arm.main:
            arm.main, arm.drift, arm.turned = d, arm.main, False
        tiles.append(_Tile(r, _pips_in_order(d, inner, outer)))
        laid_dir[(arm_id, len(arm.tiles) - 1)] = d
        along = 1.0 if across else 2.0
        arm.attach = (attach[0] + d[0] * (_GAP + along), attach[1] + d[1] * (_GAP + along))
        arm.d = d
        arm.last_double = across
        arm.tiles.append(len(tiles) - 1)
        if how == "turn":
            arm.turned = True
        elif how == "back":
            arm.turned, arm.main = False, back
    for arm_id in play.branches:  # opened with no tile yet: still mark the spinner
        if arm_id not in arms and play.branches[arm_id][0] == -1:
            tiles[0].spinner = True
        elif arm_id not in arms:
            host, idx, _ = play.branches[arm_id]
            if host in arms and idx + 1 < len(arms[host].tiles):
                tiles[arms[host].tiles[idx + 1]].spinner = True
    return tiles, arms


def _end_marks(play: LinePlay, tiles, arms):
    """(rect, colour) of the open (gold) and closed (red) ends: the half of the end tile facing out."""
    marks = []
    for arm_id in sorted(play.open_arms | play.closed_arms):
        colour = _RED if arm_id in play.closed_arms else _GOLD
        arm = arms.get(arm_id)
        if arm is None:
            if arm_id in play.branches:
                host, idx, j = play.branches[arm_id]
                t = 0 if host == -1 else arms[host].tiles[idx + 1] if host in arms else None
                if t is None:
                    continue
                r = tiles[t].rect
                cy = (r[1] + r[3]) / 2
                cx = (r[0] + r[2]) / 2
                if r[3] - r[1] > r[2] - r[0]:
                    marks.append(((r[0], r[1], r[2], cy) if j == 0 else (r[0], cy, r[2], r[3]), colour))
                else:
                    marks.append(((r[0], r[1], cx, r[3]) if j == 0 else (cx, r[1], r[2], r[3]), colour))
            continue
        r = tiles[arm.tiles[-1]].rect
        d = arm.d
        if arm.last_double or len(arm.tiles) == 1 and r[2] - r[0] == r[3] - r[1]:
            marks.append((r, colour))
            continue
        if d[0]:
            cx = (r[0] + r[2]) / 2
            marks.append(((cx, r[1], r[2], r[3]) if d[0] > 0 else (r[0], r[1], cx, r[3]), colour))
        else:
            cy = (r[1] + r[3]) / 2
            marks.append(((r[0], cy, r[2], r[3]) if d[1] > 0 else (r[0], r[1], r[2], cy), colour))
    return marks


def _layout_line(play: LinePlay, box):
    """(tiles, marks, unit px, offset) fitting `box` (x0, y0, x1, y1 in pixels): the largest unit that fits."""
    w, h = box[2] - box[0], box[3] - box[1]
    lengths = _arm_lengths(play)
    centre_branches = sorted(a for a, (host, _, _) in play.branches.items() if host == -1)
    u = 40.0 * _SS
    strict = True
    while True:
        hw, hh = w / 2 / u, h / 2 / u
        # the centre tile placed off centre so that lopsided arms run straight as far as they can
        sx = max(-hw + 1, min(hw - 1, (lengths.get(1, 0.0) - lengths.get(0, 0.0)) / 2))
        sy = 0.0
        if centre_branches:
            up, down = (lengths.get(a, 0.0) for a in centre_branches)
            sy = max(-hh + 1, min(hh - 1, (down - up) / 2))
        smallest = u * 0.93 < _MIN_UNIT * _SS
        for shift in ((sx, sy), (0.0, 0.0)):
            try:
                tiles, arms = _lay_line(play, hw, hh, shift, strict)
                break
            except _NoFit:
                continue
        else:
            if not smallest:
                u *= 0.93
                continue
            if strict:  # no layout without touching tiles: the largest one that lets them touch
                strict, u = False, 40.0 * _SS
                continue
            tiles, arms = _lay_line(play, hw, hh, (0.0, 0.0), False, last_resort=True)
        x0 = min(t.rect[0] for t in tiles)
        x1 = max(t.rect[2] for t in tiles)
        y0 = min(t.rect[1] for t in tiles)
        y1 = max(t.rect[3] for t in tiles)
        ox = (box[0] + box[2]) / 2 - (x0 + x1) / 2 * u
        oy = (box[1] + box[3]) / 2 - (y0 + y1) / 2 * u
        return tiles, _end_marks(play, tiles, arms), u, (ox, oy)


# ------------------------------------------------------------------------------ the scene: what is drawn where
# The table is laid out once as a list of plain shapes in pixels at _SS x the final size (no Pillow);
# the Pillow painter below (`draw_table`) and the SVG painter (domino_envs/svg.py) draw the same list.
@dataclass
class RRect:
    """A rounded rectangle (x0, y0, x1, y1); the outline, if any, `width` pixels wide inside the edge."""
    rect: tuple
    radius: float
    fill: tuple | None = None
    outline: tuple | None = None
    width: int = 1


@dataclass
class Line:
    xy: tuple  # x0, y0, x1, y1
    fill: tuple
    width: int


@dataclass
class Ellipse:
    box: tuple  # x0, y0, x1, y1
    fill: tuple


@dataclass
class Polygon:
    points: list
    fill: tuple


@dataclass
class Text:
    """`size` is the font size at 1x; `anchor` as Pillow's: l/m/r then a (top), m (middle) or d (bottom)."""
    xy: tuple
    text: str
    size: float
    fill: tuple
    anchor: str = "la"


@dataclass
class Group:
    """A piece made of shapes: `kind` names it ("seat", "hand", "back", "line", "card", ...), `attrs` are
    its hooks (seat, tile id), `label` its accessible name, `rect` the piece's box."""
    kind: str
    items: list
    attrs: dict = field(default_factory=dict)
    label: str | None = None
    rect: tuple | None = None


_PIP_SPOTS = {
    0: [], 1: [(1, 1)], 2: [(0, 0), (2, 2)], 3: [(0, 0), (1, 1), (2, 2)],
    4: [(0, 0), (2, 0), (0, 2), (2, 2)], 5: [(0, 0), (2, 0), (1, 1), (0, 2), (2, 2)],
    6: [(0, 0), (0, 1), (0, 2), (2, 0), (2, 1), (2, 2)],
    7: [(0, 0), (0, 1), (0, 2), (1, 1), (2, 0), (2, 1), (2, 2)],
    8: [(0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1), (2, 2)],
    9: [(x, y) for x in range(3) for y in range(3)],
}
_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


def card_name(card: int) -> str:
    """'7H', '10C', 'JK' for a Magic-7 card id (52: a joker)."""
    return "JK" if card >= 52 else _RANKS[card % 13] + "CDHS"[card // 13]


def _approx_width(text: str, size: float) -> float:
    """A text's width without a font (the SVG scene): about half an em a character (Arial's metrics)."""
    return len(text) * size * _SS * 0.5


def _cross(rect) -> list:
    x0, y0, x1, y1 = rect
    w = max(2, int(min(x1 - x0, y1 - y0) * 0.12))
    return [Line((x0 + 2, y0 + 2, x1 - 2, y1 - 2), _RED, w), Line((x0 + 2, y1 - 2, x1 - 2, y0 + 2), _RED, w)]


def _frame_and_cross(rect, rad, frame, fw, crossed) -> list:
    """A piece's marks on top: a coloured frame of width fw around it, a red cross (killed)."""
    x0, y0, x1, y1 = rect
    out = []
    if frame is not None:
        out.append(RRect((x0 - fw / 2, y0 - fw / 2, x1 + fw / 2, y1 + fw / 2), rad + fw / 2, outline=frame, width=fw))
    if crossed:
        out += _cross(rect)
    return out


def _domino(rect, pips, face_up=True, frame=None, crossed=False) -> list:
    x0, y0, x1, y1 = rect
    w, h = x1 - x0, y1 - y0
    short = min(w, h)
    rad = max(1, short * 0.14)
    sh = max(1, short * 0.06)
    out: list = [RRect((x0 + sh, y0 + sh, x1 + sh, y1 + sh), rad, fill=_SHADOW)]
    if not face_up:
        out.append(RRect(rect, rad, fill=_BACK, outline=(90, 110, 150), width=max(1, int(short * 0.06))))
        if crossed:
            out += _cross(rect)
        return out
    out.append(RRect(rect, rad, fill=_IVORY, outline=_IVORY_EDGE, width=max(1, int(short * 0.05))))
    lw = max(1, int(short * 0.05))
    vertical = h > w
    if vertical:
        ym = (y0 + y1) / 2
        out.append(Line((x0 + short * 0.15, ym, x1 - short * 0.15, ym), _IVORY_EDGE, lw))
        halves = [(x0, y0, x1, ym), (x0, ym, x1, y1)]
    else:
        xm = (x0 + x1) / 2
        out.append(Line((xm, y0 + short * 0.15, xm, y1 - short * 0.15), _IVORY_EDGE, lw))
        halves = [(x0, y0, xm, y1), (xm, y0, x1, y1)]
    for (hx0, hy0, hx1, hy1), p in zip(halves, pips):
        side = min(hx1 - hx0, hy1 - hy0)
        r = side * (0.085 if p <= 6 else 0.075)
        step = side * 0.27
        cx, cy = (hx0 + hx1) / 2, (hy0 + hy1) / 2
        for gx, gy in _PIP_SPOTS[int(p)]:
            px, py = cx + (gx - 1) * step, cy + (gy - 1) * step
            if not vertical and p in (6,):  # a six lies in rows along a horizontal tile
                px, py = cx + (gy - 1) * step, cy + (gx - 1) * step
            out.append(Ellipse((px - r, py - r, px + r, py + r), _PIP))
    return out + _frame_and_cross(rect, rad, frame, max(2, int(short * 0.12)), crossed)


def _suit(cx, cy, size, suit: int) -> list:
    """A suit sign drawn with shapes (fonts may lack the glyphs): 0 clubs, 1 diamonds, 2 hearts, 3 spades."""
    s = size / 2
    col = _RED if suit in (1, 2) else _PIP
    if suit == 1:
        return [Polygon([(cx, cy - s), (cx + s * 0.72, cy), (cx, cy + s), (cx - s * 0.72, cy)], col)]
    if suit == 2:
        r = s * 0.5
        return [Ellipse((cx - 2 * r, cy - s * 0.75, cx, cy - s * 0.75 + 2 * r), col),
                Ellipse((cx, cy - s * 0.75, cx + 2 * r, cy - s * 0.75 + 2 * r), col),
                Polygon([(cx - 2 * r + r * 0.06, cy - s * 0.75 + r * 1.3), (cx + 2 * r - r * 0.06, cy - s * 0.75 + r * 1.3),
                         (cx, cy + s)], col)]
    if suit == 3:
        r = s * 0.5
        return [Ellipse((cx - 2 * r, cy + s * 0.5 - 2 * r, cx, cy + s * 0.5), col),
                Ellipse((cx, cy + s * 0.5 - 2 * r, cx + 2 * r, cy + s * 0.5), col),
                Polygon([(cx - 2 * r + r * 0.06, cy + s * 0.5 - r * 1.3), (cx + 2 * r - r * 0.06, cy + s * 0.5 - r * 1.3),
                         (cx, cy - s)], col),
                Polygon([(cx, cy + s * 0.2), (cx - s * 0.35, cy + s), (cx + s * 0.35, cy + s)], col)]
    r = s * 0.42
    out: list = [Ellipse((cx + ox - r, cy + oy - r, cx + ox + r, cy + oy + r), col)
                 for ox, oy in ((0, -s * 0.45), (-s * 0.48, s * 0.12), (s * 0.48, s * 0.12))]
    return out + [Polygon([(cx, cy), (cx - s * 0.35, cy + s), (cx + s * 0.35, cy + s)], col)]


def _star(cx, cy, r, col) -> Polygon:
    pts = []
    for i in range(10):
        ang = -math.pi / 2 + i * math.pi / 5
        rr = r if i % 2 == 0 else r * 0.45
        pts.append((cx + rr * math.cos(ang), cy + rr * math.sin(ang)))
    return Polygon(pts, col)


def _card(rect, card: int, frame=None, joker_corner=False, crossed=False, note=None) -> list:
    """A Magic-7 tile: rank over suit, or a joker (card >= 52)."""
    x0, y0, x1, y1 = rect
    w, h = x1 - x0, y1 - y0
    rad = max(1, w * 0.14)
    sh = max(1, w * 0.06)
    out: list = [RRect((x0 + sh, y0 + sh, x1 + sh, y1 + sh), rad, fill=_SHADOW)]
    if card >= 52:
        out += [RRect(rect, rad, fill=(236, 226, 248), outline=_JOKER, width=max(1, int(w * 0.08))),
                _star((x0 + x1) / 2, y0 + h * 0.38, w * 0.3, _JOKER),
                Text(((x0 + x1) / 2, y0 + h * 0.8), "JK", h / _SS * 0.26, _JOKER, "mm")]
    else:
        out.append(RRect(rect, rad, fill=_IVORY, outline=_IVORY_EDGE, width=max(1, int(w * 0.05))))
        suit, rank = divmod(card, 13)
        col = _RED if suit in (1, 2) else _PIP
        out.append(Text(((x0 + x1) / 2, y0 + h * 0.3), _RANKS[rank], h / _SS * 0.34, col, "mm"))
        out += _suit((x0 + x1) / 2, y0 + h * 0.7, min(w, h) * 0.42, suit)
        if joker_corner:
            k = w * 0.5
            out += [Polygon([(x1 - k, y0), (x1, y0), (x1, y0 + k)], _JOKER),
                    _star(x1 - k * 0.3, y0 + k * 0.3, k * 0.22, (255, 255, 255))]
    if note:
        out.append(Text(((x0 + x1) / 2, y1 + h * 0.04), note, h / _SS * 0.22, _GOLD, "ma"))
    return out + _frame_and_cross(rect, rad, frame, max(2, int(w * 0.08)), crossed)


def _triangle(x, y, size, col) -> Polygon:
    return Polygon([(x, y - size / 2), (x + size * 0.85, y), (x, y + size / 2)], col)


_SLOTS = {  # seat panel boxes (pixels at 1x)
    "bottom": (232, 598, 792, 700), "top": (232, 62, 792, 150),
    "top_left": (150, 62, 500, 150), "top_right": (524, 62, 874, 150),
    "left": (24, 240, 174, 480), "right": (850, 240, 1000, 480),
    "left_low": (24, 380, 174, 590), "left_high": (24, 160, 174, 370),
    "right_low": (850, 380, 1000, 590), "right_high": (850, 160, 1000, 370),
}
_SEATING = {  # relative seat (0 = the bottom seat, then in turn order) -> slot
    2: ["bottom", "top"], 3: ["bottom", "left", "right"], 4: ["bottom", "left", "top", "right"],
    5: ["bottom", "left", "top_left", "top_right", "right"],
    6: ["bottom", "left_low", "left_high", "top", "right_high", "right_low"],
}


def _flow(n_items, box_w, box_h, item_w, item_h, gap=0.15):
    """Scale, columns for n items of item_w x item_h laid in rows inside box (largest scale <= 1)."""
    scale = 1.0
    while scale > 0.2:
        w, h = item_w * scale, item_h * scale
        cols = max(1, int((box_w + gap * w) // (w * (1 + gap))))
        rows = -(-n_items // cols) if n_items else 1
        if rows * h * (1 + gap) - gap * h <= box_h:
            return scale, cols
        scale *= 0.9
    return scale, max(1, int((box_w + gap * item_w * scale) // (item_w * scale * (1 + gap))))


def _tile_hook(t, magic7: bool) -> tuple[int, str]:
    """(id, name) of a face-up tile: the engine's tile id and 'a-b' for a domino, the card id and '7H' for Magic-7."""
    if magic7:
        return int(t), card_name(int(t))
    a, b = (int(v) for v in t)
    return tile_id(a, b), f"{a}-{b}"


def _seat(seat: Seat, k: int, box, magic7: bool, measure) -> Group:
    S = _SS
    x0, y0, x1, y1 = (v * S for v in box)
    border = _GOLD if seat.to_act else _PANEL_LINE
    out: list = [RRect((x0, y0, x1, y1), 12 * S, fill=_PANEL, outline=border, width=(3 if seat.to_act else 1) * S)]
    pad = 8 * S
    name = seat.label + ("  (you)" if seat.viewer else "")
    out.append(Text((x0 + pad, y0 + pad), name, 15, _TEXT))
    if seat.to_act:
        label = "to play"
        tw = measure(label, 13)
        lx = x0 + pad + measure(name, 15) + 22 * S if x1 - x0 > 300 * S else x1 - pad - tw
        out += [_triangle(lx - 14 * S, y0 + pad + 8 * S, 10 * S, _GOLD), Text((lx, y0 + pad + 1 * S), label, 13, _GOLD)]
    count = f"{seat.count} tile" + ("" if seat.count == 1 else "s")
    if magic7:
        count = f"{seat.count} live" + (f", {seat.killed} killed" if seat.killed else "")
    facts = "  ".join([count] + seat.lines)
    if x1 - x0 > 300 * S:
        for i, line in enumerate([count] + seat.lines):
            out.append(Text((x0 + pad, y0 + pad + (22 + 16 * i) * S), line, 12, _MUTED))
    else:
        out.append(Text((x0 + pad, y0 + pad + 20 * S), facts, 12, _MUTED))
    group = Group("seat", out, {"seat": k}, name, (x0, y0, x1, y1))
    # the tiles: face up (viewer / full table) or backs; beside the text in a wide panel, below it in a narrow one
    if x1 - x0 > 300 * S:
        tx0, ty0, tx1, ty1 = x0 + 170 * S, y0 + pad, x1 - pad, y1 - pad
    else:
        tx0, ty0, tx1, ty1 = x0 + pad, y0 + pad + 40 * S, x1 - pad, y1 - pad
    items: list[tuple[str, object]] = []
    if seat.tiles is not None:
        items = [("up", t) for t in seat.tiles] + [("dead", t) for t in (seat.killed_tiles or [])]
    else:
        items = [("back", None)] * seat.count + [("deadback", None)] * seat.killed
    if not items:
        return group
    iw, ih = (34 * S, 46 * S) if magic7 else (30 * S, 60 * S)
    scale, cols = _flow(len(items), tx1 - tx0, ty1 - ty0, iw, ih)
    w, h = iw * scale, ih * scale
    for i, (kind, t) in enumerate(items):
        r, c = divmod(i, cols)
        rx, ry = tx0 + c * w * 1.15, ty0 + r * h * 1.15
        rect = (rx, ry, rx + w, ry + h)
        if kind in ("back", "deadback"):
            piece = Group("back", _domino(rect, (0, 0), face_up=False, crossed=kind == "deadback"), {"seat": k},
                          "a killed tile, face down" if kind == "deadback" else "a tile, face down", rect)
        else:
            tid, tname = _tile_hook(t, magic7)
            shapes = _card(rect, int(t), crossed=kind == "dead") if magic7 else _domino(rect, t)
            piece = Group("hand" if kind == "up" else "killed", shapes, {"seat": k, "tile": tid},
                          tname if kind == "up" else tname + " (killed)", rect)
        group.items.append(piece)
    return group


def _rows(play: RowsPlay, box) -> list:
    S = _SS
    x0, y0, x1, y1 = (v * S for v in box)
    cols = 14  # the suit sign, then A..K
    pitch = min((x1 - x0) / cols, (y1 - y0) / 4 / 1.55)
    cw, ch = pitch * 0.86, pitch * 1.2
    rpitch = pitch * 1.55
    gx = (x0 + x1) / 2 - cols * pitch / 2
    gy = (y0 + y1) / 2 - 4 * rpitch / 2
    out: list = []
    for su in range(4):
        ry = gy + su * rpitch + (rpitch - ch) / 2
        out += _suit(gx + pitch / 2, ry + ch / 2, pitch * 0.55, su)
        lo, hi = play.rows[su]
        for rank in range(1, 14):
            cx = gx + rank * pitch + (pitch - cw) / 2
            rect = (cx, ry, cx + cw, ry + ch)
            card = su * 13 + rank - 1
            if lo and lo <= rank <= hi:
                on_joker = card in play.on_joker
                out.append(Group("card", _card(rect, card, frame=_JOKER if on_joker else None, joker_corner=on_joker),
                                 {"tile": card}, card_name(card) + (" on a joker" if on_joker else ""), rect))
                continue
            end = 0 if lo and rank == lo - 1 else 1 if lo and rank == hi + 1 else None
            if end is not None and (su, end) in play.waiting:
                target = play.waiting[(su, end)]
                out.append(Group("card", _card(rect, 52, note="for " + card_name(target)), {"tile": 52},
                                 "joker waiting for " + card_name(target), rect))
                continue
            outline = _PANEL_LINE if rank != 7 else _MUTED
            out.append(RRect(rect, cw * 0.14, outline=outline, width=max(1, S)))
            if rank == 7:
                out.append(Text(((rect[0] + rect[2]) / 2, (rect[1] + rect[3]) / 2), "7", ch / S * 0.3, _MUTED, "mm"))
    return out


def _line(play: LinePlay, box) -> list:
    S = _SS
    tiles, marks, u, (ox, oy) = _layout_line(play, tuple(v * S for v in box))

    def px(r):
        return (ox + r[0] * u, oy + r[1] * u, ox + r[2] * u, oy + r[3] * u)

    out: list = []
    for t in tiles:
        a, b = t.pips
        out.append(Group("line", _domino(px(t.rect), t.pips), {"tile": tile_id(a, b)}, f"{a}-{b}", px(t.rect)))
    for r, colour in marks:
        q = px(r)
        out.append(RRect(q, u * 0.14, outline=colour, width=max(2, int(u * 0.13))))
    for t in tiles:  # the spinner's frame goes round the open-end marks on it
        if t.spinner:
            x0, y0, x1, y1 = px(t.rect)
            e = u * 0.12
            out.append(RRect((x0 - e, y0 - e, x1 + e, y1 + e), u * 0.2, outline=_RED, width=max(2, int(u * 0.1))))
    return out


def scene(table: Table, measure=None) -> list:
    """The shapes of a described table's picture, in drawing order, in pixels at _SS x (WIDTH, HEIGHT).
    `measure(text, size)` is a text's width in those pixels (the Pillow painter passes its font's;
    default an estimate), used only to place the "to play" mark after a seat's name."""
    measure = measure or _approx_width
    S = _SS
    magic7 = isinstance(table.play, RowsPlay)  # Magic-7's tiles are cards, its felt the suit rows
    # wood rim and felt
    out: list = [RRect((6 * S, 6 * S, (WIDTH - 6) * S, (HEIGHT - 6) * S), 30 * S, fill=_WOOD),
                 RRect((16 * S, 52 * S, (WIDTH - 16) * S, (HEIGHT - 14) * S), 24 * S, fill=_FELT, outline=_FELT_DARK,
                       width=3 * S),
                 Text((26 * S, 16 * S), table.title, 22, _TEXT),
                 Text(((WIDTH - 26) * S, 20 * S), "   ".join(table.info), 15, (240, 222, 190), "ra")]
    n = len(table.seats)
    slots = _SEATING[n]
    for r in range(n):
        k = (table.bottom + r) % n
        out.append(_seat(table.seats[k], k, _SLOTS[slots[r]], magic7, measure))
    sides = any(s.startswith(("left", "right")) for s in slots)
    box = (186 if sides else 36, 158, WIDTH - (186 if sides else 36), 590)
    legend = ("purple: card lying on a joker    JK for X: joker waiting for X    crossed out: killed" if magic7
              else "gold: open end    red frame: spinner" if isinstance(table.play, LinePlay) and table.play.branches
              else "gold: open end    red: end closed by a trap" if isinstance(table.play, LinePlay)
              and table.play.closed_arms else "gold: open end")
    out.append(Text((WIDTH / 2 * S, (box[3] - 2) * S), legend, 12, _MUTED, "md"))
    box = (box[0], box[1], box[2], box[3] - 20)
    if table.footer:
        out.append(Text((WIDTH / 2 * S, (box[3] - 2) * S), table.footer, 13, _GOLD, "md"))
        box = (box[0], box[1], box[2], box[3] - 22)
    if table.play is None:
        out.append(Text((WIDTH / 2 * S, (box[1] + box[3]) / 2 * S), "no tile played yet", 18, _MUTED, "mm"))
    elif isinstance(table.play, RowsPlay):
        out.append(Group("rows", _rows(table.play, box)))
    else:
        out.append(Group("play", _line(table.play, box)))
    return out


def shapes(items: list):
    """Every shape of a scene (groups opened), in drawing order."""
    for item in items:
        if isinstance(item, Group):
            yield from shapes(item.items)
        else:
            yield item


# ------------------------------------------------------------------------------ the Pillow painter
class _Painter:
    """Draws scene shapes on one Pillow image at _SS x the final size."""

    def __init__(self):
        Image, ImageDraw, ImageFont = _pil()
        self.Image, self.ImageFont = Image, ImageFont
        self.img = Image.new("RGB", (WIDTH * _SS, HEIGHT * _SS), _BG)
        self.d = ImageDraw.Draw(self.img)
        self._fonts: dict[int, object] = {}

    def font(self, size: float):
        size = int(size * _SS)
        if size not in self._fonts:
            try:
                self._fonts[size] = self.ImageFont.load_default(size=size)
            except TypeError as err:  # Pillow < 10.1 has no scalable default font
                raise PillowMissingError("pictures need Pillow >= 10.1: pip install -U pillow "
                                         "(or pip install 'domino-envs[render]')") from err
        return self._fonts[size]

    def text_width(self, text, size=14) -> float:
        return self.d.textlength(text, font=self.font(size))

    def draw(self, shape) -> None:
        d = self.d
        if isinstance(shape, RRect):
            d.rounded_rectangle(shape.rect, shape.radius, fill=shape.fill, outline=shape.outline, width=shape.width)
        elif isinstance(shape, Ellipse):
            d.ellipse(shape.box, fill=shape.fill)
        elif isinstance(shape, Polygon):
            d.polygon(shape.points, fill=shape.fill)
        elif isinstance(shape, Line):
            d.line(shape.xy, fill=shape.fill, width=shape.width)
        else:
            d.text(shape.xy, shape.text, font=self.font(shape.size), fill=shape.fill, anchor=shape.anchor)

    def result(self) -> np.ndarray:
        small = self.img.resize((WIDTH, HEIGHT), self.Image.LANCZOS)
        return np.asarray(small, dtype=np.uint8).copy()


def draw_table(table: Table) -> np.ndarray:
    """The picture of a described table (`describe`), uint8 HEIGHT x WIDTH x 3: its scene painted with Pillow."""
    p = _Painter()
    for shape in shapes(scene(table, p.text_width)):
        p.draw(shape)
    return p.result()


def picture(game, state: np.ndarray, viewer=None) -> np.ndarray:
    """RGB picture (uint8, HEIGHT x WIDTH x 3) of `state` from `viewer`: a seat (its hand face up),
    "full" (every hand face up) or None (no hand face up)."""
    _pil()  # fail early and clearly without Pillow
    return draw_table(describe(game, state, viewer))


def save_png(image: np.ndarray, path, palette: bool = False) -> None:
    """Write an RGB picture as a PNG; `palette` quantizes it to 256 colours first (the same picture
    to the eye at about half the bytes, for pictures a page loads several of)."""
    Image, _, _ = _pil()
    img = Image.fromarray(image)
    if palette:
        img = img.quantize(256, method=Image.Quantize.FASTOCTREE, dither=0)
    img.save(path, optimize=True)


def save_gif(game, rows, path, fps: float = 2.0, viewer=None) -> int:
    """An animated GIF of the positions `rows` (state rows, e.g. a replay's positions()); returns
    the number of frames. The last frame is held three times as long."""
    Image, _, _ = _pil()
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not 0.1 <= fps <= 50:
        raise ConfigError(f"fps={fps!r} must be a number 0.1..50")
    frames = [Image.fromarray(picture(game, np.asarray(r), viewer)).quantize(colors=128, dither=0) for r in rows]
    if not frames:
        raise ConfigError(f"{game.name}: no positions to animate")
    ms = int(round(1000 / fps))
    durations = [ms] * (len(frames) - 1) + [ms * 3]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=durations, loop=0, optimize=False)
    return len(frames)
