"""The README's usage example runs as written."""
from __future__ import annotations

import contextlib
import io
from pathlib import Path

import domino_envs
from tests.helpers import fenced_blocks, run_snippet

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_usage_example_runs():
    blocks = fenced_blocks(README.read_text())
    assert blocks, "README has no python example"
    namespace = run_snippet(blocks[0], str(README))
    assert namespace["env"].agents == []  # every agent stepped out at the end


def test_readme_deal_example_runs_on_all_six_envs():
    """The README's deal block deals one hand-set deal per env in the one deal format, and each
    env starts from exactly that deal (hands as dealt, less what forced moves played)."""
    block = [b for b in fenced_blocks(README.read_text()) if '"deal": deal' in b]
    assert len(block) == 1, "README has no deal example"
    namespace = run_snippet(block[0], str(README))
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


def test_readme_play_watch_replay_commands_run_as_written(tmp_path, monkeypatch):
    """Every command of the README's "Play, watch, replay" block runs as written, in order, in a
    scratch folder: the plays read a scripted keyboard (move 1 each turn, then "n" to stop), the
    play with --save writes the replay the next lines replay and animate, and each command's
    output file exists."""
    import shlex

    from domino_envs.replay import load
    from domino_training.cli import main

    block = [b for b in fenced_blocks(README.read_text(), "bash", include_not_run=True) if "domino play" in b and "rllib:" not in b]
    assert len(block) == 1, "README has no play/replay block"  # the RLlib block is test_rllib's
    commands = [shlex.split(line, comments=True) for line in block[0].splitlines()]
    commands = [c for c in commands if c]
    assert [c[1] for c in commands] == ["play", "play", "replay", "evaluate", "render", "render"]
    monkeypatch.chdir(tmp_path)
    for argv in commands:
        assert argv[0] == "domino"
        keyboard = io.StringIO("1\n" * 400 + "n\n")
        monkeypatch.setattr("sys.stdin", keyboard)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            code = main(argv[1:])
        assert code == 0, (argv, out.getvalue()[-2000:])
        for flag in ("--save", "--save-replays", "--out"):
            if flag in argv:
                assert (tmp_path / argv[argv.index(flag) + 1]).stat().st_size > 0, argv
    (game,) = load(tmp_path / "games.jsonl")
    game.verify()
