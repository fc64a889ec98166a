"""A user's own code on the command line: ``--import MODULE_OR_FILE`` of `domino evaluate`, `domino play`,
`domino rate`, `domino exploit`, `domino train` and `domino benchmark`.

A dotted module name or a path ending in .py is imported before anything is built, so the agents and
learners it registers (`register_agent`, `register_learner`) are known by name. A command that spawns
workers passes `import_all` and the same list as `run_jobs`' init: a spawned process starts without
the parent's registrations, so each worker imports the list again before its jobs.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

from domino_envs.errors import ConfigError


def import_user_code(item: str) -> None:
    """Import a module (dotted name) or a file (path ending in .py); ConfigError if there is none."""
    if item.endswith(".py"):
        path = Path(item)
        if not path.is_file():
            raise ConfigError(f"--import {item!r}: no such file")
        spec = importlib.util.spec_from_file_location(f"domino_user_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # dataclasses and pickling look the module up by name
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(spec.name, None)
            raise
    else:
        try:
            importlib.import_module(item)
        except ImportError as err:
            raise ConfigError(f"--import {item!r}: {err}") from None


def import_all(items: list[str]) -> None:
    """Import every item in order: a worker's start (run_jobs' init) with the command's --import list."""
    for item in items:
        import_user_code(item)
