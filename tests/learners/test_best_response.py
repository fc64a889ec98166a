"""Learned best responses (training/exploit/best_response.py, `domino exploit SPEC --game G`): the target
opponent in PPO's pool, batched opponents of any spec, the sampled edge against the exact one on
the smallest config, a tiny run end to end and resumed, bad input."""
from __future__ import annotations

import json

import numpy as np
import pytest

from domino_agents.registry import make_agent
from domino_agents.trained import load_policy, policy_meta, save_policy
from domino_envs.errors import ConfigError
from domino_envs.registry import make_game
from domino_envs.vector import VectorEnv
from domino_training import exploit
from domino_training.configs import set_key, validate
from domino_training.exploit import best_response
from domino_training.learners.pool import GreedyBatch, HeuristicBatch, PolicyBatch, RandomBatch, batch_opponent
from domino_training.learners.ppo import TrainConfig
from domino_training.scripts import exploit_pages

SMALL = ("draw_v0", {"max_pip": 2, "hand_size": 2})
# a few thousand env steps: seconds
TINY = {"ppo.num_envs": 16, "ppo.rollout_steps": 16, "ppo.minibatch_size": 128, "ppo.epochs": 2,
        "network.hidden": [16]}


def random_policy_file(tmp_path, game, seed=0):
    rng = np.random.default_rng(seed)
    layers = [(rng.normal(size=(8, game.obs_size)).astype(np.float32), rng.normal(size=8).astype(np.float32)),
              (rng.normal(size=(game.num_actions, 8)).astype(np.float32), np.zeros(game.num_actions, np.float32))]
    return save_policy(tmp_path / "p.npz", layers, policy_meta(game, [8], "test", 0))


def test_batch_opponent_picks_the_fast_form_of_each_spec(tmp_path):
    game = make_game("draw_v0")
    assert isinstance(batch_opponent("random", game), RandomBatch)
    assert isinstance(batch_opponent("greedy", game), GreedyBatch)
    assert isinstance(batch_opponent("heuristic", game), HeuristicBatch)
    path = random_policy_file(tmp_path, game)
    assert isinstance(batch_opponent(f"ppo:checkpoint={path}", game), PolicyBatch)
    assert not batch_opponent(f"ppo:checkpoint={path}", game).sample
    assert batch_opponent(f"ppo:checkpoint={path},sample=true", game).sample
    assert isinstance(batch_opponent("trained", game), PolicyBatch)


@pytest.mark.parametrize("name", ["mlp", "ppo"])
def test_a_policy_file_is_a_batched_opponent_and_a_warm_start_by_either_name(tmp_path, name):
    """`mlp:` and its old name `ppo:` are one agent: both play batched and both name the file to copy."""
    game = make_game("draw_v0")
    path = random_policy_file(tmp_path, game)
    opponent = batch_opponent(f"{name}:checkpoint={path},sample=true", game)
    assert isinstance(opponent, PolicyBatch) and opponent.sample
    assert best_response.policy_file_of(f"{name}:checkpoint={path}", "draw_v0") == path.resolve()


def test_a_policy_file_opponent_plays_the_agents_choices(tmp_path):
    """Row for row, the batched policy file picks what its agent's act picks (the argmax)."""
    game = make_game("draw_v0")
    path = random_policy_file(tmp_path, game)
    venv = VectorEnv("draw_v0", 64, seed=1)
    obs, masks, _ = venv.reset()
    agent = make_agent(f"ppo:checkpoint={path}", game)
    rng = np.random.default_rng(0)
    for _ in range(20):
        acts = batch_opponent(f"ppo:checkpoint={path}", game).act_batch(obs, masks, rng)
        assert acts.tolist() == [agent.act(o, m) for o, m in zip(obs, masks)]
        obs, masks, *_ = venv.step(acts)


