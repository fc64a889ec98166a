"""Shared by the web app's tests: a test client on 127.0.0.1 and reading a game page's forms."""
from __future__ import annotations

import re

ORIGIN = {"Origin": "http://127.0.0.1"}


def client(settings):
    """Starlette's test client on the app, as a browser on 127.0.0.1 sees it (server errors come back as
    responses, so a test can check there is no traceback)."""
    from starlette.testclient import TestClient

    from domino_training.web.app import create_app

    return TestClient(create_app(settings), base_url="http://127.0.0.1", raise_server_exceptions=False)


def new_game(c, game: str, seats: list[str], **fields) -> str:
    """POST a new game; the game page's path."""
    data = {"game": game, **{f"seat{k}": s for k, s in enumerate(seats)}, **{k: str(v) for k, v in fields.items()}}
    r = c.post("/games", data=data, headers=ORIGIN, follow_redirects=False)
    assert r.status_code == 303, r.text
    return r.headers["location"]


def version(html: str) -> str:
    return re.search(r'name="version" value="(\d+)"', html).group(1)


def moves(html: str) -> list[str]:
    return re.findall(r'name="action" value="(\d+)" class="move"', html)


def playable_tiles(html: str) -> list[str]:
    return re.findall(r'name="tile" value="(\d+)" class="tile playable"', html)


def game_of(c, path: str):
    """The LiveGame behind a game page's path."""
    return c.app.app.state.games.get(path.rsplit("/", 1)[-1])
