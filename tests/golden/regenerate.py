"""Rewrite the golden transcripts and say which changed.

    .venv/bin/python -m tests.golden.regenerate                  # every family
    .venv/bin/python -m tests.golden.regenerate draw_v0 sum7_4p  # env names and/or family names
    .venv/bin/python -m tests.golden.regenerate --check          # write nothing, exit 1 if any differ

Actions are drawn afresh from each seed (not replayed), so after a change of masks the games follow
the new decisions. For each changed file it prints the first differing line and the count of lines
changed; review the rest with `git diff tests/golden/`. Transcript files that no family names any
more are listed (delete them by hand).
"""
from __future__ import annotations

import argparse
import difflib
import sys

from . import FAMILIES, GOLDEN_DIR, families_of, path_of, transcript


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden.regenerate", description=__doc__.split("\n")[0])
    parser.add_argument("selectors", nargs="*", help="env names (draw_v0) or family names (draw_2p); default all")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a transcript would change")
    args = parser.parse_args(argv)
    changed, unchanged = [], []
    for family in families_of(args.selectors):
        path = path_of(family)
        new = "\n".join(transcript(family)) + "\n"
        old = path.read_text() if path.exists() else None
        if old == new:
            unchanged.append(family)
            continue
        changed.append(family)
        if old is None:
            print(f"new       {path.name}: {new.count(chr(10))} lines")
        else:
            old_lines, new_lines = old.splitlines(), new.splitlines()
            first = next(i for i, (a, b) in enumerate(zip(old_lines + [None], new_lines + [None])) if a != b)
            n_diff = sum(1 for d in difflib.ndiff(old_lines, new_lines) if d[:1] in "+-")
            print(f"changed   {path.name}: {n_diff} lines differ, first at line {first + 1}:")
            print(f"    was: {old_lines[first] if first < len(old_lines) else '<end of file>'}")
            print(f"    now: {new_lines[first] if first < len(new_lines) else '<end of file>'}")
        if not args.check:
            path.write_text(new)
    for family in unchanged:
        print(f"unchanged {path_of(family).name}")
    stale = sorted(p.name for p in GOLDEN_DIR.glob("*.txt") if p.stem not in FAMILIES)
    for name in stale:
        print(f"stale     {name}: no family of that name (delete it)")
    verb = "would change" if args.check else "changed"
    print(f"{len(changed)} {verb}, {len(unchanged)} unchanged" + (f", {len(stale)} stale" if stale else ""))
    return 1 if (args.check and (changed or stale)) else 0


if __name__ == "__main__":
    sys.exit(main())