def test_agents_that_cannot_play_batched_are_refused():
    """The tabular policy reads its hand's history and PIMC the hidden state: neither can play a
    batch of unrelated rows, so neither is a target (nor a teacher)."""
    name, config = exploit.small_configs()["draw_d2"]
    engine = make_game(name, **config)
    for spec in (f"tabular:path={exploit_pages.policy_path('draw_d2', exploit_pages.POLICY_DIR)}", "pimc:n=2", "heuristic:seed=3"):
        with pytest.raises(ConfigError, match="cannot play batched"):
            batch_opponent(spec, engine)
    with pytest.raises(ConfigError, match="unknown agent 'nobody'"):
        batch_opponent("nobody", engine)
    with pytest.raises(ConfigError, match="does not exist"):
        batch_opponent("ppo:checkpoint=/no/such/file.npz", engine)


@pytest.mark.parametrize("key,value,message", [
    ("opponents.target_spec", "", "needs an agent spec"),
    ("opponents.target_spec", "nobody", "needs an agent spec"),
    ("algo", "sb3", "for algo ppo only"),
    ("network.init_actor", "x.npz", "for algo ppo only"),
])
def test_target_weight_needs_a_spec_and_ppo(key, value, message):
    train = TrainConfig()
    set_key(train, "opponents.target", 1.0)
    set_key(train, "opponents.target_spec", "heuristic")
    set_key(train, key, value)
    if key == "network.init_actor":
        set_key(train, "algo", "sb3")
        set_key(train, "opponents.target", 0.0)
    with pytest.raises(ConfigError, match=message):
        validate(train)


def test_imitation_teacher_must_be_an_agent_spec():
    train = TrainConfig()
    set_key(train, "imitation.teacher", "trained")
    validate(train)
    set_key(train, "imitation.teacher", "teacher of nothing")
    with pytest.raises(ConfigError, match="imitation.teacher"):
        validate(train)


def test_with_all_weight_on_the_target_every_game_has_one_learner_seat():
    from domino_training.configs import RunConfig
    from domino_training.learners.ppo import LEARNER, TARGET, Collector

    train = TrainConfig()
    for k, v in {**TINY, "opponents.self_play": 0.0, "opponents.snapshot": 0.0, "opponents.random": 0.0,
                 "opponents.greedy": 0.0, "opponents.heuristic": 0.0, "opponents.target": 1.0,
                 "opponents.target_spec": "greedy"}.items():
        set_key(train, k, v)
    validate(train)
    col = Collector(RunConfig("seven_toed_pete_v0", {}, train))
    assert ((col.ctrl == LEARNER).sum(axis=1) == 1).all()
    assert ((col.ctrl == TARGET).sum(axis=1) == col.n - 1).all()
    assert isinstance(col.baselines[TARGET], GreedyBatch)


def test_sampled_edge_agrees_with_the_exact_one():
    """On the smallest config, greedy's edge over random measured on duplicate deals (the learned
    best response's measure) lies within 4 standard errors of the tree walk's exact value."""
    name, config = SMALL
    exact = exploit.response_gains(name, config, "greedy", "random")
    game = make_game(name, **config)
    e = (best_response.per_deal_returns(game, "greedy", "random", 3000, 7)
         - best_response.per_deal_returns(game, "random", "random", 3000, 7))
    se = e.std(ddof=1) / np.sqrt(e.size)
    assert abs(e.mean() - exact["edge"]) < 4 * se
    assert exact["edge"] > 0.05  # greedy beats random there: the test can tell a sign error


def test_response_gains_are_zero_for_the_target_and_at_most_the_best_responses():
    name, config = SMALL
    same = exploit.response_gains(name, config, "heuristic", "heuristic")
    assert same["gains"] == pytest.approx([0.0, 0.0], abs=1e-12) and same["recovered"] == pytest.approx(0.0, abs=1e-12)
    other = exploit.response_gains(name, config, "greedy", "random")
    assert all(g <= b + 1e-9 for g, b in zip(other["gains"], other["best_gains"]))
    assert other["exploitability"] == pytest.approx(exploit.exact("random", name, config)["exploitability"])


