"""Every results page is its data rendered: training/scripts/pages.py names each page (or the marked
section of a hand-written page, the README's results among them), the data committed beside it and
the function that renders it; the committed text must be exactly that. A page edited by hand, or
data changed without its page, fails here."""
from __future__ import annotations

import json
import shutil

import pytest

from domino_training.scripts import CHECKOUT, DOCS, pages


def _data_files(page: pages.Page) -> list[str]:
    return [page.data] if isinstance(page.data, str) else list(page.data)


def _copy_docs(tmp_path):
    """docs/ and the README in a scratch checkout (no pictures): what the pages are rendered in."""
    shutil.copytree(DOCS, tmp_path / "docs", ignore=shutil.ignore_patterns("*.png", "*.gif"))
    shutil.copy(CHECKOUT / "README.md", tmp_path / "README.md")
    return tmp_path / "docs"


@pytest.mark.parametrize("page", pages.PAGES, ids=lambda p: p.page)
def test_page_is_its_data_rendered(page):
    assert (DOCS / page.page).read_text() == page.text(), (
        f"docs/{page.page} is not {_data_files(page)} rendered: regenerate it with "
        f"`python -m domino_training.scripts.pages` (or measure again: `{page.measured_by}`)")


SETTINGS = {"sweep"}  # a page's settings rather than its measurements (the tuning sweep's mark fractions key its rows)


def moved(node) -> int:
    """Add 0.1234 to every measured float under `node` in place; how many there were."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    count = 0
    for k, v in list(items):
        if k in SETTINGS:
            continue
        if isinstance(v, float):
            node[k] = v + 0.1234
            count += 1
        else:
            count += moved(v)
    return count


README = next(p for p in pages.PAGES if p.page == "../README.md")


@pytest.mark.parametrize("page", [p for p in pages.PAGES if p is not README], ids=lambda p: p.page)
def test_a_changed_number_in_the_data_changes_the_page(page, tmp_path):
    """The comparison above can fail: every float of the data, moved, moves the page (the README's
    section says verdicts, not numbers: the next test)."""
    docs = _copy_docs(tmp_path)
    for name in _data_files(page):
        data = json.loads((DOCS / name).read_text())
        assert moved(data) > 0, f"docs/{name} holds no number"
        (docs / name).write_text(json.dumps(data))
    assert page.text(docs) != (DOCS / page.page).read_text()


def test_the_check_names_a_stale_page(tmp_path):
    docs = _copy_docs(tmp_path)
    assert pages.stale(docs) == []
    first = pages.PAGES[0].page
    (docs / first).write_text((DOCS / first).read_text().replace("0.", "0,", 1))
    assert pages.stale(docs) == [first]


def test_a_section_page_must_hold_its_markers_once(tmp_path):
    docs = _copy_docs(tmp_path)
    section = next(p for p in pages.PAGES if p.page == "scaling.md")
    (docs / "scaling.md").write_text((DOCS / "scaling.md").read_text().replace(pages.END, ""))
    with pytest.raises(ValueError, match="must hold its generated section once"):
        section.text(docs)


def test_the_readmes_verdicts_follow_the_data(tmp_path):
    """A shipped policy whose interval against PIMC-64 moves above the fair share is named among those
    that beat it; a baseline that stops holding is named as the exception."""
    docs = _copy_docs(tmp_path)
    before = README.text(docs)
    trained = json.loads((DOCS / "trained.json").read_text())
    (racehorse,) = [t for t in trained if t["game"] == "racehorse_v0"]
    (row,) = [r for r in racehorse["rows"] if r["opponent"] == "pimc:n=64,rollout=random"]
    assert row["win_lo"] < 0.5  # short today: the test moves it
    row["win_lo"] = 0.51
    (docs / "trained.json").write_text(json.dumps(trained))
    baselines = json.loads((DOCS / "baselines.json").read_text())
    for m in baselines["sum7_v0"]["matchups"]:
        if m["agent"] == "heuristic" and m["opponent"] == "greedy":
            m["win_rate"]["lo"] = 0.49
    (docs / "baselines.json").write_text(json.dumps(baselines))
    after = README.text(docs)
    assert "PIMC-64 in Block Game, Draw Game, Magic-7, Racehorse and Sum 7" in after, after
    assert "beats random and greedy in every game but Sum 7" in after and "but Sum 7" not in before


def test_every_search_row_uses_the_policy_shipped_now():
    """search.md's table is the guided search with the shipped policies: a row measured with an
    earlier file (its env steps differ) belongs in the "earlier" list, and every game has its row."""
    from domino_envs.registry import game_names
    from domino_training.scripts.search import guided_spec, shipped_env_steps

    rows = json.loads((DOCS / "search.json").read_text())["rows"]
    assert sorted(r["game"] for r in rows) == sorted(game_names())
    for r in rows:
        assert r["policy_env_steps"] == shipped_env_steps(r["game"]), r["game"]
        assert r["agent"] == guided_spec(r["game"]) and r["deals"] >= 2000, r
