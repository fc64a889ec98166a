"""The `domino` command: `domino train ...`, `domino evaluate ...`, `domino bench ...`, `domino games`,
`domino benchmark ...` (benchmark.py), `domino rate SPEC...` (ratings.py), `domino exploit --exact SPEC
--game G ...` (exploit.py), `domino play GAME --vs SPEC ...` (play.py), `domino replay FILE ...`
(replay_view.py), `domino render ...` (render.py). Each subcommand's module is imported only when it runs."""
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
        from .bench import main as bench_main

        bench_main(rest)
    elif cmd == "benchmark":
        from .benchmark import main as benchmark_main

        return benchmark_main(rest)
    elif cmd == "rate":
        from .ratings import main as rate_main

        return rate_main(rest)
    elif cmd == "train":
        from .train import main as train_main

        return train_main(rest)
    elif cmd == "render":
        from .render import main as render_main

        return render_main(rest)
    elif cmd == "evaluate":
        from .evaluate import main as evaluate_main

        evaluate_main(rest)
    elif cmd == "play":
        from .play import main as play_main

        return play_main(rest)
    elif cmd == "exploit":
        from .exploit import main as exploit_main

        return exploit_main(rest)
    elif cmd == "replay":
        from .replay_view import main as replay_main

        return replay_main(rest)
    else:
        from domino_envs.registry import game_names

        print("\n".join(game_names()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
