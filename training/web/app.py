"""`domino serve`: the games in a browser, a Starlette app rendered on the server.

    domino serve                                  # http://127.0.0.1:8000, games saved under ./games.jsonl
    domino serve --agent mlp:checkpoint=run/policy.npz --replays replays/ --max-games 16

Pages work with plain forms and links (a little JavaScript in static/app.js adds keys and autoplay);
templates and static files are package data, nothing comes from elsewhere. The server holds every
game (training/tools/live.py: `LiveGame`) and renders each page from one seat's view, so no page
holds another seat's hidden tiles; a game of agents only may be watched with every hand open.

What it refuses, and why (each tested in tests/web/test_refusals.py):
- It binds 127.0.0.1 unless ``--host`` says otherwise; any other host needs a token (``--token`` or
  one printed at start), sent once as ``?token=`` and kept in a same-site cookie.
- The Host header must name this server (DNS rebinding), and every POST must carry an Origin equal
  to it (a page elsewhere cannot post here); no CORS headers are sent; every response carries a
  Content-Security-Policy of ``default-src 'self'`` (so no inline script or style anywhere).
- Agents only by menu id, replays only by id (a file name inside ``--replays DIR``, resolved there,
  size-capped, parsed with domino_envs.replay.load). Templates autoescape: agent specs and replay
  fields are untrusted text.
- A bad request gets one message and a status, never a traceback: 400 a bad field, 403 a bad host,
  origin or token, 404 an unknown game or replay, 409 not your turn or a stale move, 422 an illegal
  move (the legal ones named) or a replay that does not load, 503 past ``--max-games``. A refused
  request leaves the game as it was.

Several games at once: each game has its lock; the agents think in a bounded thread pool
(``--workers``), off the event loop; at most ``--max-games`` live games, a game idle for
``--idle-minutes`` expires. Each response to a move carries a ``Server-Timing`` header (``move``: the
human's move, ``agents``: the agents' replies, waiting for the pool included) so a load test can
tell the two apart (training/scripts/webload.py).
"""
from __future__ import annotations

import argparse
import re
import secrets
import sys
import threading
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

import numpy as np

from domino_envs.errors import ConfigError, DominoError, ReplayError
from domino_training.commands import HelpFormatter, add_workers
from domino_training.tools import OneLineParser
from domino_training.tools.live import (
    GAMES_FILE,
    HUMAN,
    MENU,
    IllegalMove,
    LiveGame,
    NotYourTurn,
    StaleMove,
    check_agents,
    make_config,
    menu_with,
)

HERE = Path(__file__).resolve().parent
LOOPBACK = ("127.0.0.1", "localhost", "::1")
WILDCARD = ("0.0.0.0", "::")
CSP = "default-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
SECURITY_HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"same-origin"), (b"x-frame-options", b"DENY")]
REPLAY_CAP = 8 * 2**20  # bytes: a bigger replay file is refused
REPLAY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,100}")
TOKEN_COOKIE = "domino_token"
SEED_MAX = 2**64 - 1


class BadField(DominoError):
    """A form or query field that is missing or out of range: 400."""


class NotFound(DominoError):
    """No such game, replay or page: 404."""


class Forbidden(DominoError):
    """A bad Host, Origin or token: 403."""


class Busy(DominoError):
    """Past --max-games: 503."""


STATUS = ((BadField, 400), (NotFound, 404), (Forbidden, 403), (NotYourTurn, 409), (StaleMove, 409),
          (IllegalMove, 422), (ReplayError, 422), (Busy, 503), (DominoError, 400))


def status_of(err: Exception) -> int:
    return next((code for kind, code in STATUS if isinstance(err, kind)), 500)


@dataclass
class Settings:
    """What `domino serve`'s flags set."""

    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None
    replays: Path | None = None
    data_dir: Path | None = None
    max_games: int = 32
    idle_seconds: float = 1800.0
    workers: int = 2
    menu: dict = field(default_factory=lambda: dict(MENU))

    def allowed_hosts(self) -> set[str] | None:
        """Host names a request may name (None: any, for a wildcard bind, which needs the token)."""
        if self.host in WILDCARD:
            return None
        return set(LOOPBACK) | {self.host.strip("[]")}


