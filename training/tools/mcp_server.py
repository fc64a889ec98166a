"""`domino mcp`: the games as a Model Context Protocol server, for a language model (or any MCP client)
to play against the project's agents.

    domino mcp                                   # stdio: an MCP client launches this command
    domino mcp --transport http --port 8765      # streamable HTTP on http://127.0.0.1:8765/mcp
    domino mcp --agent pimc:n=256                # the menu's agents plus this one (id agent1)

Tools (each answers from the client's seat only; the opponents move on the server):
    new_game(game, rules, opponents, seat, seed)   a game id, the rules and your seat's text
    observe(game_id)                               your seat's text view with the public log
    legal_moves(game_id)                           your legal moves, numbered and named
    play(game_id, move)                            a number or a name; what happened until your next turn
    result(game_id)                                each seat's return and the winners, once over

Why it looks like this:
- One live game is a `LiveGame` (training/tools/live.py, shared with the web app): agents by menu id
  only (`MENU` plus the operator's ``--agent`` specs, checked at start), rules as ``--set`` keys, the
  refusals raised before anything changes. A client sends ids and moves, never a spec or code.
- What a client reads is the seat's text (domino_envs/text.py: the same whatever the hidden tiles
  are) and the public log; no tool shows another seat's tiles, the boneyard's order, or an agent's
  opinion of the client's move (no hint tool: the model plays on its own).
- Bad input is a tool error with one line (``is_error`` and the message): an unknown game id, game,
  rule or agent, an illegal or unparsable move, a move after the game is over.
- Streamable HTTP binds 127.0.0.1 unless ``--host`` says otherwise; the mcp package then checks the
  Host and Origin headers (DNS rebinding), and for another host they must name that host.
"""
from __future__ import annotations

import argparse
import sys
import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from domino_envs.errors import ConfigError, DominoError, MoveEntryError
from domino_envs.outcome import win_shares
from domino_envs.text import parse_move, rules_text, seat_text
from domino_training.commands import HelpFormatter
from domino_training.tools import OneLineParser
from domino_training.tools.live import HUMAN, MENU, LiveGame, NotYourTurn, check_agents, menu_with

MAX_GAMES = 256  # live games kept; past it the oldest is dropped
INSTRUCTIONS = """Domino games against the project's agents. Call new_game (game: one of {games};
opponents: menu ids {menu}), then read the text it returns: your hand, the table, every seat's public
counts, the log and your legal moves numbered 1..k. Call play with a move's number (or its name) until
the game is over, then result. Moves the rules force are made for you and appear in the log."""


class GameError(DominoError):
    """A tool call the server refuses: an unknown game id, or a result asked before the end."""


