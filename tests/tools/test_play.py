"""`domino play` (domino_envs/play.py): scripted terminal games through an injected input stream
and one real subprocess with piped stdin, bad entries answered with one clear line and a new
prompt, nothing hidden shown, replays saved, bad arguments refused with exit status 2."""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from domino_envs import make_game
from domino_envs.replay import load
from domino_training.tools.play import Session
from domino_training.tools.play import main as play_main

REPO = Path(__file__).resolve().parents[2]


class Terminal(io.StringIO):
    """Output stream and keyboard at once: answers each prompt from a script of entries for the
    move prompts (then move 1 forever) and `answers` for "another hand?"; records what was typed."""

    def __init__(self, moves=(), answers=("n",), limit=5000):
        super().__init__()
        self.moves = list(moves)
        self.answers = list(answers)
        self.typed = []
        self.limit = limit

    def readline(self):
        shown = self.getvalue()
        prompt = shown[shown.rfind("\n") + 1:]
        if len(self.typed) >= self.limit:
            return ""  # end of input
        if prompt.startswith("another hand?"):
            entry = self.answers.pop(0) if self.answers else None
        else:
            assert prompt.startswith("move ["), f"unexpected prompt {prompt!r}"
            entry = self.moves.pop(0) if self.moves else "1"
        if entry is None:
            return ""
        self.typed.append(entry)
        self.write(entry + "\n")  # echo, as a terminal shows what was typed
        return entry + "\n"


def session(name="draw_v0", vs="greedy", seat=0, seed=11, config=None, save=None, **kw):
    term = Terminal(**kw)
    game = make_game(name, **(config or {}))
    return Session(game, vs, seat, seed, save, stdin=term, stdout=term), term


def test_scripted_game_with_bad_entries(tmp_path):
    """A whole game against a baseline through the input stream; each bad entry (empty, not a
    number, out of range, an illegal move by id and by name) gets its own one-line message and the
    prompt again; the game finishes with a result and is saved as a replay that verifies."""
    bad = ["", "abc", "99", "0", "#0", "play 0-0 on the right end", "?"]
    s, term = session(save=str(tmp_path / "g.jsonl"), moves=bad)
    assert s.run() == 0
    out = term.getvalue()
    assert "empty entry: type a move number 1.." in out
    assert "'abc' is not a number or a move: type a move number 1.." in out
    assert re.search(r"\n99 is out of range: choose a move 1\.\.\d+\n", out)
    assert re.search(r"\n0 is out of range: choose a move 1\.\.\d+\n", out)
    assert "illegal move: play 0-0 on the left end (or lead it) is not allowed now" in out
    assert "illegal move: play 0-0 on the right end is not allowed now" in out
    assert "'?' or 'h': this help and the moves again" in out
    # every bad entry was followed by the prompt again, and the state did not move meanwhile
    before_first_move = out.split("seat 0 (you):")[0]
    assert before_first_move.count("move [1-") == len(bad) + 1  # a prompt for each entry + the one played
    assert before_first_move.count("your move (seat 0):") == 1  # the same decision all along
    assert re.search(r"result: (you won|you lost|a tie|you tied).* returns \[", out)
    assert "saved to" in out and out.rstrip().endswith("bye")
    (rep,) = load(tmp_path / "g.jsonl")
    rep.verify()
    assert rep.agents == ["human", "greedy"]
    assert [st.seat for st in rep.steps].count(0) == sum(1 for t in term.typed if t != "n") - len(bad)


@pytest.mark.parametrize("name,config", [
    ("draw_v0", {}), ("block_v0", {"num_players": 3}), ("seven_toed_pete_v0", {}),
    ("racehorse_v0", {"num_players": 4, "teams": True}), ("sum7_v0", {}), ("magic7_v0", {"num_players": 3}),
])
def test_every_game_plays_to_a_result_and_hides_the_others(tmp_path, name, config):
    """Every env plays through: the person's table is their own view only (no other seat's hand)."""
    seat = 1
    s, term = session(name, "random", seat, seed=4, config=config, save=str(tmp_path / "r.jsonl"))
    assert s.run() == 0
    out = term.getvalue()
    assert "result:" in out
    held = re.findall(r"seat (\d+) holds", out)
    assert held and set(held) == {str(seat)}
    (rep,) = load(tmp_path / "r.jsonl")
    rep.verify()