# ------------------------------------------------------------------------------ fields
def _int(fields, name: str, lo: int, hi: int, default=None, required: bool = False) -> int | None:
    """An integer field lo..hi; empty or missing: `default` (BadField when `required`)."""
    raw = fields.get(name)
    if raw is None or str(raw).strip() == "":
        if required:
            raise BadField(f"field {name!r} is missing; it is an integer {lo}..{hi}")
        return default
    text = str(raw).strip()
    if not re.fullmatch(r"[0-9]{1,20}", text) or not lo <= int(text) <= hi:
        raise BadField(f"field {name}={text[:40]!r} is not allowed; an integer {lo}..{hi}")
    return int(text)


def _choice(fields, name: str, allowed, default=None):
    raw = fields.get(name)
    if raw is None or raw == "":
        return default
    if raw not in allowed:
        raise BadField(f"field {name}={str(raw)[:40]!r} is not allowed; one of {', '.join(map(str, allowed))}")
    return raw


# ------------------------------------------------------------------------------ the games held
class Games:
    """The live games by id: at most `max_games`, idle ones expire (on each new game)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.lock = threading.Lock()
        self.games: dict[str, LiveGame] = {}

    def expire(self) -> None:
        cutoff = time.monotonic() - self.settings.idle_seconds
        with self.lock:
            for gid in [g for g, live in self.games.items() if live.touched < cutoff]:
                del self.games[gid]

    def room(self) -> None:
        self.expire()
        with self.lock:
            if len(self.games) >= self.settings.max_games:
                raise Busy(f"{len(self.games)} games are being played, the most this server holds "
                           f"(--max-games {self.settings.max_games}); try again when one ends or expires "
                           f"(after {self.settings.idle_seconds / 60:g} idle minutes)")

    def add(self, live: LiveGame) -> None:
        self.room()
        with self.lock:
            self.games[live.id] = live

    def get(self, gid: str) -> LiveGame:
        live = self.games.get(gid)
        if live is None:
            raise NotFound(f"no game {gid[:40]!r} here (finished games expire after "
                           f"{self.settings.idle_seconds / 60:g} idle minutes)")
        return live


# ------------------------------------------------------------------------------ rendering
def _environment():
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = lambda x: f"{x:g}" if isinstance(x, (int, float)) else str(x)
    env.filters["pct"] = lambda x: "-" if x != x else f"{100 * x:.0f}%"
    return env


_ENV = None


def render(template: str, **context) -> str:
    global _ENV
    if _ENV is None:
        _ENV = _environment()
    return _ENV.get_template(template).render(**context)


def _svg(table) -> str | None:
    """The table as SVG from domino_envs.svg (escaped there), or None while it is not installed."""
    try:
        from domino_envs.svg import table_svg
    except ImportError:
        return None
    return table_svg(table)


def tile_key(game, tile) -> int:
    """The tile id of a face-up tile as a Table lists it ((a, b) for a domino, the card id for Magic-7)."""
    from domino_envs.tiles import tile_id

    return tile_id(int(tile[0]), int(tile[1])) if isinstance(tile, tuple) else int(tile)


def table_context(game, table, viewer) -> dict:
    """Plain data for the table's HTML (beside the SVG): seats, facts and the play as text."""
    from domino_envs.text import tile_namer

    name_of = tile_namer(game)
    seats = []
    for k, s in enumerate(table.seats):
        seats.append({"seat": k, "label": s.label, "count": s.count, "lines": s.lines, "to_act": s.to_act,
                      "tiles": None if s.tiles is None else [name_of(tile_key(game, t)) for t in s.tiles],
                      "killed": s.killed})
    return {"title": table.title, "info": table.info, "footer": table.footer, "seats": seats,
            "svg": _svg(table)}


def hand_buttons(live: LiveGame, seat: int, table) -> list[dict]:
    """The viewer's hand as buttons: each tile, its name and the legal actions that play it."""
    from domino_envs.text import tile_namer

    g = live.game
    name_of = tile_namer(g)
    tiles_of = g.action_table().tile
    legal = [a for a, _ in live.legal(seat)]
    out = []
    for t in table.seats[seat].tiles or []:
        tid = tile_key(g, t)
        out.append({"tile": tid, "name": name_of(tid), "actions": [a for a in legal if int(tiles_of[a]) == tid]})
    return out


def seat_names(live: LiveGame, viewer) -> list[str]:
    return [("you" if k == viewer else "human") if s == HUMAN else f"{s} ({live.specs[k]})"
            for k, s in enumerate(live.seats)]


