"""The README's usage example runs as written; so do the examples that moved from it to the
reference pages (the deal example to docs/envs.md, the play/replay commands to docs/tools.md). The
README stays a front door: short, with the install commands and every extra."""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import domino_envs
from tests.helpers import fenced_blocks, run_snippet

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
ENVS_PAGE = ROOT / "docs" / "envs.md"
TOOLS_PAGE = ROOT / "docs" / "tools.md"
README_MAX_LINES = 200


def usage_blocks() -> list[str]:
    """The ```python blocks of the README's Usage section, in order (tests/project/test_install.py runs
    them in a fresh install too)."""
    section = README.read_text().split("\n## Usage\n", 1)[1].split("\n## ", 1)[0]
    blocks = fenced_blocks(section)
    assert blocks, "README's Usage section has no python example"
    return blocks


def test_readme_usage_example_runs():
    first, *more = usage_blocks()
    namespace = run_snippet(first, str(README))
    assert namespace["env"].agents == []  # every agent stepped out at the end
    for code in more:
        run_snippet(code, str(README))


def test_deal_example_runs_on_all_six_envs():
    """docs/envs.md's deal block deals one hand-set deal per env in the one deal format, and each
    env starts from exactly that deal (hands as dealt, less what forced moves played)."""
    block = [b for b in fenced_blocks(ENVS_PAGE.read_text()) if '"deal": deal' in b]
    assert len(block) == 1, "docs/envs.md has no deal example"
    namespace = run_snippet(block[0], str(ENVS_PAGE))
    deals = namespace["deals"]
    assert sorted(deals) == sorted(domino_envs.game_names())
    for name, (config, deal) in deals.items():
        game = domino_envs.make_game(name, **config)
        state = game.new_state()
        game.reset(state, 0)
        game.set_deal(state, deal)
        held = [set(map(str, game.hand(state, k))) for k in range(game.num_players)]
        obs = game.decode(game.observe(state, 0))
        played = int(obs["played_by"].sum())
        drawn = int(obs["drawn"].sum()) if "drawn" in obs else 0
        dealt = sum(len(h) for h in deal["hands"])
        assert sum(len(h) for h in held) + played == dealt + drawn, name
        stock = set(map(str, deal.get("stock", [])))
        for k, hand in enumerate(deal["hands"]):
            assert held[k] <= set(map(str, hand)) | stock, (name, k)


def test_readme_names_the_two_commands():
    text = README.read_text()
    assert "make test" in text and "make demo" in text


def test_readme_names_every_extra_and_the_pip_command():
    """Every optional dependency group of pyproject.toml is named in the README, and the README's
    pip command installs the extras by their real names."""
    section = (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]\n", 1)[1]
    section = section.split("\n[", 1)[0]  # up to the next table (tomllib is Python 3.11+, the project 3.10+)
    extras = re.findall(r"^([\w-]+) = \[", section, flags=re.M)
    assert {"train", "render", "openspiel", "rllib"} <= set(extras), extras
    text = README.read_text()
    for extra in extras:
        assert f"`{extra}`" in text, f"README does not name the {extra} extra"
    (named,) = re.findall(r'pip install "domino-envs\[([\w,]+)\]"', text)
    assert set(named.split(",")) <= set(extras), named


def test_readme_stays_short():
    lines = len(README.read_text().splitlines())
    assert lines <= README_MAX_LINES, f"README has {lines} lines; reference belongs on a docs/ page"


def test_play_watch_replay_commands_run_as_written(tmp_path, monkeypatch):
    """Every command of docs/tools.md's "Play, watch, replay" block runs as written, in order, in a
    scratch folder: the plays read a scripted keyboard (move 1 each turn, then "n" to stop), the
    play with --save writes the replay the next lines replay and animate, and each command's
    output file exists."""
    import shlex

    from domino_envs.replay import load
    from domino_training.cli import main

    text = TOOLS_PAGE.read_text()
    block = [b for b in fenced_blocks(text, "bash", include_not_run=True) if "domino play" in b and "rllib:" not in b]
    assert len(block) == 1, "docs/tools.md has no play/replay block"  # the RLlib block (docs/rllib.md) is test_rllib's
    commands = [shlex.split(line, comments=True) for line in block[0].splitlines()]
    commands = [c for c in commands if c]
    assert [c[1] for c in commands] == ["play", "play", "replay", "evaluate", "render", "render", "render"]
    monkeypatch.chdir(tmp_path)
    for argv in commands:
        assert argv[0] == "domino"
        keyboard = io.StringIO("1\n" * 400 + "n\n")
        monkeypatch.setattr("sys.stdin", keyboard)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            code = main(argv[1:])
        assert code == 0, (argv, out.getvalue()[-2000:])
        for flag in ("--save", "--save-replays", "--out", "--html"):
            if flag in argv:
                assert (tmp_path / argv[argv.index(flag) + 1]).stat().st_size > 0, argv
    (game,) = load(tmp_path / "games.jsonl")
    game.verify()
