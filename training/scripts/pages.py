"""Every results page in docs/ from the data file committed beside it.

    python -m domino_training.scripts.pages            # write every page again from its data
    python -m domino_training.scripts.pages --check    # name the pages whose text would change (exit 1)

The script that measures a page writes its data file (JSON) first and then the page through the
page function named in PAGES, so no number on a results page is typed by hand: a page is its data
rendered, and tests/docs/test_pages.py renders each one again and compares. A figure in a page's
prose is computed from the data by the same function, or says where it comes from.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from domino_training.scripts import DOCS

BEGIN = "<!-- generated from {data} by `python -m domino_training.scripts.pages`: edit the data, not this section -->"
END = "<!-- end of the generated section -->"


@dataclass(frozen=True)
class Page:
    """A results page, its data file (both under docs/) and `module:function` that renders the data.
    `section`: the data renders one marked section of a hand-written page (between BEGIN and END),
    not the whole page."""

    page: str
    data: str
    render: str
    measured_by: str  # the command that measures the data and writes both files
    section: bool = False

    def text(self, docs: Path = DOCS) -> str:
        """The page as its data renders it."""
        module, function = self.render.split(":")
        rendered = getattr(importlib.import_module(module), function)(json.loads((docs / self.data).read_text()))
        if not self.section:
            return rendered
        current = (docs / self.page).read_text()
        begin = BEGIN.format(data=Path(self.data).name)
        if current.count(begin) != 1 or current.count(END) != 1:
            raise ValueError(f"docs/{self.page} must hold its generated section once, between {begin!r} and {END!r}")
        head, rest = current.split(begin)
        return f"{head}{begin}\n{rendered}{END}{rest.split(END)[1]}"


SCRIPTS = "domino_training.scripts"
PAGES = [
    Page("trained.md", "trained.json", f"{SCRIPTS}.ship:markdown", f"python -m {SCRIPTS}.ship --evaluate-only"),
    Page("baselines.md", "baselines.json", f"{SCRIPTS}.baselines:page", f"python -m {SCRIPTS}.baselines"),
    Page("ladder.md", "ladder.json", f"{SCRIPTS}.ladder:page", f"python -m {SCRIPTS}.ladder --deals N"),
    Page("exploitability.md", "exploitability/results.json", f"{SCRIPTS}.exploit_pages:page",
         f"python -m {SCRIPTS}.exploit_pages report"),
    Page("benchmark_timing.md", "benchmark_timing.json", f"{SCRIPTS}.strength_timing:page",
         f"python -m {SCRIPTS}.strength_timing"),
    Page("speed.md", "speed.json", f"{SCRIPTS}.speed:page", f"domino bench, then python -m {SCRIPTS}.speed --bench FILE"),
    Page("scaling.md", "scaling.json", f"{SCRIPTS}.scaling:section", f"python -m {SCRIPTS}.scaling", section=True),
]


def write_page(name: str) -> Path:
    """Write one page of PAGES again from its data."""
    (page,) = [p for p in PAGES if p.page == name]
    path = DOCS / page.page
    path.write_text(page.text())
    print(f"wrote {path} from docs/{page.data}")
    return path


def stale(docs: Path = DOCS) -> list[str]:
    """The pages whose committed text differs from their data rendered."""
    return [p.page for p in PAGES if p.text(docs) != (docs / p.page).read_text()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=f"python -m {SCRIPTS}.pages", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; name the pages that differ from their data")
    args = ap.parse_args(argv)
    if args.check:
        differ = stale()
        for name in differ:
            print(f"docs/{name} differs from its data rendered", file=sys.stderr)
        return 1 if differ else 0
    for p in PAGES:
        write_page(p.page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