@pytest.mark.parametrize("name,config", [SMALL, ("block_v0", {"max_pip": 2, "hand_size": 2})], ids=["draw", "block"])
def test_response_gains_seat_by_seat_against_openspiel(name, config):
    """Independently of the project's tree walk: each seat's gain is OpenSpiel's expected value of
    that seat with the response there and the target in the other seat, less the target against
    itself (expected_game_score.policy_value); the best gains are OpenSpiel's player_improvements.
    Block's seats are unlike, so a gain counted with the other seat's sign shows."""
    from open_spiel.python.algorithms import expected_game_score, exploitability

    spiel_game, _ = exploit.game_and_tree(name, config)
    out = exploit.response_gains(name, config, "greedy", "random")
    response, target = (exploit.agent_policy(spiel_game, s) for s in ("greedy", "random"))
    root = spiel_game.new_initial_state()
    base = expected_game_score.policy_value(root, [target, target])
    gains = [expected_game_score.policy_value(root, [response, target])[0] - base[0],
             expected_game_score.policy_value(root, [target, response])[1] - base[1]]
    assert out["gains"] == pytest.approx(gains, abs=1e-9)
    best = exploitability.nash_conv(spiel_game, target, return_only_nash_conv=False).player_improvements
    assert out["best_gains"] == pytest.approx(list(best), abs=1e-9)
    assert out["edge"] == pytest.approx(sum(gains) / 2, abs=1e-9)


def test_a_tiny_best_response_runs_resumes_and_says_lower_bound(tmp_path, monkeypatch):
    name, config = SMALL
    settings = best_response.BRSettings(steps=4096, seeds=2, marks=2, deals=40, curve_deals=20, imitation=1024,
                                        warm_start=True, params={**TINY, "imitation.epochs": 1})
    res = best_response.train("heuristic", name, config, settings, tmp_path, log=lambda *a, **k: None)
    assert res["learner"] == "ppo_bc" and res["final"]["seeds"] == 2
    assert [c["mark"] for c in res["curve"]] == [2048, 4096]
    assert {p["deals"] for p in res["points"]} == {20, 40}
    assert res["final"]["lo"] <= res["final"]["edge"] <= res["final"]["hi"]
    text = best_response.describe(res)
    assert "a lower bound" in text and "seed 1: edge" in text
    # a second call trains and evaluates nothing: the folder holds every point
    monkeypatch.setattr(best_response, "per_deal_returns", lambda *a: pytest.fail("evaluated again"))
    again = best_response.train("heuristic", name, config, settings, tmp_path, log=lambda *a, **k: None)
    assert again == res
    # another run in the same folder is refused
    with pytest.raises(ConfigError, match="another best-response run"):
        best_response.train("greedy", name, config, settings, tmp_path, log=lambda *a, **k: None)


def test_responses_train_from_scratch_with_the_games_reward_unless_warm_started():
    learner, params = best_response.learner_and_params("heuristic", *SMALL, best_response.BRSettings())
    assert learner == "ppo" and "imitation.teacher" not in params and "network.init_actor" not in params
    assert params["ppo.reward"] == "score" and params["opponents.target"] == 1.0 and params["ppo.score_scale"] > 0
    warm = best_response.BRSettings(warm_start=True)
    assert best_response.learner_and_params("random", *SMALL, warm)[0] == "ppo"  # nothing to copy
    learner, params = best_response.learner_and_params("heuristic", *SMALL, warm)
    assert learner == "ppo_bc" and params["imitation.teacher"] == "heuristic"
    learner, params = best_response.learner_and_params("trained", "draw_v0", {}, warm)
    assert learner == "ppo" and params["network.init_actor"].endswith("draw_v0.npz")
    assert params["network.hidden"] == load_policy(params["network.init_actor"])[1]["hidden"]


