"""Issue 56's criteria 1 and 5 in a real Chromium (tests/web/conftest.py): a whole hand of Block
played by clicking tiles against the heuristic, one move in each other game, the which-end question,
a replay stepped to its middle and end, a hint, a move by keyboard alone, axe's accessibility
check, and ``domino render --html`` opened from disk and stepped through. Every page: no request
leaves 127.0.0.1 and the console shows no error (the `watched` fixture)."""
from __future__ import annotations

import re

import pytest

from domino_training import cli
from domino_training.tools.live import MENU, LiveGame

OTHER_GAMES = ["draw_v0", "seven_toed_pete_v0", "racehorse_v0", "sum7_v0", "magic7_v0"]


def _submit(page, target) -> None:
    """Click a form's button or a link (a string: a selector) and wait for the page it loads."""
    with page.expect_navigation():
        (page.locator(target) if isinstance(target, str) else target).click()


def _new_game(page, server, game: str, seed: int, seat1: str = "heuristic") -> None:
    """Fill the new-game form as a person does: seat 0 you, seat 1 `seat1`, a seed; start."""
    page.goto(f"{server}/new?game={game}")
    page.select_option("#seat0", "human")
    page.select_option("#seat1", seat1)
    page.fill("#seed", str(seed))
    _submit(page, "#start")


def _position(page) -> int:
    return int(re.search(r"Position (\d+)", page.text_content("#status")).group(1))


def _move_once(page) -> None:
    """One move of the human: the first playable tile clicked (which end: the first), else the
    first legal move (a draw or a pass)."""
    tiles = page.locator("#hand button.tile.playable")
    if tiles.count():
        _submit(page, tiles.first)
        if page.locator("#which button.which").count():
            _submit(page, page.locator("#which button.which").first)
    else:
        _submit(page, page.locator("#moves button.move").first)


def test_a_whole_hand_of_block_by_clicking_tiles_against_the_heuristic(watched, server):
    page = watched.page
    _new_game(page, server, "block_v0", seed=11)
    assert "you are seat 0" in page.text_content("h1")
    assert page.locator("#table-svg svg g.hand[data-seat='0']").count() == page.locator("#hand button.tile").count()
    clicks = 0
    while not page.locator("#result").count():
        assert clicks < 40, "the hand did not end"
        assert "Your move" in page.text_content("#status")
        before = _position(page)
        tiles = page.locator("#hand button.tile.playable")
        assert tiles.count(), "Block: a seat on turn with no tile to play is passed by the engine"
        _submit(page, tiles.first)
        if page.locator("#which button.which").count():
            _submit(page, page.locator("#which button.which").first)
        assert _position(page) > before
        clicks += 1
    assert clicks >= 3 and "The game is over" in page.text_content("#status")
    rows = page.locator("#result tbody tr")
    assert rows.count() == 2 and "heuristic" in page.text_content("#result")


def test_a_tile_of_the_table_picture_plays_like_its_button(watched, server):
    page = watched.page
    _new_game(page, server, "block_v0", seed=11)
    playable = page.locator("#hand button.tile.playable").first.get_attribute("data-tile")
    dead = page.locator("#hand button.tile:not(.playable)")
    if dead.count():  # a tile with no legal move is not made clickable in the picture
        tile = dead.first.get_attribute("data-tile")
        assert "playable" not in page.locator(f"#table-svg g.hand[data-tile='{tile}']").get_attribute("class")
    before = _position(page)
    _submit(page, f"#table-svg g.hand[data-tile='{playable}']")
    if page.locator("#which button.which").count():
        _submit(page, page.locator("#which button.which").first)
    assert _position(page) > before
    assert not page.locator(f"#hand button.tile[data-tile='{playable}']").count()  # the tile left the hand


@pytest.mark.parametrize("game", OTHER_GAMES)
def test_one_move_in_each_other_game(watched, server, game):
    page = watched.page
    _new_game(page, server, game, seed=3)
    before = _position(page)
    svg = page.locator("#table-svg svg")
    assert svg.count() == 1 and svg.locator("g.seat").count() >= 2
    _move_once(page)
    assert _position(page) > before
    assert page.locator("#log li").count() >= 1


def _seed_with_a_tile_fitting_both_ends(game: str) -> tuple[int, int]:
    """(seed, tile id): a deal where seat 0's first decision against the heuristic has a tile that fits
    two places (the server deals and seeds its agents from the seed alone)."""
    for seed in range(200):
        live = LiveGame(game, {}, ["human", "heuristic"], seed=seed, menu=MENU)
        live.advance()
        if live.turn != 0:
            continue
        tiles = live.game.action_table().tile
        fits: dict[int, int] = {}
        for action, _ in live.legal(0):
            fits[int(tiles[action])] = fits.get(int(tiles[action]), 0) + 1
        both = [t for t, k in fits.items() if k > 1]
        if both:
            return seed, both[0]
    raise AssertionError(f"{game}: no seed in 0..199 gives a tile that fits both ends")


