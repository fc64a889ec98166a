"""The evaluation harness: same seed -> same deal and same table, duplicate-deal bookkeeping,
interval arithmetic, outputs, and clear errors for bad input."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

import domino_envs
from domino_envs.rng import mix_seed
from domino_training.evaluate import Stat, evaluate, main, win_shares


def test_same_seed_same_deal_engine_and_env():
    game = domino_envs.make_game("draw_v0")
    a, b = game.new_state(), game.new_state()
    game.reset(a, 1234)
    game.reset(b, 1234)
    assert np.array_equal(a, b)
    game.reset(b, 1235)
    assert not np.array_equal(a, b)
    env = domino_envs.make("draw_v0")
    seen = []
    for _ in range(2):
        env.reset(seed=77)
        seen.append([env.observe(p)["observation"].copy() for p in env.possible_agents])
    for x, y in zip(*seen):
        assert np.array_equal(x, y)
    # the harness's deal 0 for seed 77 is exactly the env's first episode for seed 77
    game.reset(a, mix_seed(77, 0))
    for seat, _agent in enumerate(env.possible_agents):
        assert np.array_equal(game.observe(a, seat), seen[0][seat])


def test_win_shares_split_ties():
    assert np.allclose(win_shares(np.array([3.0, 3.0, -6.0])), [0.5, 0.5, 0.0])
    assert np.allclose(win_shares(np.array([-1.0, 4.0, -3.0])), [0.0, 1.0, 0.0])
    assert np.allclose(win_shares(np.zeros(4)), [0.25] * 4)


def test_stat_interval_is_normal_over_deals():
    v = np.array([0.0, 1.0, 0.5, 1.0, 0.0, 0.5, 1.0, 1.0])
    s = Stat.of(v)
    half = 1.959963984540054 * v.std(ddof=1) / math.sqrt(v.size)
    assert s.mean == pytest.approx(v.mean())
    assert (s.lo, s.hi) == pytest.approx((v.mean() - half, v.mean() + half))
    clipped = Stat.of(np.array([1.0, 1.0, 0.5]), (0.0, 1.0))
    assert clipped.hi == 1.0


def test_same_seed_same_table_different_seed_different_table():
    kw = dict(deals=40, progress=False)
    r1 = evaluate("draw_v0", ["random", "greedy"], seed=9, **kw)
    r2 = evaluate("draw_v0", ["random", "greedy"], seed=9, **kw)
    r3 = evaluate("draw_v0", ["random", "greedy"], seed=10, **kw)
    assert r1.table() == r2.table()
    assert r1.to_json() == r2.to_json()
    assert r1.to_json() != r3.to_json()


def test_two_player_views_are_complementary():
    r = evaluate("block_v0", ["random", "greedy"], deals=30, seed=1, progress=False)
    a, b = r.matchups[("random", "greedy")], r.matchups[("greedy", "random")]
    assert np.allclose(a.win + b.win, 1.0)
    assert np.allclose(a.reward, -b.reward)  # every game is zero-sum


def test_multiplayer_matchups_both_directions_and_fair_share():
    r = evaluate("draw_v0", ["random", "greedy"], deals=10, seed=2, config={"num_players": 3}, progress=False)
    assert set(r.matchups) == {("random", "greedy"), ("greedy", "random")}
    assert r.fair_share == pytest.approx(1 / 3)
    assert r.to_json()["summary"]["greedy"]["deals"] == 10


def test_cli_writes_markdown_and_json(tmp_path, capsys):
    md, js = tmp_path / "t.md", tmp_path / "t.json"
    main(["--game", "draw_v0", "--agents", "random", "greedy", "--deals", "12", "--seed", "4",
          "--markdown", str(md), "--json", str(js), "--no-progress"])
    printed = capsys.readouterr().out
    assert "greedy" in printed and "95% CI" in printed
    data = json.loads(js.read_text())
    assert data["deals"] == 12 and set(data["summary"]) == {"random", "greedy"}
    assert md.read_text().startswith("### draw_v0")
    assert "| greedy | random |" in md.read_text()


def test_cli_pairs_and_config(capsys):
    r = main(["--game", "draw_v0", "--agents", "random", "greedy", "heuristic", "--pairs", "heuristic@greedy",
              "--deals", "5", "--set", "num_players=3", "--no-progress"])
    assert set(r.matchups) == {("heuristic", "greedy")}
    assert r.num_players == 3
    capsys.readouterr()
    old = main(["--game", "draw_v0", "--agents", "random", "greedy", "--deals", "2", "--config", "num_players=3",
                "--no-progress"])  # the old spelling still works, with a note
    assert old.num_players == 3 and "--config KEY=VALUE ... is now --set KEY=VALUE" in capsys.readouterr().err


@pytest.mark.parametrize("kwargs, match", [
    (dict(game_name="nope_v0", agents=["random"], deals=5), "registered games"),
    (dict(game_name="draw_v0", agents=["random", "alphago"], deals=5), "known agents"),
    (dict(game_name="draw_v0", agents=["random", "greedy"], deals=0), "positive integer"),
    (dict(game_name="draw_v0", agents=["random", "random"], deals=5), "same spec twice"),
    (dict(game_name="draw_v0", agents=["random", "greedy"], deals=5, pairs=[("random", "pimc")]), "not one of the agents"),
    (dict(game_name="draw_v0", agents=["random", "greedy"], deals=5, pairs=[("random", "random")]), "against itself"),
    (dict(game_name="draw_v0", agents=["random", "greedy"], deals=5, config={"colour": 1}), "allowed keys"),
])
def test_bad_input_is_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        evaluate(progress=False, **kwargs)


def test_domino_cli_routes_evaluate(capsys):
    from domino_training.cli import main as domino_main

    assert domino_main(["evaluate", "--agents", "random", "greedy", "--deals", "3", "--no-progress"]) == 0
    assert "draw_v0" in capsys.readouterr().out


# ------------------------------------------------------------------------------ workers
@pytest.mark.parametrize("game", domino_envs.game_names())
def test_two_workers_give_the_same_report_and_replays_as_one(game, tmp_path):
    """`workers=2` plays the deals in shards in two processes; the JSON report and the replay file
    are byte-identical to the serial run's (every deal and agent seed depends on the deal's index)."""
    agents = ["random", "greedy", "heuristic"] + (["pimc:n=2"] if game == "block_v0" else [])
    out = {}
    for workers in (1, 2):
        path = tmp_path / f"r{workers}.jsonl"
        report = evaluate(game, agents, 5, seed=11, progress=False, replay_path=str(path), workers=workers)
        out[workers] = (json.dumps(report.to_json()), path.read_text())
    assert out[1] == out[2]
    n = domino_envs.make_game(game).num_players
    played = len(json.loads(out[1][0])["matchups"]) // (2 if n == 2 else 1)  # 2 players: a pair read both ways
    assert out[1][1].count("\n") == 5 * n * played


@pytest.mark.parametrize("workers", [0, -1, 1.5, "2", True])
def test_a_bad_worker_count_is_named(workers):
    with pytest.raises(ValueError, match=r"workers=.* must be an integer >= 1"):
        evaluate("draw_v0", ["random", "greedy"], 2, workers=workers)


def test_a_shard_that_fails_in_its_worker_is_named():
    """An agent that cannot be built where the shard runs: the error names the matchup, the deals and
    the worker's own error (the parent checks specs first, so the shards are called directly here)."""
    from domino_training.evaluate import Report, _run_sharded
    from domino_training.parallel import JobError

    report = Report("draw_v0", {}, 2, 4, 0, ["random", "ppo:checkpoint=/nonexistent/policy.npz"])
    with pytest.raises(JobError, match=r"random vs ppo:checkpoint=/nonexistent/policy.npz, deals \d+-\d+, failed in its worker: "):
        _run_sharded(report, "draw_v0", {}, [("random", "ppo:checkpoint=/nonexistent/policy.npz")], 2, None, None)


def test_cli_workers_flag(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--game", "draw_v0", "--agents", "random", "greedy", "--deals", "2", "--workers", "0"])
    assert e.value.code == 2 and "workers=0" in capsys.readouterr().err


def test_in_order_holds_a_finished_job_until_every_job_before_it_is_out():
    """training/parallel.py's `in_order`, which every driver writes through: results arriving in any
    order come out in list order, each as soon as the jobs before it are out."""
    from domino_training.parallel import in_order

    seen = []

    def arriving():
        for i in (2, 0, 3, 1, 4):
            seen.append(i)
            yield i, f"r{i}"

    out = [(i, r, len(seen)) for i, r in in_order(arriving())]
    assert out == [(0, "r0", 2), (1, "r1", 4), (2, "r2", 4), (3, "r3", 4), (4, "r4", 5)]
