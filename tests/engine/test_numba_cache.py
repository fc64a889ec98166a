"""The numba cache's pruning (domino_envs/_numba_cache.py): the folders of other source versions unused
for STALE_AFTER_S are removed when the package picks its cache folder; the current one, recent ones and
anything not named numba-* stay."""
from __future__ import annotations

import os
import time

import numba

from domino_envs import _numba_cache


def _folder(path, age_s: float):
    path.mkdir(parents=True)
    (path / "index.nbi").write_text("x")
    t = time.time() - age_s
    os.utime(path, (t, t))
    return path


def test_configure_removes_only_other_versions_unused_for_two_weeks(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(numba.config, "CACHE_DIR", numba.config.CACHE_DIR)  # restored after the test
    base = tmp_path / "domino_envs"
    stale = _folder(base / "numba-0123456789abcdef", _numba_cache.STALE_AFTER_S + 3600)
    recent = _folder(base / "numba-fedcba9876543210", _numba_cache.STALE_AFTER_S - 3600)
    other = _folder(base / "mutations", 10 * _numba_cache.STALE_AFTER_S)
    _numba_cache.configure()
    here = numba.config.CACHE_DIR
    assert os.path.dirname(here) == str(base) and os.path.basename(here).startswith("numba-")
    assert not stale.exists()
    assert recent.exists() and other.exists() and os.path.isdir(here)
    # the folder in use is touched, so another version's run two weeks on does not prune it
    os.utime(here, (0, 0))
    _numba_cache._prune(base, keep=base / os.path.basename(here))
    assert time.time() - os.stat(here).st_mtime < 3600


def test_a_folder_in_use_by_another_version_is_kept_until_it_is_stale(tmp_path):
    base = tmp_path / "cache"
    keep = base / "numba-current"
    old = _folder(base / "numba-old", _numba_cache.STALE_AFTER_S + 60)
    young = _folder(base / "numba-young", 60)
    _numba_cache._prune(base, keep=keep)
    assert keep.is_dir() and young.exists() and not old.exists()


def test_a_users_own_numba_cache_dir_is_left_alone(tmp_path, monkeypatch):
    stale = _folder(tmp_path / "domino_envs" / "numba-0123456789abcdef", 10 * _numba_cache.STALE_AFTER_S)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(numba.config, "CACHE_DIR", numba.config.CACHE_DIR)
    before = numba.config.CACHE_DIR
    _numba_cache.configure()
    assert numba.config.CACHE_DIR == before and stale.exists()