def game_page(live: LiveGame, view, which: list[int] | None = None, hints: list[dict] | None = None,
              hint_kind: str = "", message: str = "", autoplay: bool = False) -> str:
    """The HTML of a game's page from `view` (a human seat; or, watching, a seat, "full" or None):
    everything on it comes from that view (the Table `describe` gives it, the seat's legal moves,
    the log as that seat reads it), so it is the same whatever the hidden tiles are."""
    g = live.game
    viewer = live.viewer(view)
    table = live.table(viewer)
    human = viewer if isinstance(viewer, int) and viewer in live.humans else None
    legal = live.legal(human) if human is not None else []
    names = dict(legal)
    returns = None
    if live.over:
        from domino_envs.outcome import win_shares

        shares = win_shares(np.array(live.returns()))
        returns = [{"seat": k, "who": who, "ret": r, "share": float(shares[k])}
                   for k, (who, r) in enumerate(zip(seat_names(live, viewer), live.returns()))]
    rotate = None
    if live.over and live.humans:
        rotate = {"game": g.name, "seed": live.seed, "deal": "" if live.deal is None else live.deal,
                  "rotation": (live.rotation + 1) % g.num_players, "seats": live.seats_asked,
                  "rules": live.rules}
    return render(
        "game.html", live=live, game=g, view=viewer, view_arg=_view_arg(viewer), human=human,
        table=table_context(g, table, viewer), seats=seat_names(live, viewer),
        hand=hand_buttons(live, human, table) if human is not None else [],
        legal=legal, which=[(a, names[a]) for a in which or [] if a in names], hints=hints, hint_kind=hint_kind,
        log=live.log(viewer), text=live.text(human) if human is not None else "",
        returns=returns, message=message, autoplay=autoplay, rotate=rotate,
        views=(["full", "none"] + list(range(g.num_players))) if live.watch_only else [],
        agent_turn=not live.over and live.agents[live.turn] is not None)


def _view_arg(viewer) -> str:
    return "none" if viewer is None else str(viewer)


def parse_view(live: LiveGame, fields) -> int | str | None:
    """?view=full|none|K (watching) or ?seat=K (a human seat); default: the first human seat, else full."""
    n = live.game.num_players
    raw = fields.get("view", fields.get("seat"))
    if raw is None or raw == "":
        return live.humans[0] if live.humans else "full"
    if raw in ("none", "full"):
        if not live.watch_only:
            raise BadField(f"view={raw} is for games of agents only")
        return None if raw == "none" else "full"
    if raw == "full":
        if not live.watch_only:
            raise BadField("view=full (every hand open) is for games of agents only")
        return "full"
    seat = _int({"view": raw}, "view", 0, n - 1)
    if not live.watch_only and seat not in live.humans:
        raise BadField(f"view={seat} is not your seat; yours: {live.humans}")
    return seat


def replay_page(rep, step: int | None, view, where: str, base_url: str) -> str:
    """A recorded game at one step (0: the deal, len(steps): the end) from `view`, with the move log."""
    from domino_envs.pictures import describe

    g = rep.make_game()
    positions = list(rep.positions())
    last = len(positions) - 1
    step = last if step is None else min(step, last)
    n = g.num_players
    if view not in (None, "full") and not (isinstance(view, int) and 0 <= view < n):
        raise BadField(f"view={view!r}: full, none or a seat 0..{n - 1}")
    state = positions[step]
    table = describe(g, state, view)
    log = [f"{i + 1}. seat {s.seat}: {s.name or g.describe_action(s.action)}" for i, s in enumerate(rep.steps)]
    agents = rep.agents if rep.agents and len(rep.agents) == n else ["(not recorded)"] * n
    return render("replay.html", where=where, game=g, step=step, last=last, view=_view_arg(view),
                  table=table_context(g, table, view), log=log, agents=agents,
                  returns=rep.returns if step == last else None, base_url=base_url,
                  views=["full", "none"] + list(range(n)))


