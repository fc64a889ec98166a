"""Point numba's on-disk cache at a folder keyed by a hash of this package's sources.

numba keys a cached function on its own file's timestamp only, so a kernel that inlines code from
another module (every game inlines layout.py and tiles.py) would keep running stale machine code
after that module changed. Keying the whole cache folder on every source file of the package
makes any edit or upgrade recompile from scratch, and an unchanged install load in about a second.
A user's own NUMBA_CACHE_DIR is respected (then staleness is theirs to manage). Folders of
other source versions unused for two weeks are removed, so upgrades do not pile up.

If that folder cannot be written (a read-only home, a sandbox), numba would quietly fall back to
writing into the package's own ``__pycache__``; instead the cache goes to a per-user folder under
the system's temporary directory, with one warning saying so.

Trust: numba's cache index is a pickle, so whoever can write a cache folder can make code run at
``import domino_envs``. A folder is used only if it is a real directory (not a link), owned by this
user and writable by nobody else: the folders this module creates are made 0700. The shared
temporary directory is where that matters (another local user can create ``domino_envs-<uid>``
there first, or squat the name with a file). When neither the cache home nor the temporary folder
is safe, compiled code goes to a fresh private folder (``tempfile.mkdtemp``: 0700, a new name)
that is removed at exit, so nothing is cached across runs, and one warning says why.

`announce_compiling` is for programs with a user watching (the `domino` command and its workers):
numba compiles in silence, for seconds to minutes on a cold cache, so they say once that it is
happening and why. Loading from the cache is not compiling and says nothing.
"""
from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import stat
import sys
import tempfile
import time
import warnings
from pathlib import Path

STALE_AFTER_S = 14 * 24 * 3600


def configure() -> None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    import numba

    pkg = Path(__file__).resolve().parent
    digest = hashlib.sha1()
    for path in sorted(pkg.rglob("*.py")):
        digest.update(str(path.relative_to(pkg)).encode())
        digest.update(path.read_bytes())
    name = f"numba-{digest.hexdigest()[:16]}"
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "domino_envs"
    problem = _unusable(base / name)
    if problem:
        fallback = Path(tempfile.gettempdir()) / f"domino_envs-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
        fallback_problem = _unusable(fallback / name)
        if fallback_problem:
            private = tempfile.mkdtemp(prefix="domino_envs-numba-")
            atexit.register(shutil.rmtree, private, ignore_errors=True)
            warnings.warn(f"domino_envs: numba cache folder {base} {problem}, and the fallback {fallback} "
                          f"{fallback_problem}; compiled code is not cached across runs (a private folder "
                          f"removed at exit; set NUMBA_CACHE_DIR to choose a cache folder)",
                          RuntimeWarning, stacklevel=3)
            numba.config.CACHE_DIR = private
            return
        warnings.warn(f"domino_envs: numba cache folder {base} {problem}; caching compiled code in "
                      f"{fallback} instead (set NUMBA_CACHE_DIR to choose)", RuntimeWarning, stacklevel=3)
        base = fallback
    here = base / name
    numba.config.CACHE_DIR = str(here)
    _prune(base, keep=here)


COMPILE_NOTICE = ("compiling {what}numba kernels: the first run after an install or upgrade compiles each "
                  "game's code once (seconds to a few minutes a game) and caches it in {cache}; "
                  "`domino warm` compiles every game's ahead")
_announcer = None


def announce_compiling(prefix: str = "domino", games: list[str] | tuple = (), stream=None) -> None:
    """From now on, the first time this process compiles a numba function (a cache miss, not a cache
    load), print one line to `stream` (standard error) saying so, naming `games` if given (what the
    command is about to play). Idempotent."""
    global _announcer
    if _announcer is not None:
        return
    from numba.core import event

    class _FirstCompile(event.Listener):
        said = False
        named = tuple(games)

        def on_start(self, ev):
            if not self.said:
                self.said = True
                out = stream if stream is not None else sys.stderr
                import numba

                what = f"{', '.join(games)}'s " if games else ""
                print(f"{prefix}: " + COMPILE_NOTICE.format(what=what, cache=numba.config.CACHE_DIR), file=out,
                      flush=True)

        def on_end(self, ev):
            pass

    _announcer = _FirstCompile()
    event.register("numba:compile", _announcer)


def announcing() -> tuple[str, ...] | None:
    """The games `announce_compiling` names in this process, or None if it is off (a worker pool
    passes it on)."""
    return None if _announcer is None else _announcer.named


def _unusable(folder: Path) -> str | None:
    """None if compiled code may be cached in `folder` (created 0700 with its parent if missing),
    else what is wrong, as words that follow the folder's name. Safe: the folder and its parent are
    real directories (not links), owned by this user, writable by no group and no other user. Usable:
    a file can be created in it (tried, not guessed from permission bits, which say nothing for root
    or read-only mounts)."""
    for path in (folder.parent, folder):
        try:
            path.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            pass  # reported below: missing, a file, or not writable
        problem = _unsafe(path)
        if problem:
            return problem
    try:
        with tempfile.NamedTemporaryFile(dir=folder):
            pass
    except OSError:
        return "is not writable"
    return None


def _unsafe(path: Path) -> str | None:
    """What makes `path` unfit to hold compiled code (a pickle index runs code on load), or None."""
    try:
        info = os.lstat(path)
    except OSError:
        return "is not writable"  # could not be created
    if stat.S_ISLNK(info.st_mode):
        return f"is not writable safely ({path} is a symbolic link)"
    if not stat.S_ISDIR(info.st_mode):
        return f"is not writable ({path} is not a folder)"
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"is not safe ({path} belongs to user id {info.st_uid}, not to this user)"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is not safe ({path} is writable by other users: mode {stat.S_IMODE(info.st_mode):o})"
    return None


def _prune(base: Path, keep: Path) -> None:
    """Best effort: drop cache folders of other source versions not touched for two weeks."""
    try:
        keep.mkdir(parents=True, exist_ok=True)
        os.utime(keep)
        now = time.time()
        for old in base.glob("numba-*"):
            if old != keep and now - old.stat().st_mtime > STALE_AFTER_S:
                shutil.rmtree(old, ignore_errors=True)
    except OSError:
        pass
