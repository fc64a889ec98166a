"""`domino --help` and every subcommand's help (issue 42): exit 0, every subcommand listed with what
it does, the installed version, and no path of the repository in any help text (an installed user
has none of them)."""
from __future__ import annotations

import contextlib
import io
import re
import shlex

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


@pytest.mark.parametrize("command", sorted(c for c, (module, _) in COMMANDS.items() if module))
def test_every_commands_help_examples_parse(command, monkeypatch):
    """Each help ends with examples; each parses with the command's own parser and names real games,
    agents and configs (the docs' check, tests/docs/test_docs.py)."""
    from tests.docs.test_docs import ROOT, check_domino_command

    monkeypatch.chdir(ROOT)
    out = run([command, "--help"])[1]
    examples = [shlex.split(line, comments=True)[1:] for line in out.split("examples:\n", 1)[-1].splitlines()
                if line.startswith("  domino ")]
    assert examples and all(words[0] == command for words in examples), out
    for words in examples:
        check_domino_command(words)