def test_match_mode_another_hand_and_per_hand_results(tmp_path):
    s, term = session("draw_v0", "greedy", 0, seed=2, config={"match": True, "target": 40},
                      answers=["maybe", "y", "n"], save=str(tmp_path / "m.jsonl"))
    assert s.run() == 0
    out = term.getvalue()
    assert "'maybe': answer y or n" in out
    assert out.count("result:") == 2 and "=== draw_v0 game 2" in out
    assert "--- hand 1 over: this hand [" in out and "match so far [" in out
    reps = load(tmp_path / "m.jsonl")
    assert len(reps) == 2 and reps[0].seed != reps[1].seed
    for rep in reps:
        rep.verify()


def test_end_of_input_and_quit_end_cleanly():
    s, term = session(limit=3, moves=["x"])
    assert s.run() == 0
    out = term.getvalue()
    assert "end of input: quitting" in out and "quit: the game in progress is not saved" in out
    s, term = session(moves=["2", "q"])
    assert s.run() == 0
    assert term.getvalue().rstrip().endswith("quit: the game in progress is not saved")


def first_decision(seed=5):
    """A draw_v0 session and the legal actions of a deal's first decision (for parse tests)."""
    game = make_game("draw_v0")
    row = game.new_state()
    game.reset(row, seed)
    return session()[0], game, game.legal_actions(row)


def test_move_by_name_and_tile():
    s, game, legal = first_decision()
    names = [game.describe_action(a) for a in legal]
    assert s.parse(names[1], legal) == (legal[1], "")
    tile = names[0].split()[1]  # "play 3-5 on ..."
    fits = [a for a in legal if tile in game.describe_action(a).split()]
    if len(fits) == 1:
        assert s.parse(tile, legal) == (fits[0], "")
    action, msg = s.parse("#" + str(game.num_actions), legal)
    assert action is None and "not an action id" in msg


def test_a_tile_in_either_order_and_as_the_hand_shows_it():
    """Issue 42: `6-4` never matched (names are written low-high), nor did `4|6` as the hand shows it."""
    s, game, legal = first_decision()
    tiles = [w for a in legal for w in game.describe_action(a).split() if re.fullmatch(r"\d+-\d+", w)]
    unique = [t for t in tiles if tiles.count(t) == 1 and t.split("-")[0] != t.split("-")[1]]
    assert unique, [game.describe_action(a) for a in legal]
    low, high = unique[0].split("-")
    expected = s.parse(f"{low}-{high}", legal)
    assert expected[0] in legal
    for typed in (f"{high}-{low}", f"{low}|{high}", f"{high}|{low}", f"{high} | {low}"):
        assert s.parse(typed, legal) == expected, typed


def test_quitting_between_games_says_the_finished_games_are_saved(tmp_path):
    s, term = session(answers=[None], save=str(tmp_path / "g.jsonl"))  # end of input at "another hand?"
    assert s.run() == 0
    out = term.getvalue().rstrip()
    assert out.endswith(f"quit: every finished game is saved in {tmp_path / 'g.jsonl'}") and "not saved" not in out
    assert len(load(str(tmp_path / "g.jsonl"))) == 1


def test_replay_shows_the_forced_moves_play_showed(tmp_path):
    """Issue 42: `domino replay` left out the moves the engine made by itself; it now prints the same
    'forced:' lines, in the same order, as the game showed while it was played."""
    from domino_training.tools.replay_view import print_replay

    s, term = session(seed=3, save=str(tmp_path / "g.jsonl"))
    s.run()
    shown = re.findall(r"forced: [^\n]*", term.getvalue().split("shown as 'forced:')", 1)[1])
    printed = io.StringIO()
    print_replay(load(str(tmp_path / "g.jsonl"))[0], table=False, file=printed)
    assert shown and re.findall(r"forced: [^\n]*", printed.getvalue()) == shown