class Games:
    """The live games of one server, by id: each a `LiveGame` with one client seat. Thread-safe (the
    mcp package runs a synchronous tool in a worker thread): one lock for the table of games, each
    game's own lock for its moves."""

    def __init__(self, menu: dict[str, str] | None = None, max_games: int = MAX_GAMES):
        self.menu = dict(MENU if menu is None else menu)
        self.max_games = max_games
        self.games: OrderedDict[str, LiveGame] = OrderedDict()
        self.lock = threading.Lock()

    # ------------------------------------------------------------------ the tools' bodies
    def new_game(self, game: str, rules: dict | None = None, opponents: list[str] | None = None, seat: int = 0,
                 seed: int | None = None) -> dict:
        from domino_envs.registry import game_names

        if game not in game_names():
            raise ConfigError(f"unknown game {game!r}; games: {', '.join(game_names())}")
        if rules is not None and not isinstance(rules, dict):
            raise ConfigError(f"rules={rules!r:.80} must be an object of rule keys (as --set KEY=VALUE takes)")
        opponents = ["heuristic"] if opponents is None else opponents
        if isinstance(opponents, str):
            opponents = [opponents]
        from domino_training.tools.live import make_config

        n = make_config(game, rules or {}).num_players
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
            raise ConfigError(f"seat={seat!r} is not a seat of {game} with {n} players (0..{n - 1})")
        if len(opponents) == 1:
            opponents = opponents * (n - 1)
        if len(opponents) != n - 1:
            raise ConfigError(f"opponents: give one menu id for every other seat ({n - 1}), or one for all; "
                              f"got {len(opponents)}")
        for o in opponents:
            if o not in self.menu:  # "human" too: this server has one client seat a game
                raise ConfigError(f"opponent {o!r:.60} is not on the menu: {', '.join(self.menu)}")
        seats = list(opponents)
        seats.insert(seat, HUMAN)
        live = LiveGame(game, rules or {}, seats, seed=seed, menu=self.menu)
        with self.lock:
            self.games[live.id] = live
            while len(self.games) > self.max_games:
                self.games.popitem(last=False)
        with live.lock:
            live.advance()
            return {"game_id": live.id, "seat": seat, "seed": live.seed, "rules": rules_text(live.game),
                    "text": _text(live)}

    def get(self, game_id) -> LiveGame:
        with self.lock:
            live = self.games.get(game_id) if isinstance(game_id, str) else None
        if live is None:
            raise GameError(f"unknown game id {game_id!r:.60}: start one with new_game")
        return live

    def observe(self, game_id: str) -> str:
        live = self.get(game_id)
        with live.lock:
            return _text(live)

    def legal_moves(self, game_id: str) -> list[dict]:
        live = self.get(game_id)
        with live.lock:
            return [{"number": i, "name": name, "action": a} for i, (a, name) in enumerate(live.legal(_seat(live)), 1)]

    def play(self, game_id: str, move) -> dict:
        live = self.get(game_id)
        seat = _seat(live)
        with live.lock:
            if live.over:
                raise NotYourTurn("not your turn: the game is over (call result)")
            if live.turn != seat:  # agents move on the server before a tool returns: a bug if seen
                raise NotYourTurn(f"not your turn: seat {live.turn} is to act")
            legal = [a for a, _ in live.legal(seat)]
            action = parse_move(live.game, str(move), legal)
            start = len(live.events)
            live.play(seat, action, live.version)
            live.advance()
            events = live.log(seat)[start:]
            return {"events": events, "over": live.over, "text": _text(live)}

    def result(self, game_id: str) -> dict:
        live = self.get(game_id)
        with live.lock:
            if not live.over:
                raise GameError(f"the game is not over: seat {live.turn} is to act (call observe or play)")
            returns = live.returns()
            shares = win_shares(np.asarray(returns))
            winners = [int(k) for k in np.flatnonzero(shares)]
            seat = _seat(live)
            return {"returns": returns, "winners": winners, "your_seat": seat, "your_return": returns[seat],
                    "your_win_share": float(shares[seat]), "seats": live.seats}


def _seat(live: LiveGame) -> int:
    return live.humans[0]


def _text(live: LiveGame) -> str:
    """The client seat's text view, absolute seat numbers, with the game's public log as that seat reads it."""
    g = live.game
    seat = _seat(live)
    mask = g.legal_mask(live.state) if live.turn == seat else np.zeros(g.num_actions, dtype=np.int8)
    text = seat_text(g, g.observe(live.state, seat), mask, live.log(seat), seat=seat)
    return text + ("\nthe game is over: call result" if live.over else "")


