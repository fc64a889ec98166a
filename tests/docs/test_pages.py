"""Every results page is its data rendered: training/scripts/pages.py names each page, the data file
committed beside it and the function that renders it; the committed page must be exactly that text.
A page edited by hand, or data changed without its page, fails here."""
from __future__ import annotations

import json
import shutil

import pytest

from domino_training.scripts import DOCS, pages


@pytest.mark.parametrize("page", pages.PAGES, ids=lambda p: p.page)
def test_page_is_its_data_rendered(page):
    assert (DOCS / page.page).read_text() == page.text(), (
        f"docs/{page.page} is not docs/{page.data} rendered: regenerate it with "
        f"`python -m domino_training.scripts.pages` (or measure again: `{page.measured_by}`)")


@pytest.mark.parametrize("page", pages.PAGES, ids=lambda p: p.page)
def test_a_changed_number_in_the_data_changes_the_page(page, tmp_path):
    """The comparison above can fail: every float of the data, moved, moves the page."""
    data = json.loads((DOCS / page.data).read_text())

    def moved(node) -> int:
        """Add 0.1234 to every float under `node` in place; how many there were."""
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        count = 0
        for k, v in list(items):
            if isinstance(v, float):
                node[k] = v + 0.1234
                count += 1
            else:
                count += moved(v)
        return count

    assert moved(data) > 0, f"docs/{page.data} holds no number"
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs, ignore=shutil.ignore_patterns("*.png", "*.gif"))
    (docs / page.data).write_text(json.dumps(data))
    assert page.text(docs) != (DOCS / page.page).read_text()


def test_the_check_names_a_stale_page(tmp_path, capsys):
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs, ignore=shutil.ignore_patterns("*.png", "*.gif"))
    assert pages.stale(docs) == []
    (docs / pages.PAGES[0].page).write_text((DOCS / pages.PAGES[0].page).read_text().replace("0.", "0,", 1))
    assert pages.stale(docs) == [pages.PAGES[0].page]