def test_a_tile_that_fits_both_ends_asks_which(watched, server):
    page = watched.page
    seed, tile = _seed_with_a_tile_fitting_both_ends("draw_v0")
    _new_game(page, server, "draw_v0", seed=seed)
    before = _position(page)
    _submit(page, f"#hand button.tile[data-tile='{tile}']")
    which = page.locator("#which button.which")
    assert which.count() == 2 and "Which end" in page.text_content("#which")
    assert _position(page) == before  # asking moved nothing
    _submit(page, which.nth(1))
    assert _position(page) > before
    assert not page.locator(f"#hand button.tile[data-tile='{tile}']").count()


def test_a_replay_stepped_to_its_middle_and_end(watched, server):
    page = watched.page
    page.goto(f"{server}/replays")
    _submit(page, "#replay-files a[href='/replays/block/0']")
    last = int(page.get_attribute("#slider", "max"))
    assert last >= 4 and f"of {last}" in page.text_content("#status")  # it opens on the end
    page.fill("#slider", str(last // 2))
    _submit(page, "#go")
    assert f"Step {last // 2} of {last}" in page.text_content("#status")
    assert page.locator("#log li[aria-current='step']").count() == 1
    _submit(page, "#end")
    assert f"Step {last} of {last}" in page.text_content("#status") and page.locator("#result").count()


def test_a_hint_shows_the_policys_probability_of_each_legal_move(watched, server):
    page = watched.page
    _new_game(page, server, "sum7_v0", seed=4)
    legal = page.locator("#moves button.move").count()
    _submit(page, "#hint")
    cells = page.locator("#hints tbody tr td:nth-child(2)").all_text_contents()
    assert len(cells) == legal and all(c.strip().endswith("%") for c in cells)
    total = sum(float(c.strip().rstrip("%")) for c in cells)
    assert 99 <= total <= 101, cells


def test_one_move_with_the_keyboard_alone(watched, server):
    page = watched.page
    _new_game(page, server, "racehorse_v0", seed=6)
    before = _position(page)
    page.keyboard.press("Tab")  # off the address bar, into the page: then keys only
    with page.expect_navigation():
        page.keyboard.press("1")
    assert _position(page) > before


def test_axe_finds_no_serious_violation(watched, server, tmp_path):
    from axe_playwright_python.sync_playwright import Axe

    page = watched.page
    axe = Axe()
    pages = []
    _new_game(page, server, "magic7_v0", seed=2)
    pages.append(("game", axe.run(page)))
    page.goto(f"{server}/new?game=draw_v0")
    pages.append(("new game", axe.run(page)))
    page.goto(f"{server}/replays/block/0?step=3")
    pages.append(("replay", axe.run(page)))
    out = tmp_path / "sum7.html"
    assert cli.main(["render", "sum7_v0", "--seed", "1", "--moves", "6", "--html", str(out)]) == 0
    page.goto(out.as_uri())
    page.wait_for_selector("body[data-ready='1']")
    pages.append(("render --html", axe.run(page)))
    for name, result in pages:
        assert len(result.response["passes"]) >= 10, f"{name} page: axe checked next to nothing"
        bad = [(v["id"], v["impact"], v["help"]) for v in result.response["violations"]
               if v["impact"] in ("serious", "critical")]
        assert not bad, f"{name} page: {bad}"


def test_render_html_opens_from_disk_and_steps_through(watched, tmp_path):
    page = watched.page
    out = tmp_path / "block.html"
    assert cli.main(["render", "block_v0", "--seed", "2", "--agent", "heuristic", "--html", str(out)]) == 0
    page.goto(out.as_uri())
    page.wait_for_selector("body[data-ready='1']")
    last = int(page.get_attribute("#step", "max"))
    assert last >= 4 and page.get_attribute("body", "data-step") == "0"
    first = page.inner_html("#frame")
    page.click("#next")
    page.click("#next")
    assert page.get_attribute("body", "data-step") == "2" and page.inner_html("#frame") != first
    assert "after move 2" in page.text_content("#now")
    assert page.locator("#log li.current").get_attribute("data-step") == "2"
    page.click("#prev")
    assert page.get_attribute("body", "data-step") == "1"
    page.fill("#step", str(last // 2))
    assert page.get_attribute("body", "data-step") == str(last // 2)
    page.select_option("#view", "1")  # seat 1's view: only its hand face up
    frame = page.locator("#frame svg")
    assert frame.locator("g.hand[data-seat='0']").count() == 0 and frame.locator("g.back[data-seat='0']").count()
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("body", "data-step") == str(last // 2 + 1)
    page.click("#last")
    assert page.get_attribute("body", "data-step") == str(last) and "the game is over" in page.text_content("#now")
    assert all(u.startswith("file://") for u in watched.requests)
