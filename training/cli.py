"""The `domino` command, one subcommand per tool: `train` (learners/train.py), `evaluate` (evaluate.py),
`bench` (tools/envspeed.py), `benchmark` (benchmark/cli.py), `rate` (benchmark/ratings.py), `exploit`
(exploit/cli.py), `games`, `play` (tools/play.py), `replay` (tools/replay_view.py), `render`
(tools/render.py). Each subcommand's module is imported only when it runs; this module is the top of
the library's layers (nothing imports it)."""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = ["train", "evaluate", "bench", "benchmark", "rate", "exploit", "games", "play", "replay", "render"]
    if not argv or argv[0] not in commands:
        print(f"usage: domino {{{','.join(commands)}}} ...  (got {argv[:1] or 'nothing'})", file=sys.stderr)
        return 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "bench":
        from domino_training.tools.envspeed import main as bench_main

        bench_main(rest)
    elif cmd == "benchmark":
        from domino_training.benchmark.cli import main as benchmark_main

        return benchmark_main(rest)
    elif cmd == "rate":
        from domino_training.benchmark.ratings import main as rate_main

        return rate_main(rest)
    elif cmd == "train":
        from domino_training.learners.train import main as train_main

        return train_main(rest)
    elif cmd == "render":
        from domino_training.tools.render import main as render_main

        return render_main(rest)
    elif cmd == "evaluate":
        from domino_training.evaluate import main as evaluate_main

        evaluate_main(rest)
    elif cmd == "play":
        from domino_training.tools.play import main as play_main

        return play_main(rest)
    elif cmd == "exploit":
        from domino_training.exploit.cli import main as exploit_main

        return exploit_main(rest)
    elif cmd == "replay":
        from domino_training.tools.replay_view import main as replay_main

        return replay_main(rest)
    else:
        from domino_envs.registry import game_names

        print("\n".join(game_names()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
