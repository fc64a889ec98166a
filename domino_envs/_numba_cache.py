"""Point numba's on-disk cache at a folder keyed by a hash of this package's sources.

numba keys a cached function on its own file's timestamp only, so a kernel that inlines code from
another module (every game inlines layout.py and tiles.py) would keep running stale machine code
after that module changed. Keying the whole cache folder on every source file of the package
makes any edit or upgrade recompile from scratch, and an unchanged install load in about a second.
A user's own NUMBA_CACHE_DIR is respected (then staleness is theirs to manage). Folders of
other source versions unused for two weeks are removed, so upgrades do not pile up.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import time
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
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "domino_envs"
    here = base / f"numba-{digest.hexdigest()[:16]}"
    numba.config.CACHE_DIR = str(here)
    _prune(base, keep=here)


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
