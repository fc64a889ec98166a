"""`domino --help` and every subcommand's help (issue 42): exit 0, every subcommand listed with what
it does, the installed version, and no path of the repository in any help text (an installed user
has none of them)."""
from __future__ import annotations

import contextlib
import io
import re

import pytest

from domino_training.cli import COMMANDS, main

REPO_PATH = re.compile(r"\b(training|configs|agents|docs|tests|domino_envs|domino_training)/")


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse's --help exits
            code = exit_.code or 0
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", [[], ["--help"], ["-h"], ["help"]], ids=["bare", "--help", "-h", "help"])
def test_top_level_help_lists_every_command_with_what_it_does(argv):
    code, out, _ = run(argv)
    assert code == 0
    for name, (_, what) in COMMANDS.items():
        assert re.search(rf"^  {name} +{re.escape(what)}$", out, flags=re.M), name
        assert len(what) > 15, f"{name}: say what it does"
    assert not REPO_PATH.search(out), out


def test_version_and_an_unknown_command():
    from importlib.metadata import version

    code, out, _ = run(["--version"])
    assert code == 0 and out.strip() == f"domino {version('domino-envs')}"
    code, _, err = run(["serve"])
    assert code == 2 and "'serve' is not a command" in err and "domino --help" in err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_a_help_without_repository_paths(command):
    code, out, _ = run([command, "--help"])
    assert code == 0 and out.startswith(f"usage: domino {command}"), out[:200]
    assert not REPO_PATH.search(out), f"domino {command} --help names a repository path: {REPO_PATH.search(out)[0]}"
