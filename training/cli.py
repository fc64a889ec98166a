"""The `domino` command, one subcommand per tool: `train` (learners/train.py), `evaluate` (evaluate.py),
`bench` (tools/envspeed.py), `benchmark` (benchmark/cli.py), `rate` (benchmark/ratings.py), `exploit`
(exploit/cli.py), `games`, `play` (tools/play.py), `replay` (tools/replay_view.py), `render`
(tools/render.py), `warm` (tools/warm.py), `serve` (web/app.py), `mcp`
(tools/mcp_server.py). Each subcommand's module has `build_parser()`
and `main(argv)` and is imported only when it runs; this module is the top of the library's layers (nothing imports it)."""
from __future__ import annotations

import importlib
import sys

# subcommand -> (the module that parses and runs it, what it does); `games` is answered here
COMMANDS = {
    "train": ("domino_training.learners.train", "train an agent for one game (PPO by default) into a run folder"),
    "evaluate": ("domino_training.evaluate", "pit agents on duplicate deals: win rates and rewards with 95% intervals"),
    "bench": ("domino_training.tools.envspeed", "time the envs: decisions a second, against the peer libraries"),
    "benchmark": ("domino_training.benchmark.cli", "run the benchmark suite: every learner on every game, aggregated"),
    "rate": ("domino_training.benchmark.ratings", "rate agents by cross-play on duplicate deals (random at 0)"),
    "exploit": ("domino_training.exploit.cli", "exact exploitability on a small config, or a learned best response"),
    "games": (None, "list the registered games"),
    "play": ("domino_training.tools.play", "play a game in the terminal against agents"),
    "replay": ("domino_training.tools.replay_view", "print a saved game move by move"),
    "render": ("domino_training.tools.render", "draw a position as a PNG, or a saved game as a GIF"),
    "warm": ("domino_training.tools.warm", "compile the games' numba kernels ahead (once per install or upgrade)"),
    "serve": ("domino_training.web.app", "play and watch the games in a browser (the web extra)"),
    "mcp": ("domino_training.tools.mcp_server", "serve the games to language models over MCP (the mcp extra)"),
}


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("domino-envs")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: domino COMMAND [ARGS ...]   (domino COMMAND --help for a command's flags)", "",
             "Domino games for reinforcement learning: train, evaluate, benchmark, play.", "", "commands:"]
    lines += [f"  {name:<{width}}  {what}" for name, (_, what) in COMMANDS.items()]
    lines += ["", "  --help, -h, help   this text", "  --version          the installed version"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("--help", "-h", "help"):
        print(usage())
        return 0
    if argv[0] == "--version":
        print(f"domino {version()}")
        return 0
    if argv[0] not in COMMANDS:
        print(f"domino: error: {argv[0]!r} is not a command; one of {', '.join(COMMANDS)} (domino --help)",
              file=sys.stderr)
        return 2
    cmd, rest = argv[0], argv[1:]
    module = COMMANDS[cmd][0]
    if module is None:
        if rest in (["--help"], ["-h"]):
            print(f"usage: domino games\n\n{COMMANDS['games'][1].capitalize()}, one name a line.")
            return 0
        if rest:
            print(f"domino games: error: takes no arguments, got {' '.join(rest)}", file=sys.stderr)
            return 2
        from domino_envs.registry import game_names

        print("\n".join(game_names()))
        return 0
    from domino_envs._numba_cache import announce_compiling
    from domino_envs.registry import game_names

    from .interrupt import guard_interrupts

    guard_interrupts()  # Ctrl-C: KeyboardInterrupt, never a crash inside numba's argument conversion
    # a cold cache compiles for seconds to minutes: say so once (naming the games the command names)
    announce_compiling(games=[g for g in game_names() if g in rest or any(a.endswith("=" + g) for a in rest)])
    code = importlib.import_module(module).main(rest)
    return code if isinstance(code, int) else 0  # bench and evaluate return their results


if __name__ == "__main__":
    sys.exit(main())
