"""``domino render``: play agents to a position and draw it (PNG), or draw a saved replay (GIF), or
write a game (a replay's or one agents play) as one self-contained HTML replay (``--html FILE``,
tools/replay_html.py); ``python -m domino_training.tools.render --docs DIR`` writes the docs'
picture of each game.

The drawing itself is domino_envs/pictures.py (a pure renderer of a state row); this module adds
what needs agents: playing from a seeded deal to the position to draw.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from domino_agents.registry import make_agent
from domino_envs.core import H_DONE, H_TURN
from domino_envs.errors import ConfigError
from domino_envs.fronts import deal_to_decision
from domino_envs.pictures import HEIGHT, WIDTH, picture, save_gif, save_png
from domino_envs.registry import config_from_pairs, game_names, make_game
from domino_envs.registry import title as title_of
from domino_envs.replay import load
from domino_envs.rng import mix_seed
from domino_training.commands import HelpFormatter, add_seed, add_set


# ------------------------------------------------------------------------------ playing to a position
def play_position(game, seed: int, moves: int, agent_spec: str = "greedy", on_step=None):
    """(state row, decisions played): deal from `seed` (the fronts' rule: a deal forced moves play to
    the end is dealt again), then `moves` decisions by `agent_spec` agents in every seat (seeded from
    `seed`), stopping early at the end of the game. `on_step(seat, action, row)` is called after each
    decision (the HTML replay records the positions with it)."""
    if isinstance(moves, bool) or not isinstance(moves, (int, np.integer)) or moves < 0:
        raise ConfigError(f"moves={moves!r} must be an integer >= 0")
    state = game.new_state()
    deal_to_decision(game, state, mix_seed(seed, 0))
    agents = [make_agent(agent_spec, game, seed=mix_seed(seed, k + 1)) for k in range(game.num_players)]
    for k, agent in enumerate(agents):
        agent.reset(mix_seed(seed, k + 1))
    totals = np.zeros(game.num_players)
    done = 0
    while done < moves and not state[H_DONE]:
        seat = int(state[H_TURN])
        agent = agents[seat]
        if getattr(agent, "searches", False):
            agent.observe_state(state, seat, totals)
        action = int(agent.act(game.observe(state, seat), game.legal_mask(state)))
        game.step(state, action)
        totals += game.rewards(state)
        if on_step is not None:
            on_step(seat, action, state)
        done += 1
    return state, done


# ------------------------------------------------------------------------------ domino render
_USAGE = ("domino render GAME [--set KEY=VALUE ...] [--seed S] [--moves K] [--agent SPEC] [--seat N | --full] "
          "--out FILE.png\n       domino render --replay FILE [--index I] [--fps F] [--seat N | --full] --out FILE.gif"
          "\n       domino render (GAME [options] | --replay FILE [--index I]) [--seat N | --full] --html FILE.html")


EXAMPLES = """examples:
  domino render magic7_v0 --seed 3 --moves 20 --out magic7.png
  domino render --replay games.jsonl --index 0 --out game.gif
  domino render --replay games.jsonl --index 0 --html game.html
  domino render block_v0 --seed 2 --agent heuristic --html block.html
