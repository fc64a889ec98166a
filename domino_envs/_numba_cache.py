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
"""
from __future__ import annotations

import hashlib
import os
import shutil
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
    if not _writable(base / name):
        fallback = Path(tempfile.gettempdir()) / f"domino_envs-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
        warnings.warn(f"domino_envs: numba cache folder {base} is not writable; caching compiled code in "
                      f"{fallback} instead (set NUMBA_CACHE_DIR to choose)", RuntimeWarning, stacklevel=3)
        base = fallback
    here = base / name
    numba.config.CACHE_DIR = str(here)
    _prune(base, keep=here)


def _writable(folder: Path) -> bool:
    """Whether files can be created in `folder` (created if missing); tried, not guessed from
    permission bits, which say nothing for root or read-only mounts."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder):
            pass
        return True
    except OSError:
        return False


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