def build_server(games: Games):
    """The MCP server (the mcp package's MCPServer) whose tools are `games`' methods; every refusal a
    tool error of one line."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from domino_envs.registry import game_names

    server = MCPServer("domino", instructions=INSTRUCTIONS.format(games=", ".join(game_names()),
                                                                  menu=", ".join(games.menu)))

    def refusing(fn):
        def call(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except MoveEntryError as err:
                raise ToolError(str(err)) from None
            except (DominoError, ValueError, TypeError) as err:  # ConfigError and the LiveGame refusals
                raise ToolError(str(err).splitlines()[0]) from None
        return call

    @server.tool(structured_output=True)
    def new_game(game: str, rules: dict[str, str | int | float | bool] | None = None,
                 opponents: list[str] | None = None, seat: int = 0, seed: int | None = None) -> dict[str, Any]:
        """Start a game: `game` one of the registered games; `rules` its rule keys (as `domino play --set
        KEY=VALUE`, e.g. {"num_players": 3}); `opponents` menu ids, one for every other seat or one for all
        (default heuristic); `seat` yours (0-based); `seed` for a repeatable deal. Returns the game id,
        the rules for this config and your seat's text."""
        return refusing(games.new_game)(game, rules, opponents, seat, seed)

    @server.tool(structured_output=False)
    def observe(game_id: str) -> str:
        """Your seat's text view: your hand, the table, every seat's public counts, the public log and,
        on your turn, your legal moves numbered 1..k."""
        return refusing(games.observe)(game_id)

    @server.tool(structured_output=True)
    def legal_moves(game_id: str) -> list[dict[str, Any]]:
        """Your legal moves now, numbered 1..k as the text numbers them, with their names (empty when it
        is not your turn)."""
        return refusing(games.legal_moves)(game_id)

    @server.tool(structured_output=True)
    def play(game_id: str, move: str | int) -> dict[str, Any]:
        """Play a move: its number 1..k in your legal list, its name, a word of its name that fits one
        legal move (a tile 6-4, a card QH) or #ACTION_ID. The opponents then move on the server; returns
        what happened until your next turn (or the end) and your new text."""
        return refusing(games.play)(game_id, move)

    @server.tool(structured_output=True)
    def result(game_id: str) -> dict[str, Any]:
        """Once the game is over: each seat's return, the winners, your seat, return and win share."""
        return refusing(games.result)(game_id)

    return server


EXAMPLES = """examples:
  domino mcp
  domino mcp --transport http --port 8765 --agent pimc:n=256
"""  # shown by --help; tests/fronts/test_command_help.py parses them


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(epilog=EXAMPLES, formatter_class=HelpFormatter, prog="domino mcp",
                      description="Serve the games as a Model Context Protocol server (the mcp extra).")
    p.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                   help="stdio (an MCP client launches this command) or streamable HTTP (default stdio)")
    p.add_argument("--host", default="127.0.0.1", help="HTTP: the address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="HTTP: the port (default 8765)")
    p.add_argument("--agent", action="append", default=[], metavar="SPEC",
                   help="add an agent spec to the opponents' menu as agent1, agent2, ... (repeatable)")
    return p


def main(argv: list[str] | None = None) -> int:
    """`domino mcp [--transport stdio|http] [--host H] [--port N] [--agent SPEC ...]`: a bad flag, a bad
    --agent or a missing mcp extra is one line on stderr and exit status 2."""
    p = build_parser()
    args = p.parse(argv)
    if isinstance(args, int):
        return args
    if not 0 < args.port < 65536:
        return p.fail(f"--port {args.port} is not a port (1..65535)")
    try:
        import mcp  # noqa: F401
    except ImportError as err:
        return p.fail(f"needs the mcp extra ({err.name} is missing): pip install 'domino-envs[mcp]'")
    from domino_envs.registry import game_names

    try:
        menu = menu_with(args.agent)
        check_agents(menu, game_names())
    except (DominoError, ValueError) as err:
        return p.fail(str(err))
    server = build_server(Games(menu))
    if args.transport == "stdio":
        server.run("stdio")
        return 0
    from mcp.server.transport_security import TransportSecuritySettings

    security = None  # 127.0.0.1, localhost, ::1: the mcp package checks Host and Origin itself
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        shown = f"[{args.host}]" if ":" in args.host else args.host
        security = TransportSecuritySettings(allowed_hosts=[f"{shown}:*"], allowed_origins=[f"http://{shown}:*"])
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"domino mcp: streamable HTTP on http://{shown}:{args.port}/mcp (Ctrl-C stops)", file=sys.stderr, flush=True)
    server.run("streamable-http", host=args.host, port=args.port, transport_security=security)
    return 0


if __name__ == "__main__":
    sys.exit(main())