"""  # shown by --help; tests/fronts/test_command_help.py parses them


def build_parser():
    import argparse

    class OneLine(argparse.ArgumentParser):
        def error(self, message):
            raise ValueError(message)

    p = OneLine(epilog=EXAMPLES, formatter_class=HelpFormatter,
        prog="domino render", usage=_USAGE, description="Draw a mid-game position (PNG), a replay (GIF) or a whole game as an HTML replay.")
    p.add_argument("game", nargs="?", help="env name (see domino games)")
    add_set(p)
    add_seed(p, "the deal")
    p.add_argument("--moves", type=int, default=None,
                   help="decisions played before the picture (default 12; with --html: to the end of the game)")
    p.add_argument("--agent", default="greedy", help="agent spec playing every seat (default greedy)")
    view = p.add_mutually_exclusive_group()
    view.add_argument("--seat", type=int, default=None,
                      help="draw this seat's hand face up (default: a PNG shows the seat to act's, as the ansi "
                           "render does; a GIF shows no hand; an HTML replay has a switch between every seat's "
                           "view and the open table)")
    view.add_argument("--full", action="store_true", help="draw every hand face up")
    p.add_argument("--replay", default=None, metavar="FILE", help="a saved replay (JSON lines): write a GIF")
    p.add_argument("--index", type=int, default=0, help="which game of the replay file (default 0)")
    p.add_argument("--fps", type=float, default=2.0, help="GIF frames per second (default 2)")
    p.add_argument("--out", default=None, metavar="FILE", help="the PNG (or GIF with --replay) to write")
    p.add_argument("--html", default=None, metavar="FILE",
                   help="write the game as one self-contained HTML replay (all positions, a slider, the moves) "
                        "instead: a saved one (--replay) or one the agents play from the deal")
    return p


def _check_seat_flag(game, seat) -> None:
    if seat is not None and not 0 <= seat < game.num_players:
        raise ValueError(f"--seat {seat}: {game.name} has seats 0..{game.num_players - 1}")


def main(argv: list[str] | None = None) -> int:
    """`domino render`: a bad argument is one line on stderr and exit status 2."""
    try:
        return _run(list(sys.argv[1:] if argv is None else argv))
    except (ValueError, OSError) as err:  # DominoErrors are ValueErrors
        print(f"domino render: error: {err}", file=sys.stderr)
        return 2


def _run(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    viewer = "full" if args.full else args.seat
    if (args.out is None) == (args.html is None):
        raise ValueError("give --out FILE (.png, or .gif with --replay) or --html FILE, one of them"
                         + ("" if args.out is None else f" (got --out {args.out!r} and --html {args.html!r})"))
    if args.html is not None:
        return _write_html(args, viewer)
    if args.replay is not None:
        if not args.out.lower().endswith(".gif"):
            raise ValueError(f"--out {args.out!r}: a replay is written as an animated .gif")
        rep, game = _replay_of(args)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        frames = save_gif(game, rep.positions(), args.out, args.fps, viewer)
        print(f"wrote {args.out}: {frames} frames, {WIDTH}x{HEIGHT}")
        return 0
    if args.game is not None and not args.out.lower().endswith(".png"):
        raise ValueError(f"--out {args.out!r}: a position is written as a .png")
    game = _game_of(args)
    state, played = play_position(game, args.seed, 12 if args.moves is None else args.moves, args.agent)
    if viewer is None:  # like the ansi render: the view of the seat to act (seat 0 once over)
        viewer = int(state[H_TURN]) if not state[H_DONE] else 0
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    save_png(picture(game, state, viewer), args.out)
    over = " (the game ended there)" if state[H_DONE] else ""
    print(f"wrote {args.out}: {game.name} after {played} decisions{over}, {WIDTH}x{HEIGHT}")
    return 0


def _game_of(args):
    """GAME --set ... --seed S --moves K: the engine agents play from a deal, the flags checked."""
    if args.game is None:
        raise ValueError("name a GAME (see domino games) or give --replay FILE")
    game = make_game(args.game, **config_from_pairs(args.set))
    _check_seat_flag(game, args.seat)
    if args.moves is not None and args.moves < 0:
        raise ValueError(f"--moves {args.moves}: must be >= 0")
    return game


def _replay_of(args):
    """--replay FILE --index K: that game of the file and its engine, the flags checked against it."""
    if args.game is not None:
        raise ValueError(f"give either GAME or --replay, not both (got {args.game!r} and --replay)")
    reps = load(args.replay)
    if not 0 <= args.index < len(reps):
        raise ValueError(f"--index {args.index}: {args.replay} holds games 0..{len(reps) - 1}")
    rep = reps[args.index]
    game = rep.make_game()
    _check_seat_flag(game, args.seat)
    return rep, game


def _write_html(args, viewer) -> int:
    """--html FILE: the replay's positions, or those of a game `--agent` agents play from `--seed`'s
    deal (to the end, or `--moves` decisions), as one HTML file (tools/replay_html.py)."""
    from domino_training.tools.replay_html import moves_of, replay_html

    if not args.html.lower().endswith((".html", ".htm")):
        raise ValueError(f"--html {args.html!r}: the replay page is written as a .html file")
    if args.replay is not None:
        rep, game = _replay_of(args)
        rows = list(rep.positions())
        steps = [(st.seat, st.action) for st in rep.steps]
        facts = [f"{rep.game}  config {rep.config}  seed {rep.seed}"
                 + (f"  agents {', '.join(map(str, rep.agents))}" if rep.agents else ""),
                 f"from {args.replay}, game {args.index}: {len(steps)} moves, returns {rep.returns}"]
    else:
        game = _game_of(args)
        rows, steps = [], []
        start, _ = play_position(game, args.seed, 0, args.agent)
        rows.append(start.copy())
        totals = game.rewards(start).astype(np.float64)

        def record(seat, action, row):
            nonlocal totals
            steps.append((seat, action))
            rows.append(row.copy())
            totals = totals + game.rewards(row)

        state, played = play_position(game, args.seed, 10**6 if args.moves is None else args.moves, args.agent,
                                      record)
        end = f"returns {totals.tolist()}" if state[H_DONE] else "the game goes on"
        facts = [f"{game.name}  config {game.config_dict()}  seed {args.seed}  every seat {args.agent}",
                 f"{played} moves, {end}"]
    title = f"{title_of(game.name)}: a replay"
    page = replay_html(game, rows, moves_of(game, rows, steps), title, facts, viewer)
    Path(args.html).parent.mkdir(parents=True, exist_ok=True)
    Path(args.html).write_text(page, encoding="utf-8")
    print(f"wrote {args.html}: {game.name}, {len(rows)} positions, {len(page) // 1024} KiB")
    return 0


# ------------------------------------------------------------------------------ pictures for the docs
# env -> (config, seed, decisions, agent): a mid-game position showing the game's features; an env
# not listed gets DEFAULT_DOCS_POSITION
DEFAULT_DOCS_POSITION = ({}, 0, 8, "greedy")
DOCS_POSITIONS = {
    "draw_v0": ({}, 3, 12, "greedy"),
    "block_v0": ({"num_players": 4}, 1, 8, "greedy"),
    "seven_toed_pete_v0": ({}, 0, 8, "greedy"),
    "racehorse_v0": ({"spinner": "first_double"}, 4, 8, "greedy"),
    "sum7_v0": ({"num_players": 3}, 1, 8, "greedy"),
    "magic7_v0": ({}, 1, 19, "random"),  # a joker in the rows and a killed tile
}


def write_docs(directory) -> list[str]:
    """One mid-game PNG per registered env, ``<directory>/<env>.png`` (seat 0's view), for the README
    and docs."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for name in [*DOCS_POSITIONS, *(n for n in game_names() if n not in DOCS_POSITIONS)]:
        config, seed, moves, agent = DOCS_POSITIONS.get(name, DEFAULT_DOCS_POSITION)
        game = make_game(name, **config)
        state, _ = play_position(game, seed, moves, agent)
        path = os.path.join(directory, f"{name}.png")
        save_png(picture(game, state, 0), path, palette=True)  # a README loads six
        paths.append(path)
    return paths


if __name__ == "__main__":
    if sys.argv[1:2] == ["--docs"] and len(sys.argv) == 3:
        for path in write_docs(sys.argv[2]):
            print(path)
        sys.exit(0)
    sys.exit(main())