# ------------------------------------------------------------------------------ the results
def results(data_dir: Path | None) -> list[dict]:
    """The human's win share against each table of agents, from the finished live games under
    `data_dir`: per deal (seed, deal) the mean over its rotations, then mean and 95% interval over deals
    (domino_training.stats.Stat), the deal being the unit as in `domino evaluate`."""
    from domino_envs.outcome import win_shares
    from domino_envs.replay import load
    from domino_training.stats import Stat

    path = None if data_dir is None else data_dir / GAMES_FILE
    if path is None or not path.is_file():
        return []
    by_table: dict[str, dict[tuple, list[float]]] = {}
    for rep in load(path):
        live = rep.extra.get("live")
        if not isinstance(live, dict) or rep.agents is None or rep.agents.count(HUMAN) != 1:
            continue
        me = rep.agents.index(HUMAN)
        others = sorted({a for a in rep.agents if a != HUMAN})
        share = float(win_shares(np.array(rep.returns))[me])
        key = (live.get("seed"), live.get("deal"))
        by_table.setdefault(" / ".join(others), {}).setdefault(key, []).append(share)
    rows = []
    for who, deals in sorted(by_table.items()):
        stat = Stat.of([float(np.mean(v)) for v in deals.values()], (0.0, 1.0))
        rows.append({"agents": who, "games": sum(map(len, deals.values())), "deals": len(deals),
                     "mean": stat.mean, "lo": stat.lo, "hi": stat.hi})
    return rows


# ------------------------------------------------------------------------------ the guard
class Guard:
    """ASGI middleware: Host, token and Origin checks before the app; security headers on every response."""

    def __init__(self, app, settings: Settings):
        self.app = app
        self.settings = settings

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_secure(message):
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if not k.lower().startswith(b"access-control-")]
                message = {**message, "headers": headers + SECURITY_HEADERS}
            await send(message)

        problem, redirect = self.check(scope)
        if problem is not None:
            return await self.refuse(problem, scope, receive, send_secure)
        if redirect is not None:
            from starlette.responses import RedirectResponse

            response = RedirectResponse(redirect, 303)
            response.set_cookie(TOKEN_COOKIE, self.settings.token, httponly=True, samesite="strict")
            return await response(scope, receive, send_secure)
        return await self.app(scope, receive, send_secure)

    def check(self, scope) -> tuple[Forbidden | None, str | None]:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "")
        name = host.rsplit(":", 1)[0] if not host.startswith("[") else host[1:].split("]", 1)[0]
        allowed = self.settings.allowed_hosts()
        if not host or (allowed is not None and name.lower() not in allowed):
            return Forbidden(f"Host {host[:80]!r} is not this server (allowed: {', '.join(sorted(allowed or []))})"), None
        token = self.settings.token
        if token:
            cookie = SimpleCookie()
            try:
                cookie.load(headers.get("cookie", ""))
            except Exception:  # noqa: BLE001 - a malformed cookie header is no token
                cookie = SimpleCookie()
            have = cookie[TOKEN_COOKIE].value if TOKEN_COOKIE in cookie else ""
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            if "token" in query and secrets.compare_digest(query["token"].encode(), token.encode()):
                rest = urlencode({k: v for k, v in query.items() if k != "token"})
                return None, scope["path"] + ("?" + rest if rest else "")
            if not secrets.compare_digest(have.encode(), token.encode()):
                return Forbidden("this server needs its token: open the address printed at start (…/?token=…)"), None
        if scope["method"] not in ("GET", "HEAD"):
            origin = headers.get("origin")
            expected = f"{scope.get('scheme', 'http')}://{host}"
            if origin != expected:
                return Forbidden(f"Origin {str(origin)[:80]!r} may not post here (expected {expected!r})"), None
        return None, None

    async def refuse(self, err: Exception, scope, receive, send):
        from starlette.responses import HTMLResponse

        status = status_of(err)
        await HTMLResponse(render("error.html", status=status, message=str(err)), status)(scope, receive, send)


