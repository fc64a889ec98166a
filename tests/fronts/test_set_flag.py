"""One way to set a rule on every command that takes a game (issue 42): `--set KEY=VALUE`, repeatable,
gives the same game config on train, evaluate, play, render, rate and exploit; an unknown key is one
line on stderr naming it and the allowed keys, exit status 2, on each."""
from __future__ import annotations

import contextlib
import importlib
import io

import pytest

from domino_envs.registry import config_from_pairs, make_game
from domino_training.cli import COMMANDS
from domino_training.learners.train import load, load_settings

# each command's own arguments around the --set pairs (the benchmark's games come from its suite)
LINES = {
    "train": ["draw_v0"],
    "evaluate": ["--game", "draw_v0", "--agents", "random", "greedy", "--deals", "1", "--no-progress"],
    "play": ["draw_v0", "--vs", "greedy"],
    "render": ["draw_v0", "--out", "x.png"],
    "rate": ["--game", "draw_v0", "random", "greedy", "--deals", "2"],
    "exploit": ["--exact", "random", "--game", "draw_v0"],
}
SETS = ["--set", "num_players=3", "--set", "max_pip=9"]


def config_of(command: str, argv: list[str]) -> dict:
    """The game config the command builds from its parsed arguments."""
    args = importlib.import_module(COMMANDS[command][0]).build_parser().parse_args(argv)
    if command == "train":
        return load(args.config, args.game, args.set).config
    return make_game(args.game, **config_from_pairs(args.set)).config_dict()


def test_set_gives_the_same_config_everywhere():
    configs = {command: config_of(command, line + SETS) for command, line in LINES.items()}
    expected = make_game("draw_v0", num_players=3, max_pip=9).config_dict()
    assert all(c == expected for c in configs.values()), configs


def test_train_takes_rule_run_and_param_keys_in_one_set_list():
    """The run's keys (learner, seed, budget.*, eval.*) are the run's, other dotted keys the learner's
    params, the rest rule keys."""
    run = load(None, "draw_v0", ["num_players=3", "ppo.lr=0.001", "seed=7", "learner=ppo", "budget.minutes=2"])
    assert run.config["num_players"] == 3 and run.learner_params()["ppo.lr"] == 0.001
    assert (run.run.seed, run.learner, run.run.budget.minutes) == (7, "ppo", 2) and "seed" not in run.config
    assert load_settings(None, "draw_v0", ["ppo.lr=0.001", "learner=ppo"]).train.ppo.lr == 0.001


@pytest.mark.parametrize("command", sorted(LINES))
def test_an_unknown_key_is_one_line_and_exit_2(command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = importlib.import_module(COMMANDS[command][0]).main(LINES[command] + ["--set", "colour=1"])
        except SystemExit as exit_:
            code = exit_.code
    lines = err.getvalue().strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err.getvalue(), (code, err.getvalue())
    assert f"domino {command}: error: " in lines[0] and "'colour'" in lines[0] and "allowed keys" in lines[0], lines[0]
    assert list(tmp_path.iterdir()) == [], "nothing written before the config is checked"