def test_a_run_can_start_from_a_policy_files_actor(tmp_path):
    from domino_training.configs import RunConfig
    from domino_training.learners.ppo import Trainer

    game = make_game("draw_v0")
    path = random_policy_file(tmp_path, game)
    train = TrainConfig()
    for k, v in {**TINY, "network.hidden": [8], "network.init_actor": str(path)}.items():
        set_key(train, k, v)
    trainer = Trainer(RunConfig("draw_v0", {}, train), tmp_path / "run")
    for (w, b), (w0, b0) in zip(trainer.model.actor_layers(), load_policy(path)[0]):
        assert np.array_equal(w, w0) and np.array_equal(b, b0)
    set_key(train, "network.hidden", [16])
    with pytest.raises(ConfigError, match="set network.hidden to the file's widths"):
        Trainer(RunConfig("draw_v0", {}, train), tmp_path / "other")


@pytest.mark.parametrize("settings,message", [
    ({"seeds": 0}, "seeds=0"), ({"steps": 100}, "too small"), ({"deals": True}, "deals=True")])
def test_bad_settings_are_refused(settings, message):
    with pytest.raises(ConfigError, match=message):
        best_response.BRSettings(**settings).check()


def test_cli_needs_exactly_one_of_spec_and_exact(capsys):
    from domino_training.cli import main

    for argv in (["exploit", "--game", "draw_v0"], ["exploit", "random", "--exact", "random", "--game", "draw_v0"]):
        with pytest.raises(SystemExit):
            main(argv)
        assert "give either SPEC" in capsys.readouterr().err


def test_cli_learned_best_response(tmp_path, capsys):
    from domino_training.cli import main

    argv = ["exploit", "random", "--game", "draw_v0", "--set", "max_pip=2", "--set", "hand_size=2", "--steps", "4096",
            "--seeds", "1", "--marks", "1", "--deals", "20", "--out", str(tmp_path), "--no-progress"]
    argv += [f"--param={k}={json.dumps(v) if isinstance(v, list) else v}" for k, v in TINY.items()]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "learned best response to 'random'" in out and "a lower bound" in out
    assert json.loads((tmp_path / "result.json").read_text())["final"]["seeds"] == 1


def test_result_pairs_each_deal_with_the_targets_own_return():
    """The edge is per deal the response's return minus the target's self-play return on that deal:
    a response that does exactly as well as the target deal by deal has edge 0, with no spread."""
    settings = best_response.BRSettings(steps=4096, seeds=2, marks=1, deals=4, curve_deals=4)
    base = [3.0, -5.0, 1.0, 9.0]
    edges = {"run": {"target": "t", "game": "draw_v0", "config": {}, "settings": vars(settings), "learner": "ppo",
                     "params": {"ppo.score_scale": 0.1}},
             "self_play": {"4": base},
             "points": {f"{s}/4096": {"seed": s, "mark": 4096, "env_steps": 4096, "seconds": 6.0, "spec": f"p{s}",
                                      "deals": 4, "returns": [b + s for b in base]} for s in (0, 1)}}
    res = best_response.result(edges)
    assert [p["edge"] for p in res["points"]] == [0.0, 1.0]
    assert res["points"][0]["lo"] == res["points"][0]["hi"] == 0.0
    assert res["final"]["edge"] == 0.5 and res["final"]["best_seed"] == 1 and res["final"]["best_edge"] == 1.0
    assert 0.0 <= res["final"]["lo"] <= 0.5 <= res["final"]["hi"] <= 1.0
    assert res["self_play_return"] == 2.0


def test_observation_response_improves_on_its_start_and_stays_below_the_best_response():
    name, config = SMALL
    start = exploit.response_gains(name, config, "greedy", "heuristic")
    found = exploit.observation_response(name, config, "heuristic", "greedy")
    assert found["best_gains"] == pytest.approx(start["best_gains"])
    for g, g0, b in zip(found["gains"], start["gains"], found["best_gains"]):
        assert g0 - 1e-9 <= g <= b + 1e-9
    assert found["edge"] > start["edge"]  # greedy is no best response to the heuristic: there is something to find


