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
    code, _, err = run(["launch"])
    assert code == 2 and "'launch' is not a command" in err and "domino --help" in err


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


def _options(parser):
    """(command words, action) for every option and positional of a parser and its subcommands."""
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from (((name, *words), a) for words, a in _options(sub))
        elif not isinstance(action, argparse._HelpAction):
            yield (), action


@pytest.mark.parametrize("command", sorted(c for c, (module, _) in COMMANDS.items() if module))
def test_every_option_says_what_it_does_and_its_default(command):
    """Each option of `domino <command> --help` has a help line (argparse.SUPPRESS: an old spelling kept
    hidden), and one whose default means something (not None, False or []) shows it."""
    import argparse
    import importlib

    parser = importlib.import_module(COMMANDS[command][0]).build_parser()
    formatter = parser._get_formatter()
    for words, action in _options(parser):
        name = " ".join([command, *words, "/".join(action.option_strings) or action.dest])
        if action.help == argparse.SUPPRESS:
            continue
        assert action.help and len(action.help) > 5, f"domino {name}: no help"
        if not any(action.default is nothing for nothing in (None, False, argparse.SUPPRESS)) and action.default != []:
            text = formatter._get_help_string(action) % {"default": action.default}
            assert "default" in text or str(action.default) in text, f"domino {name}: default not shown: {text}"


DANGLING = re.compile(r"(?:[,;:(\-]|\b(?:and|or|the|a|an|of|to|with|for|in|by|from|on|as|than|but|its|their))\s*$", re.I)


def unfinished(text: str) -> str | None:
    """Why `text` stops mid-sentence (a line cut from a longer docstring, say), or None: an open
    parenthesis, bracket or code quote, or a last word that needs more after it."""
    text = " ".join(text.split())
    if text.count("(") != text.count(")") or text.count("[") != text.count("]"):
        return "unbalanced brackets"
    if text.count("`") % 2:
        return "an open code quote"
    if DANGLING.search(text):
        return f"ends with {DANGLING.search(text)[0].strip()!r}"
    return None


def test_the_sentence_check_catches_cut_texts():
    for cut in ("`domino benchmark`: the whole pipeline (check the protocol, train and evaluate, aggregate, rate,",
                "Compile the games' kernels and", "the `suite", "every run of the", "a list [of runs"):
        assert unfinished(cut), cut
    for whole in ("Draw a mid-game position (PNG) or a replay (GIF).", "processes that play; the same ratings",
                  "the report (default benchmark.md for quick)"):
        assert unfinished(whole) is None, whole


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_help_text_is_whole_sentences(command):
    """What `domino <command> --help` says the command does is whole sentences (a capital first, a full
    stop last), and no option's help stops mid-sentence: a description taken as the first line of a
    wrapped docstring, or a help string cut short, fails here."""
    import argparse
    import importlib

    code, out, _ = run([command, "--help"])
    assert code == 0
    description = " ".join(out.split("\n\n")[1].split())  # the paragraph after the usage lines
    assert description[:1].isupper() and description.endswith("."), f"domino {command} --help: {description!r}"
    assert unfinished(description) is None, f"domino {command} --help: {unfinished(description)}: {description!r}"
    module = COMMANDS[command][0]
    if module is None:
        return
    parser = importlib.import_module(module).build_parser()
    formatter = parser._get_formatter()
    for words, action in _options(parser):
        if action.help and action.help != argparse.SUPPRESS:
            text = formatter._get_help_string(action) % {"default": action.default}
            name = " ".join([command, *words, "/".join(action.option_strings) or action.dest])
            assert unfinished(text) is None, f"domino {name}: {unfinished(text)}: {text!r}"
