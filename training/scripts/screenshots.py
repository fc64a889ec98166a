"""docs/web.md's screenshots: each game's table page of `domino serve` in a real Chromium, mid-game.

    python -m domino_training.scripts.screenshots                 # from a checkout: docs/images/web/<env>.png
    python -m domino_training.scripts.screenshots --out /tmp/shots

The app runs under uvicorn in a thread on 127.0.0.1 (a free port, a scratch data folder); for each
game Chromium (Debian's ``chromium``, driven by playwright with ``executable_path``) fills the new-game
form as a person does (the rules of the docs' picture of that game, you in seat 0, the heuristic in
the others, its seed), plays the first playable tile (which end: the first; else the first legal
move) for its share of the docs' number of decisions (stopping before the hand's end), and saves
the top of the page (heading, status, table) as a PNG quantized to 256 colours (the docs load six).
"""
from __future__ import annotations

import argparse
import io
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

from domino_envs.registry import game_names, make_game
from domino_training.scripts import DOCS
from domino_training.tools.render import DEFAULT_DOCS_POSITION, DOCS_POSITIONS

OUT = DOCS / "images" / "web"
VIEWPORT = {"width": 1100, "height": 1000}


def _serve(data_dir: Path):
    """(base URL, server) of the app under uvicorn in a daemon thread on 127.0.0.1."""
    import uvicorn

    from domino_training.web.app import Settings, create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = Settings(host="127.0.0.1", port=port, data_dir=data_dir)
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"domino serve's app did not start on 127.0.0.1:{port}")
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server


def shoot(page, base: str, name: str, path: Path) -> None:
    """The table page of `name` mid-game, saved as a palette PNG at `path`."""
    from PIL import Image

    config, seed, moves, _ = DOCS_POSITIONS.get(name, DEFAULT_DOCS_POSITION)
    query = "&".join([f"game={name}"] + [f"rule.{k}={v}" for k, v in config.items()])
    page.goto(f"{base}/new?{query}")
    page.select_option("#seat0", "human")
    page.fill("#seed", str(seed))
    page.click("#start")
    page.wait_for_selector("#status")
    players = make_game(name, **config).num_players
    shot = page.screenshot()
    for _ in range(max(1, moves // players)):  # the agents move in between: about the docs' picture's position
        tiles = page.locator("#hand button.tile.playable")
        if tiles.count():
            tiles.first.click()
            if page.locator("#which button.which").count():
                page.locator("#which button.which").first.click()
        else:
            page.locator("#moves button.move").first.click()
        page.wait_for_selector("#status")
        if page.locator("#result").count():
            break  # the hand ended (the engine plays only moves itself): keep the position before
        shot = page.screenshot()
    img = Image.open(io.BytesIO(shot))
    img.convert("RGB").quantize(256, method=Image.Quantize.FASTOCTREE, dither=0).save(path, optimize=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m domino_training.scripts.screenshots", description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=OUT, help=f"folder for the PNGs (default {OUT})")
    p.add_argument("--chromium", default=shutil.which("chromium"), help="the browser (default: chromium on PATH)")
    args = p.parse_args(argv)
    if not args.chromium:
        print("screenshots: error: needs Debian's chromium: apt-get install chromium", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    names = [*DOCS_POSITIONS, *(n for n in game_names() if n not in DOCS_POSITIONS)]
    with tempfile.TemporaryDirectory() as scratch, sync_playwright() as pw:
        base, server = _serve(Path(scratch))
        browser = pw.chromium.launch(executable_path=args.chromium, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport=VIEWPORT)
        try:
            for name in names:
                path = args.out / f"{name}.png"
                shoot(page, base, name, path)
                print(path)
        finally:
            browser.close()
            server.should_exit = True
    return 0


if __name__ == "__main__":
    sys.exit(main())
