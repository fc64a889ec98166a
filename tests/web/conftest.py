"""A real Chromium for the browser tests (tests/web/test_browser.py) and `domino serve`'s app on 127.0.0.1.

The browser is Debian's ``chromium`` (``.ci/run`` installs it with apt), driven by the pinned
playwright-python with ``executable_path`` set to it: ``playwright install`` downloads a browser and
cannot work here. A missing browser FAILS the tests rather than skipping them (issue 56).
"""
from __future__ import annotations

import shutil
import socket
import threading
import time
from urllib.parse import urlsplit

import pytest

ALLOWED_SCHEMES = ("file", "data", "about", "blob")


@pytest.fixture(scope="module")
def chromium():
    """One headless Chromium for a module. Not for the session: playwright's sync API keeps an asyncio loop
    running in the main thread while it lives, and any later test there that starts one (anyio.run: the mcp
    client of tests/tools/test_mcp_server.py) would fail with "Already running asyncio in this thread"."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("the browser tests need Debian's chromium: apt-get install chromium "
                    "(playwright drives it with executable_path; `playwright install` cannot be used here)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, headless=True, args=["--no-sandbox"])
        yield browser
        browser.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`domino serve`'s app under uvicorn in a thread on 127.0.0.1 (a free port), with a replay folder
    holding one finished game; its base URL."""
    import uvicorn

    from domino_training.web.app import Settings, create_app
    from tests.tools.test_replay_html import write_replay

    root = tmp_path_factory.mktemp("serve")
    (root / "replays").mkdir()
    write_replay(root / "replays" / "block.jsonl", "block_v0", seed=5, agents=("greedy", "greedy"))
    port = _free_port()
    settings = Settings(host="127.0.0.1", port=port, data_dir=root / "data", replays=root / "replays", max_games=16)
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail(f"domino serve's app did not start on 127.0.0.1:{port}")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=10)


class Watched:
    """A page with every request and every console error it made noted."""

    def __init__(self, page):
        self.page = page
        self.requests: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))

    def outside(self) -> list[str]:
        """Requests to anywhere but 127.0.0.1 (or the page's own file/data URLs)."""
        return [u for u in self.requests
                if urlsplit(u).scheme not in ALLOWED_SCHEMES and urlsplit(u).hostname != "127.0.0.1"]


@pytest.fixture
def watched(chromium):
    """A fresh page; after the test, no request left 127.0.0.1 and the console showed no error."""
    context = chromium.new_context(viewport={"width": 1200, "height": 1000})
    w = Watched(context.new_page())
    yield w
    context.close()
    assert not w.outside(), f"requests left 127.0.0.1: {w.outside()[:5]}"
    assert not w.errors, f"the console showed errors: {w.errors[:5]}"
