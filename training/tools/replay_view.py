"""``domino replay FILE``: print a saved game (a JSON-lines replay, domino_envs/replay.py) move by
move, with the table from a seat's view."""
from __future__ import annotations

import argparse
import os
import sys

from domino_envs.errors import DominoError, ReplayError
from domino_envs.replay import Replay, load
from domino_envs.text import forced_moves, move_names
from domino_training.commands import HelpFormatter
from domino_training.tools import OneLineParser


def print_replay(replay: Replay, seat="all", table: bool = True, file=None) -> None:
    """Print a replay move by move: the table before each move (from `seat`'s view, or with "all"
    from the view of the seat about to act), each move with its seat, name and rewards, the moves the
    engine then made by itself ('forced:' lines, as `domino play` shows them), and the result. The
    replay is verified as it is printed (ReplayError at the first mismatch)."""
    out = file or sys.stdout
    agents = f"  agents {replay.agents}" if replay.agents else ""
    print(f"{replay.game}  config {replay.config}  seed {replay.seed}{agents}  "
          f"(domino-envs {replay.package})", file=out)
    game = replay.make_game()
    names = move_names(game)
    rows = replay.positions()
    row = next(rows)
    for i, st in enumerate(replay.steps):
        if table:
            view = st.seat if seat == "all" else seat
            print("", file=out)
            print(game.render(row, view), file=out)
        rewards = "" if not any(st.rewards) else f"   rewards {st.rewards}"
        print(f"{i + 1:>4}. seat {st.seat}: {st.name}{rewards}", file=out)
        before = game.decode(game.observe(row, st.seat))
        row = next(rows)
        for line in forced_moves(game, names, st.seat, before, game.decode(game.observe(row, st.seat)), st.seat,
                                 st.action):
            print(f"     {line.strip()}", file=out)  # what the engine played by itself, as domino play shows it
    replay.verify()
    print("", file=out)
    print(game.render(row, 0 if seat == "all" else seat), file=out)
    print(f"result: returns {replay.returns}", file=out)


EXAMPLES = """examples:
  domino replay games.jsonl --index 0 --seat 1
"""  # shown by --help; tests/fronts/test_command_help.py parses them


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(epilog=EXAMPLES, formatter_class=HelpFormatter,
        prog="domino replay", description="Print a saved game (a JSON-lines replay file) move by move.")
    p.add_argument("file", help="a replay file (JSON lines, one game a line)")
    p.add_argument("--index", type=int, default=None, help="which game of the file (0-based; default: all)")
    p.add_argument("--seat", default="all", help="draw the table from this seat's view (default: the seat to act)")
    p.add_argument("--moves-only", action="store_true", help="only the moves and the result, no tables")
    return p


def main(argv: list[str] | None = None) -> int:
    """`domino replay FILE [--index I] [--seat N|all] [--moves-only]`; errors one line, exit 2."""
    args = build_parser().parse_args(argv)
    try:
        replays = load(args.file)
        if args.index is not None and not 0 <= args.index < len(replays):
            raise ReplayError(f"{args.file}: --index {args.index} is out of range; the file holds "
                              f"{len(replays)} game(s), 0..{len(replays) - 1}")
        seat = args.seat
        if seat != "all":
            if not seat.isdigit():
                raise ReplayError(f"--seat {seat!r} must be a seat number or 'all'")
            seat = int(seat)
        chosen = replays if args.index is None else [replays[args.index]]
        for k, rep in enumerate(chosen):
            if seat != "all" and not 0 <= seat < rep.make_game().num_players:
                raise ReplayError(f"--seat {seat} is not a seat of {rep.game} (0..{rep.make_game().num_players - 1})")
            if k:
                print("\n" + "=" * 60 + "\n")
            print_replay(rep, seat, table=not args.moves_only)
    except BrokenPipeError:  # the reader stopped (| head): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (DominoError, OSError) as err:
        print(f"domino replay: error: {err}", file=sys.stderr)
        return 2
    return 0
