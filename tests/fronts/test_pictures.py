"""Pictures (domino_envs/pictures.py): `domino render` PNGs of mid-game positions of every game, the
rgb_array render mode of both fronts, replay GIFs, and that nothing but a drawing call imports Pillow."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from PIL import Image  # the `render` extra (make install installs it)

from domino_envs import make, make_game, pictures
from domino_envs.core import H_TURN
from domino_envs.errors import PillowMissingError
from domino_envs.pictures import HEIGHT, WIDTH, LinePlay, RowsPlay, describe, picture, save_gif
from domino_envs.registry import config_from_pairs
from domino_training import cli
from domino_training.tools.render import play_position, write_docs

# (env, --set items, seed, moves): a mid-game position of each game, with what the case is there for
CASES = {
    "draw": ("draw_v0", [], 3, 8),
    "block": ("block_v0", ["num_players=4"], 1, 6),
    "pete_branches": ("seven_toed_pete_v0", [], 0, 4),
    "racehorse_branches": ("racehorse_v0", ["spinner=first_double"], 4, 8),
    "sum7": ("sum7_v0", ["num_players=3"], 1, 6),
    "magic7_joker_killed": ("magic7_v0", [], 1, 19),
    "draw_long_line": ("draw_v0", ["max_pip=9", "num_players=2"], 0, 15),
}
AGENT = {"magic7_joker_killed": "random"}


def _render(tmp_path, case, seed=None, moves=None, extra=()):
    name, sets, s, m = CASES[case]
    out = tmp_path / f"{case}_{seed}_{moves}.png"
    argv = ["render", name, "--seed", str(s if seed is None else seed), "--moves", str(m if moves is None else moves),
            "--agent", AGENT.get(case, "greedy"), "--out", str(out), *extra]
    for item in sets:
        argv += ["--set", item]
    assert cli.main(argv) == 0
    return np.asarray(Image.open(out).convert("RGB"))


def _position(case):
    name, sets, seed, moves = CASES[case]
    game = make_game(name, **config_from_pairs(sets))
    state, played = play_position(game, seed, moves, AGENT.get(case, "greedy"))
    assert played == moves and not state[1], f"{case}: the position is not mid-game"
    return game, state


def _is_a_picture(img):
    assert img.shape == (HEIGHT, WIDTH, 3) and img.dtype == np.uint8
    colours = np.unique(img.reshape(-1, 3), axis=0)
    assert len(colours) > 200, f"only {len(colours)} colours: blank?"
    felt = np.array(pictures._FELT)
    assert (np.abs(img.astype(int) - felt).sum(axis=2) > 30).mean() > 0.2  # much more than an empty felt


@pytest.mark.parametrize("case", list(CASES))
def test_render_png_of_a_mid_game_position(tmp_path, case):
    a = _render(tmp_path, case)
    _is_a_picture(a)
    assert np.array_equal(a, _render(tmp_path / "..", case)), "same seed, different picture"
    b = _render(tmp_path, case, moves=CASES[case][3] - 2)
    assert (a != b).any(axis=2).mean() > 0.002, "two positions gave the same picture"


def test_the_cases_show_what_they_are_for():
    game, state = _position("pete_branches")
    play = describe(game, state, 0).play
    assert any(arm >= 2 for arm, _, _ in play.moves), "no tile on a spinner branch"
    game, state = _position("racehorse_branches")
    play = describe(game, state, 0).play
    assert any(arm >= 2 for arm, _, _ in play.moves) and play.branches
    game, state = _position("magic7_joker_killed")
    table = describe(game, state, 0)
    assert isinstance(table.play, RowsPlay) and table.play.on_joker
    assert sum(seat.killed for seat in table.seats) >= 1


def test_a_long_line_wraps_inside_the_picture_without_overlaps():
    game, state = _position("draw_long_line")
    play = describe(game, state, 0).play
    assert isinstance(play, LinePlay) and len(play.moves) >= 25
    box = (186 * pictures._SS, 158 * pictures._SS, 838 * pictures._SS, 548 * pictures._SS)
    tiles, _, u, (ox, oy) = pictures._layout_line(play, box)
    assert len(tiles) == len(play.moves) + 1
    rects = np.array([[ox + r[0] * u, oy + r[1] * u, ox + r[2] * u, oy + r[3] * u] for r in (t.rect for t in tiles)])
    assert rects[:, 0].min() >= box[0] - 1e-6 and rects[:, 2].max() <= box[2] + 1e-6
    assert rects[:, 1].min() >= box[1] - 1e-6 and rects[:, 3].max() <= box[3] + 1e-6
    for i in range(len(rects)):
        for j in range(i):
            p, q = rects[i], rects[j]
            assert not (p[0] < q[2] - 1 and q[0] < p[2] - 1 and p[1] < q[3] - 1 and q[1] < p[3] - 1), (i, j)
    centres_y = {round(float(t.rect[1] + t.rect[3]) / 2, 1) for t in tiles}
    assert len(centres_y) >= 3, "the line did not bend"


def test_hidden_hands_stay_face_down():
    game, state = _position("draw")
    table = describe(game, state, 1)
    assert [s.tiles is not None for s in table.seats] == [False, True]
    assert all(s.tiles is None for s in describe(game, state, None).seats)
    assert all(s.tiles is not None for s in describe(game, state, "full").seats)
    assert not np.array_equal(picture(game, state, 0), picture(game, state, 1))


@pytest.mark.parametrize("name", ["draw_v0", "magic7_v0"])
def test_env_and_single_seat_env_rgb_array(name):
    from domino_agents import RandomAgent
    from domino_envs.wrappers import SingleSeatEnv

    env = make(name, render_mode="rgb_array")
    env.reset(seed=0)
    img = env.render()
    assert isinstance(img, np.ndarray) and img.dtype == np.uint8 and img.shape == (HEIGHT, WIDTH, 3)
    seat = env.game.current_seat(env._state)
    assert np.array_equal(img, picture(env.game, env._state, seat))  # the seat to act's view, like ansi
    single = SingleSeatEnv(name, opponents=RandomAgent, seed=0, render_mode="rgb_array", seat=1)
    single.reset()
    img = single.render()
    assert img.shape == (HEIGHT, WIDTH, 3) and img.dtype == np.uint8
    assert np.array_equal(img, picture(single.game, single._state, 1))
    assert "rgb_array" in env.metadata["render_modes"] and "rgb_array" in single.metadata["render_modes"]


def test_gif_of_the_positions_of_a_game(tmp_path):
    game = make_game("draw_v0")
    state = game.new_state()
    game.reset(state, 5)
    rows = [state.copy()]
    rng = np.random.default_rng(0)
    while not state[1] and len(rows) < 5:
        game.step(state, int(rng.choice(game.legal_actions(state))))
        rows.append(state.copy())
    out = tmp_path / "game.gif"
    assert save_gif(game, rows, out, fps=4, viewer="full") == len(rows)
    gif = Image.open(out)
    assert gif.format == "GIF" and gif.n_frames == len(rows) and gif.size == (WIDTH, HEIGHT)
    first = np.asarray(gif.convert("RGB"))
    gif.seek(len(rows) - 1)
    assert (first != np.asarray(gif.convert("RGB"))).any()
    with pytest.raises(pictures.ConfigError, match="fps"):
        save_gif(game, rows, tmp_path / "x.gif", fps=0)


@pytest.mark.parametrize("argv, message", [
    (["nope_v0", "--out", "x.png"], "unknown game"),
    (["draw_v0", "--seat", "5", "--out", "x.png"], "--seat 5: draw_v0 has seats 0..1"),
    (["draw_v0", "--out", "x.gif"], ".png"),
    (["draw_v0", "--set", "max_pip", "--out", "x.png"], "KEY=VALUE"),
    (["draw_v0", "--agent", "nobody", "--out", "x.png"], "unknown agent"),
    (["draw_v0", "--moves", "-1", "--out", "x.png"], "--moves"),
    (["draw_v0"], "--out"),
    (["--out", "x.png"], "GAME"),
    (["draw_v0", "--replay", "r.jsonl", "--out", "x.gif"], "not both"),
    (["draw_v0", "--moves", "two", "--out", "x.png"], "invalid int"),
])
def test_bad_render_arguments_are_one_line_and_exit_2(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["render", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and err.startswith("domino render: error:")
    assert not (tmp_path / "x.png").exists()


def test_missing_pillow_is_a_clear_error(monkeypatch):
    game, state = _position("draw")
    monkeypatch.setitem(sys.modules, "PIL", None)  # `from PIL import ...` now fails as if not installed
    with pytest.raises(PillowMissingError, match="pip install pillow"):
        picture(game, state, 0)
    env = make("draw_v0", render_mode="rgb_array")
    env.reset(seed=0)
    with pytest.raises(PillowMissingError):
        env.render()


def test_pillow_is_imported_only_by_a_drawing_call():
    code = (
        "import sys\n"
        "import domino_envs\n"
        "from domino_envs import vector, wrappers, pictures\nfrom domino_training import cli\nfrom domino_training.tools import render\n"
        "import domino_agents, domino_training.learners.train, domino_training.learners.ppo\n"
        "import domino_training.evaluate, domino_training.configs\n"
        "env = domino_envs.make('draw_v0', render_mode='ansi'); env.reset(seed=0); env.render()\n"
        "assert not [m for m in sys.modules if m == 'PIL' or m.startswith('PIL.')], 'PIL imported'\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-2000:]


def test_render_replay_writes_a_gif_of_a_saved_game(tmp_path, capsys):
    """`domino render --replay` animates a real saved replay: one frame per position (the start
    and every recorded step), frames that change; a bad index, seat or output name is one line."""
    from domino_envs.replay import Recorder, save

    game = make_game("sum7_v0", num_players=2)
    state = game.new_state()
    reps = []
    for seed in (3, 4):
        game.reset(state, seed)
        rec = Recorder(game)
        rec.start(state, seed)
        for _ in range(3):
            seat = int(state[H_TURN])
            action = game.legal_actions(state)[0]
            game.step(state, action)
            rec.step(seat, action, state)
        reps.append(rec.finish())  # three moves in: positions() plays them, the game goes on
    path = tmp_path / "games.jsonl"
    save(path, reps)
    out = tmp_path / "game.gif"
    assert cli.main(["render", "--replay", str(path), "--index", "1", "--fps", "3", "--out", str(out)]) == 0
    gif = Image.open(out)
    assert gif.n_frames == 4
    frames = []
    for k in range(gif.n_frames):
        gif.seek(k)
        frames.append(np.asarray(gif.convert("RGB")))
    assert all((a != b).any() for a, b in zip(frames, frames[1:]))
    assert cli.main(["render", "--replay", str(path), "--index", "2", "--out", str(out)]) == 2
    assert f"--index 2: {path} holds games 0..1" in capsys.readouterr().err
    assert cli.main(["render", "--replay", str(path), "--seat", "2", "--out", str(out)]) == 2
    assert cli.main(["render", "--replay", str(path), "--out", str(tmp_path / "x.png")]) == 2


def test_every_position_of_crowded_spinner_games_lays_out_inside_the_picture():
    """Racehorse with every double a spinner, 4 players: up to 14 arms on one table."""
    game = make_game("racehorse_v0", spinner="all_doubles", num_players=4)
    box = (186 * pictures._SS, 158 * pictures._SS, 838 * pictures._SS, 548 * pictures._SS)
    rng = np.random.default_rng(1)
    spinners_seen = 0
    for seed in range(3):
        state = game.new_state()
        game.reset(state, seed)
        while True:
            play = describe(game, state, "full").play
            if play is not None:
                tiles, _, u, (ox, oy) = pictures._layout_line(play, box)
                assert len(tiles) == len(play.moves) + 1
                assert min(ox + t.rect[0] * u for t in tiles) >= box[0] - 1e-6
                assert max(ox + t.rect[2] * u for t in tiles) <= box[2] + 1e-6
                assert min(oy + t.rect[1] * u for t in tiles) >= box[1] - 1e-6
                assert max(oy + t.rect[3] * u for t in tiles) <= box[3] + 1e-6
                spinners_seen = max(spinners_seen, len(play.branches) // 2)
            if state[1]:
                break
            game.step(state, int(rng.choice(game.legal_actions(state))))
    assert spinners_seen >= 3
    _is_a_picture(picture(game, state, "full"))


def test_docs_pictures_script_writes_one_small_png_per_env(tmp_path):
    from domino_envs.registry import game_names

    paths = write_docs(tmp_path)
    assert sorted(p.rsplit("/", 1)[-1] for p in paths) == sorted(f"{n}.png" for n in game_names())
    for path in paths:
        _is_a_picture(np.asarray(Image.open(path).convert("RGB")))
        assert (tmp_path / path.rsplit("/", 1)[-1]).stat().st_size < 100_000
