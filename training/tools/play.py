"""`domino play`: a person plays a game in the terminal against agents.

    domino play draw_v0 --vs greedy                  # you are seat 0, greedy in every other seat
    domino play racehorse_v0 --vs trained --seat 2 --set num_players=4 --seed 7 --save games.jsonl

The person takes one seat (``--seat``, default 0); every other seat is ``make_agent(spec, game)`` of
the ``--vs`` spec (any spec the agent registry takes: baselines, ``trained``,
``mlp:checkpoint=PATH``, an agent of your own that ``--import FILE`` registers, ...). On the
person's turn the table is drawn from their seat's view (``game.render(state, seat)``: their hand,
the layout, what is public of the others - never an opponent's tiles), then the legal moves numbered
with their names. An entry is a move's number; a move can also be typed by its name or a word of it
(a tile such as ``6-4``, a card such as ``QH``) or by its action id as ``#17``, so a move the rules
forbid now can be entered (and is refused). ``?`` or ``h`` prints help, ``q`` quits. Every bad entry
(empty, not a number, out of range, illegal, ambiguous) gets one line saying what is wrong and the
prompt again; the game state never changes on a bad entry, and end of input quits cleanly.

Opponents' moves are printed as they happen; at the end of a hand (each hand of a match, and the
match) the result and scores; then "another hand? [y/n]". ``--save FILE`` appends every finished
game to FILE as a replay line (domino_envs/replay.py), so ``domino replay FILE`` shows it again.

Seeds: ``--seed S`` makes the games repeatable: game k is dealt from ``mix_seed(S, k)`` (the AEC
env's stream: a deal that forced moves play to the end is dealt again from the row's own stream,
as the fronts do); opponents are seeded from a separate stream of S. Without ``--seed`` a seed
is drawn from OS entropy and printed, so the session can be played again.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from domino_envs.core import H_DONE, H_HAND, H_TURN
from domino_envs.errors import DominoError, MoveEntryError
from domino_envs.fronts import deal_to_decision
from domino_envs.outcome import win_shares
from domino_envs.replay import Recorder, append
from domino_envs.rng import check_seed, entropy_seed, mix_seed
from domino_envs.text import forced_moves, move_names, parse_move, tile_namer
from domino_training.commands import HelpFormatter, add_import, add_seed, add_set
from domino_training.tools import OneLineParser

_AGENT_STREAM = 0x9A7E_5EED
HELP = ("Type the number of a move from the list; or a move by name, or a word of its name that fits\n"
        "one legal move (a tile like 6-4, a card like QH); or #ID for an action id. "
        "'?' or 'h': this help and the moves again, 'q': quit.")


class Quit(Exception):
    """The person quit (q, or end of input)."""


class Session:
    """One person against agents on one game; input and output streams injectable for tests."""

    def __init__(self, game, vs: str, seat: int = 0, seed: int | None = None, save: str | None = None,
                 stdin=None, stdout=None):
        from domino_agents.registry import make_agent

        self.game = game
        self.vs = vs
        self.seat = game.seat_as_int(seat)
        self.base = entropy_seed() if seed is None else seed
        self.save = save
        self.in_game = False  # between games nothing is lost by quitting
        self.stdin = stdin if stdin is not None else sys.stdin
        self.out = stdout if stdout is not None else sys.stdout
        n = game.num_players
        self.agents = [None if k == self.seat else make_agent(vs, game) for k in range(n)]
        self.specs = ["human" if k == self.seat else vs for k in range(n)]
        self.episode = 0
        self.names = move_names(game)
        self.tile_name = tile_namer(game)

    # ------------------------------------------------------------------ i/o
    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def ask(self, prompt: str) -> str:
        """One line of input (without its newline); Quit at end of input."""
        self.out.write(prompt)
        self.out.flush()
        line = self.stdin.readline()
        if not line:
            self.say()
            self.say("end of input: quitting")
            raise Quit
        return line.strip()

    # ------------------------------------------------------------------ the person's move
    def show_moves(self, legal: list[int]) -> None:
        for i, a in enumerate(legal, 1):
            self.say(f"  {i:>2}. {self.names[a]}")

    def parse(self, text: str, legal: list[int]) -> tuple[int | None, str]:
        """(action, "") for an entry that names one legal move, else (None, the one-line message):
        `domino_envs.text.parse_move`, which the web page and the language-model agent use too."""
        try:
            return parse_move(self.game, text, legal), ""
        except MoveEntryError as err:
            hint = " ('?' for help, 'q' to quit)" if err.kind in ("empty", "unknown") else ""
            return None, err.problem + hint

    def engine_moves(self, before: dict, after: dict, seat: int, action: int) -> list[str]:
        """What the engine played by itself in a step, as 'forced:' lines (`forced_moves`), seen from
        the person's seat."""
        return forced_moves(self.game, self.names, self.seat, before, after, seat, action)

    def human_move(self, row) -> int:
        g = self.game
        self.say()
        self.say(g.render(row, self.seat))
        legal = g.legal_actions(row)
        self.say(f"your move (seat {self.seat}):")
        self.show_moves(legal)
        while True:
            text = self.ask(f"move [1-{len(legal)}, ? help, q quit]: ")
            if text.lower() in ("q", "quit", "exit"):
                raise Quit
            if text.lower() in ("?", "h", "help"):
                self.say(HELP)
                self.show_moves(legal)
                continue
            action, problem = self.parse(text, legal)
            if action is not None:
                return action
            self.say(problem)

    # ------------------------------------------------------------------ one game
    def play_game(self) -> list[float] | None:
        """Play one episode (a hand, or a match in match mode); its returns, None if quit."""
        g = self.game
        n = g.num_players
        row = g.new_state()
        seed = deal_to_decision(g, row, mix_seed(self.base, self.episode))
        for k, agent in enumerate(self.agents):
            if agent is not None:
                agent.reset(mix_seed(self.base ^ _AGENT_STREAM, self.episode * n + k))
        self.episode += 1
        self.in_game = True
        rec = Recorder(g, agents=self.specs)
        rec.start(row, seed)
        totals = np.array(g.rewards(row), dtype=np.float64)
        hand_totals = totals.copy()
        self.say()
        self.say(f"=== {g.name} game {self.episode} (seed {self.base}, game {self.episode - 1} of its stream): "
                 f"you are seat {self.seat}; opponents: {self.vs}")
        self.say("(moves the rules force - an only move, draws - are made by the engine and shown as 'forced:')")
        while not row[H_DONE]:
            seat = int(row[H_TURN])
            hand = int(row[H_HAND])
            if seat == self.seat:
                action = self.human_move(row)
                who = "you"
            else:
                agent = self.agents[seat]
                if getattr(agent, "searches", False):
                    agent.observe_state(row, seat, totals)
                action = int(agent.act(g.observe(row, seat), g.legal_mask(row)))
                who = f"{self.vs}"
            before = g.decode(g.observe(row, self.seat))
            g.step(row, action)
            rec.step(seat, action, row)
            rewards = g.rewards(row)
            totals += rewards
            hand_totals += rewards
            scored = "" if not rewards.any() else "   rewards " + _fmt(rewards)
            self.say(f"seat {seat} ({who}): {self.names[action]}{scored}")
            if int(row[H_HAND]) == hand or row[H_DONE]:  # not across a new deal (match mode)
                for line in self.engine_moves(before, g.decode(g.observe(row, self.seat)), seat, action):
                    self.say(line)
            if int(row[H_HAND]) != hand and not row[H_DONE]:
                self.say(f"--- hand {hand + 1} over: this hand {_fmt(hand_totals)}; match so far {_fmt(totals)}")
                hand_totals[:] = 0
        self.say()
        self.say(g.render(row, self.seat))
        if _is_match(g):
            self.say(f"--- last hand: {_fmt(hand_totals)}")
        winners = [int(k) for k in np.flatnonzero(win_shares(totals))]
        if len(winners) == n:
            verdict = "a tie: nobody scored more"
        elif winners == [self.seat]:
            verdict = "you won"
        elif self.seat in winners:
            verdict = f"you tied for first with seat(s) {[w for w in winners if w != self.seat]}"
        else:
            verdict = f"you lost: seat(s) {winners} won"
        self.say(f"result: {verdict}. returns {_fmt(totals)} (you are seat {self.seat})")
        if self.save:
            Path(self.save).parent.mkdir(parents=True, exist_ok=True)
            append(self.save, rec.finish(row))
            self.say(f"saved to {self.save}")
        self.in_game = False
        return totals.tolist()

    def run(self) -> int:
        """Play games until the person says no or quits; 0."""
        try:
            while True:
                self.play_game()
                while True:
                    answer = self.ask("another hand? [y/n]: ").lower()
                    if answer in ("y", "yes", "n", "no", "q", "quit"):
                        break
                    self.say(f"{answer!r}: answer y or n")
                if answer not in ("y", "yes"):
                    break
        except Quit:
            if self.in_game:
                self.say("quit: the game in progress is not saved")
            else:
                self.say(f"quit: every finished game is saved in {self.save}" if self.save else "quit")
            return 0
        self.say("bye")
        return 0