def test_trained_opponent_plays():
    s, term = session("sum7_v0", "trained", 0, seed=1)
    assert s.run() == 0
    assert "result:" in term.getvalue() and "seat 1 (trained):" in term.getvalue()


@pytest.mark.parametrize("args,message", [
    (["draw_v0", "--vs", "nobody"], "unknown agent 'nobody'"),
    (["draw_v0", "--vs", "greedy:depth=3"], "unknown parameter(s) ['depth']"),
    (["draw_v0", "--vs", "greedy", "--seat", "2"], "--seat 2 is not a seat of draw_v0 with 2 players (0..1)"),
    (["draw_v0", "--vs", "greedy", "--seat", "-1"], "--seat -1 is not a seat"),
    (["draw_v0", "--vs", "greedy", "--set", "num_players=9"], "num_players=9 must be an integer in 2..4"),
    (["draw_v0", "--vs", "greedy", "--set", "colour=red"], "unknown config key(s) ['colour']"),
    (["draw_v0", "--vs", "greedy", "--set", "oops"], "--set 'oops': write KEY=VALUE"),
    (["draw_v9", "--vs", "greedy"], "unknown game 'draw_v9'"),
    (["draw_v0"], "the following arguments are required: --vs"),
    (["draw_v0", "--vs", "greedy", "--seat", "one"], "argument --seat: invalid int value: 'one'"),
    (["draw_v0", "--vs", "greedy", "--seed", "-4"], "seed=-4 is not allowed"),
])
def test_bad_arguments_exit_2_with_one_line(capsys, args, message):
    assert play_main(args, stdin=io.StringIO(""), stdout=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_real_terminal_subprocess(tmp_path):
    """`python -m domino_training.cli play` with its stdin piped: the same scripted game as in-process
    (same seed, so the same deals and opponent moves), to the result, exit status 0."""
    s, term = session(seed=21, moves=["abc", "99", "#0"])
    s.run()
    script = "\n".join(term.typed) + "\n"
    save = tmp_path / "p.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "domino_training.cli", "play", "draw_v0", "--vs", "greedy",
                           "--seed", "21", "--save", str(save)], input=script, capture_output=True, text=True,
                          timeout=300, cwd=REPO, env=env)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "'abc' is not a number or a move" in out and "99 is out of range" in out
    assert "illegal move: play 0-0 on the left end (or lead it) is not allowed now" in out
    assert "result:" in out and out.rstrip().endswith("bye") and proc.stderr == ""
    (rep,) = load(save)
    rep.verify()


@pytest.mark.parametrize("name", ["draw_v0", "sum7_v0", "magic7_v0"])
def test_every_tile_placed_after_the_first_decision_is_named_once(name, tmp_path):
    """The transcript names each tile put on the table after the game's first decision exactly
    once: in a chosen move's line or in a 'forced:' line for the moves the engine made by itself
    (only moves, a draw's placement), so a person sees everything the opponents did."""
    s, term = session(name, vs="greedy", seed=5, save=str(tmp_path / "g.jsonl"))
    assert s.run() == 0
    out = term.getvalue()
    game = make_game(name)
    (rep,) = load(tmp_path / "g.jsonl")
    *_, final = rep.positions()
    rows = list(rep.positions())
    tile_name = s.tile_name
    start = game.decode(game.observe(rows[0], 0))["played_by"].sum(axis=0) > 0
    end = game.decode(game.observe(final, 0))["played_by"].sum(axis=0) > 0
    placed = [tile_name(int(t)) for t in np.flatnonzero(end & ~start)]
    assert placed, "nothing was placed"
    transcript = out[out.index("=== "):]
    words = re.findall(r"(?:seat \d \([^)]*\): [^\n]*|forced: [^\n]*)", transcript)
    mentioned = " ".join(words).replace(",", " ").split()
    for tile in placed:
        assert mentioned.count(tile) == 1, (tile, words)
