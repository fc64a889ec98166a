"""Maintainer scripts: the page and checkpoint regenerators and one-off experiments.

They import the library and nothing imports them; the wheel does not ship them (pyproject.toml lists
the packages it ships, and this one is not among them). Run them from a checkout with an editable
install, e.g. ``python -m domino_training.scripts.ship draw_v0``. They are the only code that writes
into the checkout, and they name where: `CHECKOUT` and `DOCS` below, passed explicitly to the library.
"""
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]  # training/scripts/ -> the checkout
DOCS = CHECKOUT / "docs"
