"""Plant each bug of issue 16 on a copy of the repo, one at a time, and check the tests catch it.

    .venv/bin/python tests/mutations/run.py            # every mutation (several minutes: each
                                                       # copy compiles its numba kernels cold)
    .venv/bin/python -m tests.mutations.run pete_sample_hidden d5_last_winner   # some of them
    .venv/bin/python tests/mutations/run.py --list

For each mutation: copy the repo (without .git, .venv, caches) to a temporary folder, apply its
textual replacements (each anchored on a snippet that must occur exactly once: a missing or
ambiguous anchor stops the run loudly, so an edit that moved the code shows up as an error, not as
a silently unplanted bug), run its test selection there with pytest, and report "caught" (the
tests failed) or "MISSED" (they passed). First the same selections run unmutated in the repo
itself: they must pass, or "caught" would mean nothing. Exit status 1 if any mutation is missed
or errs. Not part of the normal suite (slow); re-run it after merging changes to the mutated code.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 1200


@dataclass
class Mutation:
    name: str
    what: str
    path: str
    replacements: list[tuple[str, str]]
    tests: list[str] = field(default_factory=list)  # pytest arguments (files, -k ...)


MUTATIONS = [
    Mutation(
        "pete_sample_hidden", "Seven-Toed Pete's sample_hidden hands the next seat its true hand",
        "domino_envs/games/pete.py",
        [("        allowed[j] = unseen & ~forbid\n",
          "        allowed[j] = s[HANDS + j] if j == (v + 1) % NP else unseen & ~forbid\n")],
        ["tests/test_sampling.py", "-k", "pete"]),
    Mutation(
        "matchup_rotation_deal", "run_matchup plays a different deal in each seat rotation",
        "training/evaluate.py",
        [("totals = play_hand(game, state, seats, engine_seed, agent_seeds, recorder=recorder)",
          "totals = play_hand(game, state, seats, mix_seed(engine_seed, k), agent_seeds, recorder=recorder)")],
        ["tests/test_bite.py", "tests/test_evaluate.py", "-k", "matchup or rotation or evaluate or deal"]),
    Mutation(
        "d5_last_winner", "D-5 read as 'the last hand's winner leads'",
        "domino_envs/games/draw.py",
        [("        first = s[LAST_PLACER]\n",
          "        first = s[LAST_WINNER] if s[LAST_WINNER] >= 0 else s[LAST_PLACER]\n")],
        ["tests/test_bite.py", "tests/games/test_draw.py", "-k", "d5"]),
    Mutation(
        "draw_voids_never_reset", "Draw voids never reset after kept draws",
        "domino_envs/games/draw.py",
        [("s[VOID + seat] = ends if kept > 0 else (s[VOID + seat] | ends)",
          "s[VOID + seat] = s[VOID + seat] | ends")],
        ["tests/test_bite.py", "-k", "voids"]),
    Mutation(
        "draw_obs_absolute_seats", "Draw/Block played_by and voids in absolute seats",
        "domino_envs/games/draw.py",
        [("s[PLAYED_MASK + (v + r if v + r < n else v + r - n)]", "s[PLAYED_MASK + r]"),
         ("s[VOID + (v + r if v + r < n else v + r - n)]", "s[VOID + r]")],
        ["tests/test_bite.py", "-k", "seat_relative"]),
    Mutation(
        "vector_finals_after_reset", "the vector env copies final_states after the auto-reset",
        "domino_envs/vector.py",
        [("            if not _reset_to_decision(g, s, next_seed(s, H_RNG), p):\n"
          "                return n_final, i, NO_DECISION\n", ""),
         ("        if done:\n", "        if done:\n            _reset_to_decision(g, s, next_seed(s, H_RNG), p)\n")],
        ["tests/test_bite.py", "-k", "final_states and draw"]),
    Mutation(
        "pimc_worst_action", "PIMC picks the worst action",
        "agents/pimc.py",
        [("primary, secondary = (win, ret) if self.objective == \"win\" else (ret, win)",
          "primary, secondary = (-win, -ret) if self.objective == \"win\" else (-ret, -win)")],
        ["tests/test_pimc.py", "-k", "clearly"]),
]


def _ignore(folder, names):
    return {n for n in names if n in (".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis")}


def apply(mutation: Mutation, root: Path) -> None:
    path = root / mutation.path
    src = path.read_text()
    for anchor, new in mutation.replacements:
        count = src.count(anchor)
        if count != 1:
            raise SystemExit(f"mutation {mutation.name}: anchor found {count} times in {mutation.path} "
                             f"(must be exactly once): {anchor!r}")
        src = src.replace(anchor, new)
    path.write_text(src)


def pytest_run(cwd: Path, tests: list[str]) -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=str(cwd), PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:randomly", "-p", "no:cacheprovider", *tests]
    try:
        out = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return -1, f"timed out after {TIMEOUT_S} s"
    lines = (out.stdout + out.stderr).strip().splitlines()
    return out.returncode, lines[-1] if lines else ""


def lay_installed_names(copy: Path) -> None:
    """Give the copy's folders their installed names (pyproject.toml's package-dir) as links, so that
    with the copy first on PYTHONPATH its own agents/, training/ and configs/ are what is imported."""
    (copy / "domino_agents").symlink_to("agents", target_is_directory=True)
    (copy / "domino_training").symlink_to("training", target_is_directory=True)
    (copy / "training" / "game_configs").symlink_to("../configs", target_is_directory=True)


def check_imports_from(cwd: Path) -> None:
    """The copy's modules must be the ones imported (not the editable install's)."""
    env = dict(os.environ, PYTHONPATH=str(cwd))
    code = ("import domino_envs, domino_agents, domino_training, domino_training.game_configs as c; "
            "print(domino_envs.__file__, domino_agents.__file__, domino_training.__file__, c.__file__)")
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True)
    paths = out.stdout.split()
    if out.returncode != 0 or not paths or not all(p.startswith(str(cwd)) for p in paths):
        raise SystemExit(f"the copy at {cwd} is not what Python imports: {out.stdout}{out.stderr}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="mutations to run (default: all)")
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    ap.add_argument("--no-baseline", action="store_true", help="skip the unmutated run")
    args = ap.parse_args(argv)
    if args.list:
        for m in MUTATIONS:
            print(f"{m.name:28} {m.what}")
        return 0
    known = {m.name: m for m in MUTATIONS}
    unknown = [n for n in args.names if n not in known]
    if unknown:
        raise SystemExit(f"unknown mutations {unknown}; known: {list(known)}")
    chosen = [known[n] for n in args.names] if args.names else MUTATIONS
    if not args.no_baseline:
        for m in chosen:
            code, last = pytest_run(ROOT, m.tests)
            if code != 0:
                raise SystemExit(f"baseline: {m.name}'s tests fail on the unmutated repo ({last}); fix that first")
        print("baseline: every selection passes unmutated", flush=True)
    results = []
    for m in chosen:
        t0 = time.time()
        with tempfile.TemporaryDirectory(prefix=f"mut-{m.name}-") as tmp:
            copy = Path(tmp) / "repo"
            shutil.copytree(ROOT, copy, ignore=_ignore)
            apply(m, copy)
            lay_installed_names(copy)
            check_imports_from(copy)
            code, last = pytest_run(copy, m.tests)
        verdict = {0: "MISSED", 1: "caught"}.get(code, f"ERROR (pytest exit {code})")
        results.append((m, verdict, last, time.time() - t0))
        print(f"{m.name:28} {verdict:8} {time.time() - t0:6.0f} s  {last}", flush=True)
    print("\nmutation                     result    what")
    for m, verdict, _, _ in results:
        print(f"{m.name:28} {verdict:9} {m.what}")
    return 0 if all(v == "caught" for _, v, _, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