# ------------------------------------------------------------------------------ the app
def create_app(settings: Settings | None = None):
    """The ASGI app (Starlette inside the Guard)."""
    import anyio
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.responses import FileResponse, HTMLResponse, RedirectResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    settings = settings or Settings()
    games = Games(settings)
    agents_pool = anyio.CapacityLimiter(max(1, settings.workers))
    moves_pool = anyio.CapacityLimiter(16)

    async def locked(live: LiveGame, fn, pool):
        def run():
            with live.lock:
                return fn()
        return await anyio.to_thread.run_sync(run, limiter=pool)

    def page(html: str, status: int = 200, headers=None):
        return HTMLResponse(html, status, headers=headers)

    async def index(request):
        from domino_envs.registry import game_names, title

        return page(render("index.html", games=[(g, title(g)) for g in game_names()], menu=settings.menu))

    async def new_form(request):
        from domino_envs.registry import game_names

        q = request.query_params
        name = _choice(q, "game", game_names(), default=None)
        if name is None:
            raise BadField(f"field 'game' is missing; one of {', '.join(game_names())}")
        rules = {k[5:]: v for k, v in q.items() if k.startswith("rule.") and v.strip()}
        game = make_config(name, rules)
        defaults = game.config_dict()
        return page(render("new.html", game=game, rules=rules, defaults=defaults, menu=settings.menu,
                           n=game.num_players))

    async def create(request):
        from domino_envs.registry import game_names

        form = await request.form()
        name = _choice(form, "game", game_names())
        if name is None:
            raise BadField(f"field 'game' is missing; one of {', '.join(game_names())}")
        rules = {k[5:]: v for k, v in form.items() if k.startswith("rule.") and str(v).strip()}
        n = make_config(name, rules).num_players
        seats = []
        for k in range(n):
            if not form.get(f"seat{k}"):
                raise BadField(f"field 'seat{k}' is missing: {n} seats, each {HUMAN!r} or a menu id")
            seats.append(_choice(form, f"seat{k}", [HUMAN, *settings.menu]))
        seed = _int(form, "seed", 0, SEED_MAX)
        deal = _int(form, "deal", 0, 2**32 - 1)
        rotation = _int(form, "rotation", 0, n - 1, default=0)
        games.room()
        data_dir = settings.data_dir

        def make():
            live = LiveGame(name, rules, seats, seed=seed, deal=deal, rotation=rotation, menu=settings.menu,
                            data_dir=data_dir)
            live.advance(max_moves=0 if not live.humans else None)
            return live

        live = await anyio.to_thread.run_sync(make, limiter=agents_pool)
        games.add(live)
        return RedirectResponse(f"/games/{live.id}", 303)

    async def show(request):
        live = games.get(request.path_params["gid"])
        q = request.query_params
        view = parse_view(live, q)
        hint_kind = _choice(q, "hint", ["policy", "search"], default="")
        autoplay = _choice(q, "autoplay", ["0", "1"], default="0") == "1"

        def build():
            hints = None
            if hint_kind:
                if view not in live.humans or live.turn != view:
                    raise NotYourTurn("a hint is for your seat on your turn")
                hints = live.hints(view, search=hint_kind == "search")
            return game_page(live, view, hints=hints, hint_kind=hint_kind, autoplay=autoplay)

        return page(await locked(live, build, agents_pool if hint_kind == "search" else moves_pool))

    async def move(request):
        live = games.get(request.path_params["gid"])
        form = await request.form()
        g = live.game
        seat = _int(form, "seat", 0, g.num_players - 1, required=True)
        version = _int(form, "version", 0, 2**31, required=True)
        if form.get("action") not in (None, ""):
            action = _int(form, "action", 0, g.num_actions - 1)
            tile = None
        else:
            tile = _int(form, "tile", 0, 10**4, required=True)
            action = None
        t0 = time.perf_counter()

        def play():
            nonlocal action
            if tile is not None:
                tiles_of = g.action_table().tile
                fits = [a for a, _ in live.legal(seat) if int(tiles_of[a]) == tile]
                if seat == live.turn and len(fits) > 1:
                    live.check(seat, fits[0], version)
                    return game_page(live, seat, which=fits, message="this tile fits more than one place: which?")
                if not fits:
                    live.check(seat, -1, version)  # raises: not your turn, stale, or illegal naming the legal moves
                action = fits[0]
            live.play(seat, action, version)
            return None

        which = await locked(live, play, moves_pool)
        if which is not None:
            return page(which)
        t1 = time.perf_counter()
        await locked(live, live.advance, agents_pool)
        t2 = time.perf_counter()
        timing = f"move;dur={1000 * (t1 - t0):.2f}, agents;dur={1000 * (t2 - t1):.2f}"
        return RedirectResponse(f"/games/{live.id}?seat={seat}", 303, headers={"Server-Timing": timing})

    async def step(request):
        live = games.get(request.path_params["gid"])
        form = await request.form()
        view = parse_view(live, form)
        autoplay = _choice(form, "autoplay", ["0", "1"], default="0")
        version = _int(form, "version", 0, 2**31)
        if version is not None and version != live.version:
            raise StaleMove(f"stale step: the position is at version {live.version}, the page at {version}; reload")
        if live.over:
            raise NotYourTurn("the game is over")
        if live.agents[live.turn] is None:
            raise NotYourTurn(f"seat {live.turn} is a human's: an agent moves only on its own turn")
        await locked(live, lambda: live.advance(max_moves=1), agents_pool)
        return RedirectResponse(f"/games/{live.id}?{urlencode({'view': _view_arg(view), 'autoplay': autoplay})}", 303)

    async def game_replay(request):
        live = games.get(request.path_params["gid"])
        if not live.over:
            raise NotYourTurn("the replay opens once the game is over")
        q = request.query_params
        rep = live.replay()
        view = _replay_view(q, live.game.num_players)
        step = _int(q, "step", 0, 10**6)
        return page(await locked(live, lambda: replay_page(rep, step, view, f"game {live.id[:8]}",
                                                           f"/games/{live.id}/replay"), moves_pool))

    async def replays(request):
        return page(render("replays.html", files=_replay_files(settings), folder=settings.replays))

    async def replay_file(request):
        name = request.path_params["name"]
        reps = await anyio.to_thread.run_sync(lambda: _load_replays(settings, name), limiter=moves_pool)
        index = _int({"i": request.path_params["index"]}, "i", 0, 10**6, required=True)
        if index >= len(reps):
            raise NotFound(f"replay {name} has games 0..{len(reps) - 1}; no game {index}")
        q = request.query_params
        rep = reps[index]
        view = _replay_view(q, len(rep.returns))
        step = _int(q, "step", 0, 10**6)
        html = await anyio.to_thread.run_sync(
            lambda: replay_page(rep, step, view, f"{name} game {index}", f"/replays/{name}/{index}"),
            limiter=moves_pool)
        return page(html)

    async def results_page(request):
        rows = await anyio.to_thread.run_sync(lambda: results(settings.data_dir), limiter=moves_pool)
        return page(render("results.html", rows=rows, data_dir=settings.data_dir))

    async def on_error(request, err):
        status = status_of(err) if isinstance(err, DominoError) else 500
        message = str(err) if isinstance(err, DominoError) else "internal error: the server could not answer this"
        return page(render("error.html", status=status, message=message), status)

    async def on_http(request, err):
        message = {404: "no such page", 405: "method not allowed"}.get(err.status_code, str(err.detail))
        return page(render("error.html", status=err.status_code, message=message), err.status_code)

    routes = [
        Route("/", index),
        Route("/new", new_form),
        Route("/games", create, methods=["POST"]),
        Route("/games/{gid}", show),
        Route("/games/{gid}/move", move, methods=["POST"]),
        Route("/games/{gid}/step", step, methods=["POST"]),
        Route("/games/{gid}/replay", game_replay),
        Route("/replays", replays),
        Route("/replays/{name}/{index}", replay_file),
        Route("/results", results_page),
        Route("/favicon.ico", lambda request: FileResponse(str(HERE / "static" / "favicon.svg"),
                                                           media_type="image/svg+xml")),
        Mount("/static", app=StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={Exception: on_error, HTTPException: on_http})
    app.state.games = games
    app.state.settings = settings
    return Guard(app, settings)


def _replay_view(fields, n: int):
    raw = fields.get("view", "full")
    if raw in ("", "full"):
        return "full"
    if raw == "none":
        return None
    return _int({"view": raw}, "view", 0, n - 1)


def _replay_files(settings: Settings) -> list[str]:
    folder = settings.replays
    if folder is None or not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.jsonl") if p.is_file() and REPLAY_NAME.fullmatch(p.stem))


def _load_replays(settings: Settings, name: str):
    """The replays of ``name``.jsonl in --replays DIR: the name checked, the path resolved inside the
    folder, the size capped, the file parsed by domino_envs.replay.load (its ReplayError as the message)."""
    from domino_envs.replay import load

    folder = settings.replays
    if folder is None:
        raise NotFound("this server shows no replay files (start it with --replays DIR)")
    if not REPLAY_NAME.fullmatch(name):
        raise NotFound(f"no replay {name[:60]!r}: a replay id is a file name in the replays folder")
    root = folder.resolve()
    path = (root / f"{name}.jsonl").resolve()
    if path.parent != root or not path.is_file():
        raise NotFound(f"no replay {name!r} in the replays folder")
    size = path.stat().st_size
    if size > REPLAY_CAP:
        raise ReplayError(f"replay {name!r} is {size} bytes, over the {REPLAY_CAP} this server opens")
    try:
        reps = load(path)
    except UnicodeDecodeError:
        raise ReplayError(f"replay {name!r} is not UTF-8 text") from None
    except ReplayError as err:  # named by its id, not by the server's path
        raise ReplayError(str(err).replace(str(path), name)) from None
    for rep in reps:  # the message names the file by its id, not the server's path
        rep.where = rep.where.replace(str(path), name)
    return reps


# ------------------------------------------------------------------------------ the command
EXAMPLES = """examples:
  domino serve
  domino serve --port 8080 --agent pimc:n=256 --replays replays --data-dir web-games --max-games 8
"""  # shown by --help; tests/fronts/test_command_help.py parses them


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="domino serve", formatter_class=HelpFormatter, epilog=EXAMPLES,
                      description="Play and watch the games in a browser (the `web` extra).")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; another needs the token)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--agent", action="append", default=[], metavar="SPEC",
                   help="add an agent spec to the menu (repeatable), e.g. mlp:checkpoint=run/policy.npz")
    p.add_argument("--replays", default=None, metavar="DIR", help="a folder of replay files (*.jsonl) to show by name")
    p.add_argument("--data-dir", default=".", metavar="DIR",
                   help=f"each finished game is appended to DIR/{GAMES_FILE} (default: the current folder)")
    p.add_argument("--max-games", type=int, default=32, metavar="N", help="live games at most (default 32)")
    p.add_argument("--idle-minutes", type=float, default=30.0, help="a game idle this long expires (default 30)")
    add_workers(p, "the agents think in", default=2, unit="threads", same=False)
    p.add_argument("--token", default=None, help="the token a browser must present (default: none on 127.0.0.1, "
                   "a printed random one on any other host)")
    p.add_argument("--no-warm", action="store_true", help="skip compiling the agents' kernels at start")
    return p


