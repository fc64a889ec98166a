"""One declaration per shared flag (issue 59): `--workers`, `--address`, `--import`, `--set` and `--seed` are
declared only in training/commands.py (add_workers, add_address, add_import, add_set, add_seed), with one help
text and one check, and every parser that takes one gets it from there; `--set` means rule keys on every
command, and on `domino exploit SPEC` (as on `domino train`) also the learner's params under their dotted names.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import io
from pathlib import Path

import pytest

from domino_training import commands
from domino_training.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[2]
DECLARED_IN = ROOT / "training" / "commands.py"


def declarations(source: str) -> list[tuple[int, str]]:
    """(line, flag) for each add_argument call of the source that names a shared flag among its strings."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument":
            found += [(node.lineno, a.value) for a in node.args
                      if isinstance(a, ast.Constant) and a.value in commands.SHARED_FLAGS]
    return found


def test_the_scan_finds_a_flag_declared_by_hand():
    """Not vacuous: the scan sees the spellings a second declaration would take."""
    source = ('p.add_argument("--workers", type=int)\nbr.add_argument("-s", "--seed")\n'
              'p.add_argument("--sets")\nadd_workers(p, "play")\n')
    assert declarations(source) == [(1, "--workers"), (2, "--seed")]


def test_no_shared_flag_is_declared_outside_commands_py():
    """Every package and script of the project: a parser that declares `--workers` (or another shared flag)
    itself has its own help and check, which is what this issue removed."""
    places = []
    for folder in ("domino_envs", "agents", "training"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path != DECLARED_IN:
                places += [f"{path.relative_to(ROOT)}:{line}: {flag}" for line, flag in declarations(path.read_text())]
    assert places == [], "declare these with training/commands.py's add_* functions:\n" + "\n".join(places)
    assert {flag for _, flag in declarations(DECLARED_IN.read_text())} == set(commands.SHARED_FLAGS)


def parsers():
    """(name, parser) of every `domino` command that has one."""
    for name, (module, _) in sorted(COMMANDS.items()):
        if module:
            yield name, importlib.import_module(module).build_parser()


def shared_actions(parser):
    for action in parser._actions:
        for flag in action.option_strings:
            if flag in commands.SHARED_FLAGS:
                yield flag, action


def test_every_command_takes_the_one_declaration():
    """Each shared flag of each command has the one check (its type) and help pattern of commands.py."""
    checks = {"--workers": commands.workers_count, "--seed": commands.seed_value}
    seen = set()
    for name, parser in parsers():
        for flag, action in shared_actions(parser):
            seen.add(flag)
            assert action.type is checks.get(flag), f"domino {name} {flag}: type {action.type}"
            assert action.dest == {"--import": "imports"}.get(flag, flag[2:]), f"domino {name} {flag}"
    assert seen == set(commands.SHARED_FLAGS)


def test_the_checks_refuse_what_the_library_refuses():
    for check, bad in ((commands.workers_count, ["0", "-1", "two", "1.5"]), (commands.seed_value, ["-4", "x"])):
        for text in bad:
            with pytest.raises(argparse.ArgumentTypeError):
                check(text)
    assert commands.workers_count("3") == 3 and commands.seed_value("0") == 0


def test_every_command_with_a_set_takes_rule_keys():
    """tests/fronts/test_set_flag.py plays `--set num_players=3 --set max_pip=9` through every command that
    has a --set: a new command with one must be added there."""
    from tests.fronts.test_set_flag import LINES

    with_set = {name for name, parser in parsers() if any(f == "--set" for f, _ in shared_actions(parser))}
    assert with_set == set(LINES), with_set ^ set(LINES)


def exploit(argv: list[str]) -> tuple[int, list[str]]:
    from domino_training.exploit.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = exit_.code
    return code, err.getvalue().strip().splitlines()


def test_exploit_param_is_refused_naming_set(tmp_path, monkeypatch):
    """The old spelling is refused in one line naming the new, before anything is trained or written."""
    from domino_training.exploit import best_response

    monkeypatch.setattr(best_response, "main", lambda args: 0)  # were it accepted: no training here
    code, lines = exploit(["random", "--game", "draw_v0", "--param", "ppo.ent_coef=0.01", "--out", str(tmp_path / "o")])
    assert code == 2 and len(lines) == 1, lines
    assert lines[0] == ("domino exploit: error: --param ppo.ent_coef=0.01 is now --set ppo.ent_coef=0.01 (a "
                        "learner's param under its dotted name, beside the rule keys)")
    assert not (tmp_path / "o").exists()


def test_exploit_set_splits_rule_keys_from_learner_params(monkeypatch):
    """A learned best response gets the dotted keys as its learner's params and the rest as rule keys;
    --exact takes rule keys only (a learner param there is one line, exit 2)."""
    from domino_training.exploit import best_response

    seen = {}
    monkeypatch.setattr(best_response, "main", lambda args: seen.update(set=args.set, param=args.param) or 0)
    code, _ = exploit(["random", "--game", "draw_v0", "--set", "max_pip=2", "--set", "ppo.ent_coef=0.01",
                       "--set", "hand_size=2", "--set", "network.hidden=[16]"])
    assert code == 0 and seen == {"set": ["max_pip=2", "hand_size=2"], "param": {"ppo.ent_coef": 0.01, "network.hidden": [16]}}
    code, lines = exploit(["--exact", "random", "--game", "draw_v0", "--set", "max_pip=2", "--set", "ppo.lr=1"])
    assert code == 2 and len(lines) == 1 and "--set ppo.lr:" in lines[0] and "rule keys only" in lines[0], lines
