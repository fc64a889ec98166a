"""docs/llm.md's seat texts are what `domino_envs.text.seat_text` prints today: the section is rendered
again (training/scripts/seat_texts.py) and compared."""
from __future__ import annotations

import pytest

from domino_training.scripts import seat_texts


def test_the_seat_texts_section_is_current():
    current = seat_texts.PAGE.read_text()
    assert seat_texts.page_text(current) == current, "run python -m domino_training.scripts.seat_texts"


def test_the_section_shows_every_game_and_the_page_must_hold_its_markers():
    text = seat_texts.section()
    from domino_envs.registry import game_names

    assert all(f"(`{name}`)" in text and f"({name})" in text for name in game_names())
    with pytest.raises(ValueError, match="must hold"):
        seat_texts.page_text("# no markers here\n")
