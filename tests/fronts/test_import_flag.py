"""`--import MODULE_OR_FILE` on `domino evaluate` and `domino play` (training/user_code.py, as on `domino
benchmark`): the agent a file registers plays there, in `--workers` processes too (the same report
as one process), and a bad --import is one line and exit status 2. The example agent
(docs/examples/my_agent.py) runs as its docs write it."""
from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest

from domino_agents import registry
from domino_training.evaluate import evaluate
from domino_training.evaluate import main as evaluate_main
from domino_training.tools.play import main as play_main
from domino_training.user_code import import_user_code
from tests.tools.test_play import Terminal

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "my_agent.py"


def evaluate_json(tmp_path, *args: str) -> dict:
    """`domino evaluate ... --json FILE` in this process, with the registry restored afterwards (each
    call imports the example again, as each command does in its own process)."""
    out = tmp_path / f"report{len(list(tmp_path.iterdir()))}.json"
    with mock.patch.dict(registry.AGENTS), contextlib.redirect_stdout(io.StringIO()):
        evaluate_main([*args, "--no-progress", "--json", str(out)])
    return json.loads(out.read_text())


def test_evaluate_plays_an_imported_agent_with_workers_as_without(tmp_path):
    """Spawned workers start without the parent's registrations: each imports the file itself, and
    the report is the one of a single process."""
    args = ["--import", str(EXAMPLE), "--game", "sum7_v0", "--agents", "my_agent:epsilon=0.2", "random", "greedy",
            "--deals", "12", "--seed", "4"]
    one = evaluate_json(tmp_path, *args, "--workers", "1")
    two = evaluate_json(tmp_path, *args, "--workers", "2")
    assert one == two
    assert one["agents"] == ["my_agent:epsilon=0.2", "random", "greedy"] and len(one["matchups"]) == 6


def test_the_example_command_runs_as_the_docs_write_it():
    """The docs' line, run as a command from the checkout: the example's agent against random, and
    the same numbers as the agent registered in this process."""
    command = [sys.executable, "-m", "domino_training.cli", "evaluate", "--import", "docs/examples/my_agent.py",
               "--game", "draw_v0", "--agents", "my_agent", "random", "--deals", "20"]
    run = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    row = [line.split() for line in run.stdout.splitlines() if line.startswith("my_agent ")][0]
    with mock.patch.dict(registry.AGENTS):
        import_user_code(str(EXAMPLE))
        report = evaluate("draw_v0", ["my_agent", "random"], 20, seed=0, progress=False)
    m = report.matchups[("my_agent", "random")]
    assert row[:3] == ["my_agent", "random", f"{m.win_stat.mean:.3f}"] and row[-1] == "20"


def test_play_against_an_imported_agent():
    term = Terminal(answers=("n",))
    with mock.patch.dict(registry.AGENTS):
        code = play_main(["draw_v0", "--vs", "my_agent:epsilon=0.5", "--seed", "3", "--import", str(EXAMPLE)],
                         stdin=term, stdout=term)
    out = term.getvalue()
    assert code == 0 and "opponents: my_agent:epsilon=0.5" in out and "seat 1 (my_agent:epsilon=0.5):" in out
    assert "result:" in out and out.rstrip().endswith("bye")


@pytest.mark.parametrize("item,message", [
    ("no_such_file.py", "--import 'no_such_file.py': no such file"),
    ("no_such_module_here", "--import 'no_such_module_here': No module named 'no_such_module_here'"),
])
def test_a_bad_import_is_one_line_and_exit_2(item, message, capsys):
    assert play_main(["draw_v0", "--vs", "greedy", "--import", item], stdin=io.StringIO(""),
                     stdout=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    with pytest.raises(SystemExit) as exit_:
        evaluate_main(["--game", "draw_v0", "--agents", "random", "greedy", "--import", item])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_without_the_import_the_agent_is_unknown(capsys):
    assert play_main(["draw_v0", "--vs", "my_agent"], stdin=io.StringIO(""), stdout=io.StringIO()) == 2
    assert "unknown agent 'my_agent'" in capsys.readouterr().err


def test_rate_and_exploit_take_an_imported_agent(tmp_path, capsys):
    """`domino rate` and `domino exploit --exact` know the agent --import registers, and without the
    import it is unknown (one line, exit 2)."""
    from domino_training.benchmark.ratings import main as rate_main
    from domino_training.exploit.cli import main as exploit_main

    with mock.patch.dict(registry.AGENTS):
        assert rate_main(["--game", "draw_v0", "--deals", "4", "--bootstrap", "10", "--import", str(EXAMPLE),
                          "my_agent", "random"]) == 0
    assert "my_agent" in capsys.readouterr().out
    assert rate_main(["--game", "draw_v0", "--deals", "4", "my_agent", "random"]) == 2
    assert "unknown agent 'my_agent'" in capsys.readouterr().err
    small = ["--game", "draw_v0", "--set", "max_pip=2", "--set", "hand_size=2"]
    with mock.patch.dict(registry.AGENTS):
        assert exploit_main(["--exact", "my_agent", *small, "--import", str(EXAMPLE)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["agent"] == "my_agent" and result["exploitability"] >= 0
    assert exploit_main(["--exact", "my_agent", *small]) == 2
    assert "my_agent" in capsys.readouterr().err