def _is_match(game) -> bool:
    return bool(getattr(game.config, "match", False)) or getattr(game.config, "num_games", 1) > 1


def _fmt(values) -> str:
    return "[" + ", ".join(f"{v:g}" for v in np.asarray(values, dtype=np.float64)) + "]"


EXAMPLES = """examples:
  domino play draw_v0 --vs heuristic
  domino play sum7_v0 --vs trained --set num_players=3 --save games.jsonl
"""  # shown by --help; tests/fronts/test_command_help.py parses them


def build_parser() -> argparse.ArgumentParser:
    from domino_envs.registry import game_names

    p = OneLineParser(epilog=EXAMPLES, formatter_class=HelpFormatter,
        prog="domino play", description="Play a game in the terminal against agents.")
    p.add_argument("game", help=f"one of {game_names()}")
    p.add_argument("--vs", required=True, metavar="SPEC", help="agent spec of every other seat (random, greedy, "
                   "heuristic, pimc:n=16, trained, mlp:checkpoint=PATH, your --import agents, ...)")
    p.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    add_seed(p, "the deals", default=None, note="default: OS entropy, printed")
    add_set(p)
    p.add_argument("--save", default=None, metavar="FILE", help="append each finished game here as a replay line")
    add_import(p)
    return p


def main(argv: list[str] | None = None, stdin=None, stdout=None) -> int:
    """`domino play GAME --vs SPEC [--seat N] [--seed S] [--set K=V ...] [--save FILE] [--import M ...]`: a
    bad game, spec, seat, seed, --set or --import is one line on stderr and exit status 2."""
    from domino_envs.registry import config_from_pairs, make_game
    from domino_training.user_code import import_all

    p = build_parser()
    args = p.parse(argv)
    if isinstance(args, int):  # a usage error (reported) or --help
        return args
    try:
        import_all(args.imports)
        game = make_game(args.game, **config_from_pairs(args.set))
        if not 0 <= args.seat < game.num_players:
            return p.fail(f"--seat {args.seat} is not a seat of {args.game} with {game.num_players} players "
                        f"(0..{game.num_players - 1})")
        seed = check_seed(args.seed, "domino play")
        session = Session(game, args.vs, args.seat, seed, args.save, stdin, stdout)
    except (ValueError, TypeError) as err:  # DominoError is a ValueError; agent specs raise ValueError
        return p.fail(str(err))
    try:
        return session.run()
    except DominoError as err:  # e.g. a config whose deals hold no decision
        return p.fail(str(err))
    except KeyboardInterrupt:
        print("\ninterrupted", file=session.out)
        return 130


if __name__ == "__main__":
    sys.exit(main())
