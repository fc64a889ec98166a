"""Regenerate the params tables of docs/learners.md from each learner's settings dataclass
(training/settings.py): ``python -m domino_training.scripts.params_tables``. Each table sits between
``<!-- params: NAME -->`` and ``<!-- /params -->``; tests/docs/test_docs.py checks they are current."""
from __future__ import annotations

import re
import sys

from domino_training.learners.interface import params_table
from domino_training.scripts import DOCS

BLOCK = re.compile(r"(<!-- params: (\w+) -->\n)((?:(?!<!--).)*?)(<!-- /params -->)", re.S)


def regenerate(text: str) -> str:
    """The page with every params block replaced by its learner's table."""
    return BLOCK.sub(lambda m: m[1] + params_table(m[2]) + "\n" + m[4], text)


def main() -> int:
    page = DOCS / "learners.md"
    page.write_text(regenerate(page.read_text()))
    print(f"wrote {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
