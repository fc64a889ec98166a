"""A bounded load test of `domino serve` on 127.0.0.1: many games at once, a fixed number of moves.

    python -m domino_training.scripts.webload                      # 20 games against pimc64, 10 moves each
    python -m domino_training.scripts.webload --games 4 --moves 3 --agent greedy --json load.json

The app runs under uvicorn in a process of its own on a free port (so the clients' work does not
share the server's interpreter lock, as a browser would not); one client thread per game
(httpx) starts a game (the human in seat 0, the menu agent in the others), then reads its page and
posts its first legal move, `--moves` times (a finished game is followed by a new one). The figure
that matters is a human move's response with the agents' thinking excluded: the client's time for
the move request less the ``agents`` duration its ``Server-Timing`` header reports (the agents'
replies, waiting for the bounded pool included). When the clients are done the server is stopped and,
in its own process, checks every game it holds intact (its recorded moves replayed from its seed give
exactly its state row); each finished game's saved replay is verified here. ``--record`` runs it
``--runs`` times and writes docs/web.json and the Load section of docs/web.md rendered from it
(`section`, registered in training/scripts/pages.py), so the page's figures are the data's.
"""
from __future__ import annotations

import argparse
import json
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from domino_training.commands import add_workers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_until_stopped(settings, report: Path) -> None:
    """Serve the app in this process until its standard input closes, then write {"games_checked",
    "games_broken"} (every held game checked with `intact`) to `report`."""
    import contextlib

    import uvicorn

    from domino_training.web.app import create_app

    class Server(uvicorn.Server):
        def capture_signals(self):  # stopped through stdin; uvicorn would re-raise a signal and skip the check
            return contextlib.nullcontext()

    app = create_app(settings)
    server = Server(uvicorn.Config(app, host=settings.host, port=settings.port, log_level="warning"))

    def stop_when_stdin_closes():
        sys.stdin.read()
        server.should_exit = True

    threading.Thread(target=stop_when_stdin_closes, daemon=True).start()
    server.run()
    held = app.app.state.games.games
    broken = [gid for gid, live in held.items() if not intact(live)]
    report.write_text(json.dumps({"games_checked": len(held), "games_broken": broken}))


def start_server(port: int, folder: Path, max_games: int, workers: int, report: Path):
    """The server process (this module with --serve), once it answers on 127.0.0.1:port."""
    import httpx

    argv = [sys.executable, "-m", "domino_training.scripts.webload", "--serve", "--port", str(port), "--data-dir",
            str(folder), "--max-games", str(max_games), "--workers", str(workers), "--report", str(report)]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE)
    for _ in range(600):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with status {proc.returncode}")
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the server did not answer within 60 s")


def one_client(base: str, game: str, seats: list[str], moves: int, seed: int, out: list, errors: list) -> None:
    """Play `moves` human moves through HTTP (new games as they end); each move's (total ms, agents ms)."""
    import httpx

    origin = {"Origin": base}
    try:
        with httpx.Client(base_url=base, timeout=120) as c:
            path = None
            k = 0
            while k < moves:
                if path is None:
                    data = {"game": game, "seed": str(seed), **{f"seat{i}": s for i, s in enumerate(seats)}}
                    r = c.post("/games", data=data, headers=origin)
                    path = r.headers["location"] if r.status_code == 303 else None
                    if path is None:
                        raise RuntimeError(f"new game: {r.status_code} {r.text[-200:]}")
                    seed += 1000
                html = c.get(path).text
                if "The game is over" in html:
                    path = None
                    continue
                version = re.search(r'name="version" value="(\d+)"', html).group(1)
                action = re.search(r'name="action" value="(\d+)" class="move"', html).group(1)
                t0 = time.perf_counter()
                r = c.post(path + "/move", data={"seat": "0", "version": version, "action": action}, headers=origin)
                total = 1000 * (time.perf_counter() - t0)
                if r.status_code != 303:
                    raise RuntimeError(f"move: {r.status_code} {r.text[-200:]}")
                timing = dict(re.findall(r"(\w+);dur=([0-9.]+)", r.headers["server-timing"]))
                out.append((total, float(timing["agents"]), float(timing["move"])))
                k += 1
    except Exception as err:  # noqa: BLE001 - reported by the caller
        errors.append(repr(err))


def intact(live) -> bool:
    """The live game's recorded moves, replayed from its seed, give exactly its state row."""
    rep = live.recorder.finish() if not live.over else live.replay()
    game, row = rep.start()
    for st in rep.steps:
        game.step(row, st.action)
    game.validate(live.state)
    return bool(np.array_equal(row, live.state))


