"""The `domino` command, one subcommand per tool: `train` (learners/train.py), `evaluate` (evaluate.py),
`bench` (tools/envspeed.py), `benchmark` (benchmark/cli.py), `rate` (benchmark/ratings.py), `exploit`
(exploit/cli.py), `games`, `play` (tools/play.py), `replay` (tools/replay_view.py), `render`
(tools/render.py). Each subcommand's module has `build_parser()` and `main(argv)` and is imported only
when it runs; this module is the top of the library's layers (nothing imports it)."""
from __future__ import annotations

import importlib
import sys

# subcommand -> the module that parses and runs it (`games` is answered here)
COMMANDS = {
    "train": "domino_training.learners.train",
    "evaluate": "domino_training.evaluate",
    "bench": "domino_training.tools.envspeed",
    "benchmark": "domino_training.benchmark.cli",
    "rate": "domino_training.benchmark.ratings",
    "exploit": "domino_training.exploit.cli",
    "games": None,
    "play": "domino_training.tools.play",
    "replay": "domino_training.tools.replay_view",
    "render": "domino_training.tools.render",
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: domino {{{','.join(COMMANDS)}}} ...  (got {argv[:1] or 'nothing'})", file=sys.stderr)
        return 2
    cmd, rest = argv[0], argv[1:]
    if COMMANDS[cmd] is None:
        from domino_envs.registry import game_names

        print("\n".join(game_names()))
        return 0
    code = importlib.import_module(COMMANDS[cmd]).main(rest)
    return code if isinstance(code, int) else 0  # bench and evaluate return their results


if __name__ == "__main__":
    sys.exit(main())
