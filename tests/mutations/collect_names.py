"""A pytest plugin for tests/project/test_mutation_anchors.py: at the end of a --collect-only run,
write each collected test's node id and the names `-k` matches it by (pytest's own KeywordMatcher)
to the JSON file named by DOMINO_COLLECTED_NAMES, so a planting's selection can be resolved without
running one pytest a planting."""
from __future__ import annotations

import json
import os

from _pytest.mark import KeywordMatcher


def pytest_collection_finish(session):
    out = os.environ.get("DOMINO_COLLECTED_NAMES")
    if out:
        with open(out, "w") as fh:
            json.dump({item.nodeid: sorted(KeywordMatcher.from_item(item)._names) for item in session.items}, fh)