def run(games: int = 20, moves: int = 10, agent: str = "pimc64", game: str = "block_v0", workers: int = 2,
        data_dir: Path | None = None) -> dict:
    """The load test (module doc); its figures as a dict."""
    from domino_envs.registry import make_game
    from domino_envs.replay import load
    with tempfile.TemporaryDirectory(prefix="domino-webload-") as scratch:
        folder = Path(data_dir or scratch)
        port = free_port()
        report = Path(scratch) / "server.json"
        server = start_server(port, folder, games * (moves + 2), workers, report)
        base = f"http://127.0.0.1:{port}"
        n = make_game(game).num_players
        seats = ["human"] + [agent] * (n - 1)
        out: list = []
        errors: list = []
        t0 = time.perf_counter()
        clients = [threading.Thread(target=one_client, args=(base, game, seats, moves, 1 + i, out, errors))
                   for i in range(games)]
        for t in clients:
            t.start()
        for t in clients:
            t.join()
        seconds = time.perf_counter() - t0
        server.stdin.close()
        server.wait(timeout=60)
        held = json.loads(report.read_text())
        saved = load(folder / "games.jsonl") if (folder / "games.jsonl").is_file() else []
        for rep in saved:
            rep.verify()
    total = np.array([t for t, _, _ in out])
    agents = np.array([a for _, a, _ in out])
    human = total - agents
    return {"games": games, "moves_per_game": moves, "agent": agent, "game": game, "workers": workers,
            "requests": len(out), "errors": errors, "seconds": seconds, **held, "finished_games_verified": len(saved),
            "human_move_ms": {"p50": float(np.percentile(human, 50)), "p95": float(np.percentile(human, 95)),
                              "max": float(human.max())} if len(out) else None,
            "server_move_ms_p95": float(np.percentile([m for _, _, m in out], 95)) if out else None,
            "agents_ms_p50": float(np.percentile(agents, 50)) if len(out) else None}


PROG = "python -m domino_training.scripts.webload"


def record(args) -> int:
    """`--record`: `--runs` runs of the load test into docs/web.json, then docs/web.md's section from it."""
    from datetime import date

    from domino_training.scripts import DOCS, pages

    runs = [run(args.games, args.moves, args.agent, args.game, args.workers) for _ in range(args.runs)]
    data = {"date": date.today().isoformat(), "machine": args.machine,
            "command": f"{PROG} --games {args.games} --moves {args.moves} --agent {args.agent} --game {args.game} "
                       f"--workers {args.workers}",
            "runs": runs}
    (DOCS / "web.json").write_text(json.dumps(data, indent=1) + "\n")
    pages.write_page("web.md")
    print(section(data), file=sys.stderr)
    return 0 if all(not r["errors"] and not r["games_broken"] for r in runs) else 1


def section(data: dict) -> str:
    """The Load section of docs/web.md from docs/web.json."""
    first = data["runs"][0]
    lines = [f"Measured {data['date']} with `{data['command']}` (from a checkout) on {data['machine']}: "
             f"{first['games']} games of {first['game']} at once against the menu's `{first['agent']}`, "
             f"{first['moves_per_game']} human moves each, the agents' pool {first['workers']} threads.", "",
             "| run | requests | p50 | p95 | max | agents' reply p50 | games checked intact | finished games' replays verified |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for i, r in enumerate(data["runs"], 1):
        h = r["human_move_ms"]
        lines.append(f"| {i} | {r['requests']} | {h['p50']:.0f} ms | {h['p95']:.0f} ms | {h['max']:.0f} ms | "
                     f"{r['agents_ms_p50']:.0f} ms | {r['games_checked'] - len(r['games_broken'])} of {r['games_checked']} | "
                     f"{r['finished_games_verified']} |")
    worst = max(r["human_move_ms"]["p95"] for r in data["runs"])
    moves = max(r["server_move_ms_p95"] for r in data["runs"])
    lines += ["", f"The worst run's 95th percentile of a human move's response, the agents' thinking excluded, is "
              f"{worst:.0f} ms ({'under' if worst < 100 else 'over'} the 100 ms we hold it to); the move itself "
              f"(the `move` duration of `Server-Timing`: the checks, the step, the public events and the replay "
              f"record under the game's lock) {moves:.0f} ms at its 95th percentile in the worst run."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m domino_training.scripts.webload", description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=20, help="games at once (default 20)")
    p.add_argument("--moves", type=int, default=10, help="human moves per game (default 10)")
    p.add_argument("--agent", default="pimc64", help="menu id of the agents (default pimc64: pimc:n=64)")
    p.add_argument("--game", default="block_v0", help="the game (default block_v0)")
    add_workers(p, "the agents think in", default=2, unit="threads", same=False)
    p.add_argument("--json", default=None, metavar="FILE", help="write the figures here too")
    p.add_argument("--record", action="store_true",
                   help="run --runs times; write docs/web.json and docs/web.md's Load section from it")
    p.add_argument("--runs", type=int, default=2, help="runs kept by --record (default 2)")
    p.add_argument("--machine", default="the project's 2-core VM", help="the machine, as --record writes it")
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)  # the server process (start_server)
    p.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--data-dir", default=None, help=argparse.SUPPRESS)
    p.add_argument("--max-games", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--report", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.serve:
        from domino_training.web.app import Settings

        settings = Settings(port=args.port, data_dir=Path(args.data_dir), max_games=args.max_games,
                            workers=args.workers)
        serve_until_stopped(settings, Path(args.report))
        return 0
    if args.record:
        return record(args)
    result = run(args.games, args.moves, args.agent, args.game, args.workers)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    ok = not result["errors"] and not result["games_broken"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
