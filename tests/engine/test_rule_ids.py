"""Every rule id a game names is cited in a comment where its engine implements it.

The ids are those of the rules spec for the game (tests/docs/test_docs.py: SPEC_IDS) and every further
id the game module's docstring defines (ranges like T-2..T-10 written out). Each must appear, as
itself (not inside a range), in a ``#`` comment of the module's code, so that grepping an id from
the spec lands on the code that carries it out.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize

import pytest

from tests.docs.test_docs import GAME_PAGES, SPEC_IDS, expand_ids

EXTRA = {"magic7": ["Table-1"]}  # the spec's penalty table, named like an id


def comments(source: str) -> str:
    return "\n".join(tok.string for tok in tokenize.generate_tokens(io.StringIO(source).readline)
                     if tok.type == tokenize.COMMENT)


def cited(text: str, rule_id: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(rule_id)}(?![\d])(?!\.\.)", text) is not None


@pytest.mark.parametrize("page", list(GAME_PAGES))
def test_every_rule_id_is_cited_in_a_comment_of_its_engine(page):
    path, prefix, _ = GAME_PAGES[page]
    module = path.stem
    source = path.read_text()
    ids = expand_ids(SPEC_IDS[page], prefix) | expand_ids(ast.get_docstring(ast.parse(source)), prefix)
    ids |= set(EXTRA.get(module, []))
    assert ids
    text = comments(source)
    missing = sorted(i for i in ids if not cited(text, i))
    assert not missing, f"{module}.py: no comment cites {missing}"


def test_a_range_or_a_longer_id_is_not_a_citation():
    assert cited("# D-2: draw", "D-2") and cited("# (T-6, 4 players)", "T-6")
    assert not cited("# T-12", "T-1") and not cited("# P-1..P-3", "P-1") and not cited("# M7-2", "D-2")