def warm(game_names: list[str]) -> None:
    """Compile what the menu's agents run, for every game, before the first request (a tiny evaluation).
    Not `domino warm`'s warm_game: that also compiles the learners, which a server never runs."""
    from domino_training.evaluate import evaluate

    for name in game_names:
        evaluate(name, ["random", "heuristic", "trained", "pimc:n=2", "pimc:n=2,rollout=policy,policy=trained"],
                 deals=1, seed=0, progress=False)


def settings_from(args) -> Settings:
    """Settings from parsed flags; ConfigError naming a bad one."""
    from domino_envs.registry import game_names

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port {args.port} is not a port: 0..65535")
    if args.max_games < 1:
        raise ConfigError(f"--max-games {args.max_games}: at least 1")
    if args.workers < 1:
        raise ConfigError(f"--workers {args.workers}: at least 1")
    if not args.idle_minutes > 0:
        raise ConfigError(f"--idle-minutes {args.idle_minutes}: more than 0")
    replays = None if args.replays is None else Path(args.replays)
    if replays is not None and not replays.is_dir():
        raise ConfigError(f"--replays {args.replays!r} is not a folder")
    if args.token is not None and len(args.token) < 8:
        raise ConfigError("--token: at least 8 characters")
    menu = menu_with(args.agent)
    check_agents(menu, game_names())
    token = args.token
    if token is None and args.host not in LOOPBACK:
        token = secrets.token_urlsafe(16)
    return Settings(host=args.host, port=args.port, token=token, replays=replays, data_dir=Path(args.data_dir),
                    max_games=args.max_games, idle_seconds=60 * args.idle_minutes, workers=args.workers, menu=menu)


def main(argv: list[str] | None = None) -> int:
    """`domino serve [...]`: a bad flag is one line on stderr and exit status 2."""
    p = build_parser()
    args = p.parse(argv)
    if isinstance(args, int):
        return args
    try:
        import jinja2  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn
    except ImportError as err:
        return p.fail(f"needs the web extra ({err.name} is missing): pip install 'domino-envs[web]'")
    try:
        settings = settings_from(args)
    except (DominoError, ValueError) as err:
        return p.fail(str(err))
    if not args.no_warm:
        from domino_envs.registry import game_names

        print("compiling the agents' kernels (domino warm does it once per install) ...", flush=True)
        warm(game_names())
    shown = f"[{settings.host}]" if ":" in settings.host else settings.host
    url = f"http://{shown}:{settings.port}/" + (f"?token={settings.token}" if settings.token else "")
    print(f"domino serve: open {url}  (games saved to {settings.data_dir / GAMES_FILE}; Ctrl-C stops)", flush=True)
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())