def test_the_report_gathers_finished_runs_and_leaves_out_other_settings(tmp_path, monkeypatch):
    """`exploit_pages.learned` on one tiny small-config item: trained, checked exactly, written to the page
    (with the words "a lower bound"); a folder run with other settings is left out."""
    import shutil

    curves = tmp_path / "curves"
    curves.mkdir()
    shutil.copy(exploit_pages.CURVES / "results.json", curves / "results.json")
    for name, value in {"RUNS": tmp_path / "runs", "CURVES": curves, "LEARNED": curves / "learned.json",
                        "REPORT": tmp_path / "exploitability.md"}.items():
        monkeypatch.setattr(exploit_pages, name, value)
    stem = "draw_d2"
    env, cfg = exploit_pages.small_configs()[stem]
    tiny = best_response.BRSettings(steps=4096, seeds=2, marks=1, deals=30, curve_deals=30, params=TINY)
    monkeypatch.setattr(exploit_pages, "learned_items", lambda: [(stem, env, cfg, "random", tiny)])
    page = exploit_pages.learned(log=lambda *a, **k: None).read_text()
    rows = json.loads((curves / "learned.json").read_text())
    assert len(rows) == 1 and len(rows[0]["exact"]) == 2 and "observation_response" in rows[0]
    assert "### Checked on the small configs" in page and "a lower" in page and "| draw_d2 | random |" in page
    assert (curves / "learned.png").stat().st_size > 1000
    other = best_response.BRSettings(steps=4096, seeds=2, marks=1, deals=20, curve_deals=20, params=TINY)
    monkeypatch.setattr(exploit_pages, "learned_items", lambda: [(stem, env, cfg, "random", other)])
    said = []
    exploit_pages.learned(train=False, log=lambda *a, **k: said.append(a[0]))
    assert json.loads((curves / "learned.json").read_text()) == [] and "other settings" in said[0]


def test_seeds_in_two_workers_write_the_serial_runs_files(tmp_path, capsys):
    """`--workers 2` trains and evaluates the seeds in two processes; edges.json, result.json and the
    printed lines are the serial run's (less the wall-clock seconds and the folder in the specs). A bad
    --workers is exit status 2 before anything is written; a seed that fails in its worker is one line
    naming it, exit status 2."""
    import re

    from domino_training.cli import main
    from tests.learners.test_parallel import error_lines

    argv = ["exploit", "random", "--game", "draw_v0", "--set", "max_pip=2", "--set", "hand_size=2", "--steps", "4096",
            "--seeds", "2", "--marks", "2", "--deals", "20", "--curve-deals", "10", "--no-progress"]
    argv += [f"--param={k}={json.dumps(v) if isinstance(v, list) else v}" for k, v in TINY.items()]
    for bad in ("0", "-1", "two"):
        with pytest.raises(SystemExit) as e:
            main([*argv, "--out", str(tmp_path / "bad"), "--workers", bad])
        assert e.value.code == 2 and f"--workers: {'invalid int value' if bad == 'two' else f'workers={bad}'}" in \
            capsys.readouterr().err
    assert not (tmp_path / "bad").exists()

    def run(workers: int) -> list[str]:
        out = tmp_path / f"w{workers}"
        assert main([*argv, "--out", str(out), "--workers", str(workers)]) == 0
        texts = [(out / name).read_text() for name in ("edges.json", "result.json")] + [capsys.readouterr().out]
        return [re.sub(r'"(seconds|minutes)": [-0-9.e]+', r'"\1": 0', t.replace(str(out), "OUT")) for t in texts]

    serial, parallel = run(1), run(2)
    assert '"seed": 1' in serial[0] and "seed 1 at 2,048 steps" in serial[2]
    assert parallel == serial
    assert main([*argv, "--out", str(tmp_path / "fails"), "--workers", "2", "--param", "ppo.nope=1"]) == 2
    lines = error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and re.match(r"domino exploit: error: the best response of seed \d \(draw_v0 vs random\) "
                                        r"failed in its worker: ConfigError: ppo learner: unknown param 'ppo.nope'; "
                                        r"allowed: ", lines[0]), lines
