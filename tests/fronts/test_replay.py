"""Replays (domino_envs/replay.py): every game's deal read back with `deal_of`, games recorded with
baselines saved and loaded and stepped into identical observations and results, tampered replays
refused with a ReplayError naming the first step that no longer matches, `domino replay`, and
`evaluate(..., replay_path=...)`."""
from __future__ import annotations

import json

import numpy as np
import pytest

import domino_envs
from domino_agents.registry import make_agent
from domino_envs import ReplayError, make_game
from domino_envs.core import H_DONE, H_HAND, H_TURN
from domino_envs.replay import Recorder, Replay, load, save
from domino_envs.rng import mix_seed
from domino_training.tools.replay_view import main as replay_main
from tests.env_cases import CONFIGS, config_id

# one config of each env, and match modes (several hands per episode)
ROUND_TRIP = [
    ("draw_v0", {}), ("block_v0", {}), ("seven_toed_pete_v0", {}), ("racehorse_v0", {"num_players": 3}),
    ("sum7_v0", {}), ("magic7_v0", {}),
    ("draw_v0", {"match": True, "target": 60}), ("seven_toed_pete_v0", {"match": True, "chips_to_win": 2}),
    ("magic7_v0", {"num_players": 3, "num_games": 2}),
]


def same_decision(game, a, b) -> bool:
    """Same seat to act, same mask, same observation for every seat."""
    return (a[H_TURN] == b[H_TURN] and np.array_equal(game.legal_mask(a), game.legal_mask(b))
            and all(np.array_equal(game.observe(a, k), game.observe(b, k)) for k in range(game.num_players)))


@pytest.mark.parametrize("name,config", CONFIGS, ids=[config_id(n, c) for n, c in CONFIGS])
def test_deal_of_gives_back_the_first_decision(name, config):
    """reset(row, seed), deal_of(row), set_deal on a fresh row -> the same first decision (every
    seat's observation, the mask, the seat to act), through JSON as a replay stores it."""
    game = make_game(name, **config)
    checked = 0
    for seed in range(12):
        row = game.new_state()
        game.reset(row, mix_seed(5, seed))
        if row[H_DONE] or row[H_HAND]:  # no decision in hand 1: nothing to compare
            continue
        deal = json.loads(json.dumps(game.deal_of(row)))
        fresh = game.new_state()
        game.set_deal(fresh, deal)
        assert same_decision(game, row, fresh), (name, config, seed, deal)
        checked += 1
    assert checked >= 8


def play_recorded(game, seed: int, specs: list[str]):
    """Play one seeded episode with agents `specs`; (replay, per-position observations of every
    seat, returns)."""
    n = game.num_players
    agents = [make_agent(specs[k], game, seed=seed + k) for k in range(n)]
    row = game.new_state()
    game.reset(row, seed)
    rec = Recorder(game, agents=specs)
    rec.start(row, seed)
    seen = [[game.observe(row, k).copy() for k in range(n)]]
    totals = game.rewards(row).astype(np.float64)
    while not row[H_DONE]:
        seat = int(row[H_TURN])
        action = int(agents[seat].act(game.observe(row, seat), game.legal_mask(row)))
        game.step(row, action)
        rec.step(seat, action, row)
        totals += game.rewards(row)
        seen.append([game.observe(row, k).copy() for k in range(n)])
    return rec.finish(row), seen, totals.tolist()


@pytest.mark.parametrize("name,config", ROUND_TRIP, ids=[config_id(n, c) for n, c in ROUND_TRIP])
def test_replay_round_trip(tmp_path, name, config):
    """Games played with baselines, saved, loaded and stepped: identical observations for every
    seat at every position and identical results; verify() passes."""
    game = make_game(name, **config)
    path = tmp_path / "games.jsonl"
    played = [play_recorded(game, 100 + i, ["greedy" if k % 2 else "random" for k in range(game.num_players)])
              for i in range(3)]
    save(path, [p[0] for p in played])
    loaded = load(path)
    assert len(loaded) == 3
    for rep, (_, seen, totals) in zip(loaded, played):
        assert rep.game == name and rep.config == json.loads(json.dumps(rep.make_game().config.__dict__))
        positions = list(rep.positions())
        assert len(positions) == len(seen) == len(rep.steps) + 1
        for row, obs in zip(positions, seen):
            for k in range(game.num_players):
                assert np.array_equal(game.observe(row, k), obs[k])
        assert positions[-1][H_DONE] == 1
        assert rep.returns == pytest.approx(totals, abs=1e-9)
        final = rep.verify()
        assert np.array_equal(final, positions[-1])
    if game.config.__dict__.get("match") or game.config.__dict__.get("num_games", 1) > 1:
        assert any(rep.hands for rep in loaded), "match mode records the deal of every later hand"


def test_hand_set_deal_replays(tmp_path):
    """A game started from a hand-set deal (dealt: "deal") replays from that deal."""
    game = make_game("draw_v0")
    deal = {"hands": [[[6, 6], [5, 5], [1, 2]], [[0, 0], [0, 1], [3, 4]]], "stock": [[2, 2], [4, 4]], "first": 1}
    row = game.new_state()
    game.reset(row, 9)
    game.set_deal(row, deal)
    rec = Recorder(game, agents=["greedy", "greedy"])
    rec.start(row, 9, deal=deal)
    agent = make_agent("greedy", game)
    while not row[H_DONE]:
        seat = int(row[H_TURN])
        a = agent.act(game.observe(row, seat), game.legal_mask(row))
        game.step(row, a)
        rec.step(seat, a, row)
    rep = rec.finish(row)
    save(tmp_path / "d.jsonl", [rep])
    (back,) = load(tmp_path / "d.jsonl")
    assert back.dealt == "deal" and back.deal == deal
    assert np.array_equal(back.verify(), row)
    bad = json.loads(back.to_line())
    bad["deal"]["hands"][0][0], bad["deal"]["hands"][1][0] = [0, 0], [6, 6]  # swap two tiles
    with pytest.raises(ReplayError, match=r"step \d+"):
        Replay.from_json(bad).verify()


# ------------------------------------------------------------------------------ tampering
@pytest.fixture(scope="module")
def recorded():
    game = make_game("draw_v0")
    rep, _, _ = play_recorded(game, 7, ["greedy", "random"])
    assert len(rep.steps) >= 4
    return rep.to_json()


def tampered(obj, edit) -> Replay:
    obj = json.loads(json.dumps(obj))
    edit(obj)
    return Replay.from_json(obj, "games.jsonl line 1")


def test_untampered_verifies(recorded):
    Replay.from_json(recorded).verify()


def test_edited_action_names_its_step(recorded):
    game = make_game("draw_v0")
    rows = list(Replay.from_json(recorded).positions())
    i = 2
    legal = game.legal_actions(rows[i])
    illegal = next(a for a in range(game.num_actions) if a not in legal)

    def edit(o):
        o["steps"][i]["action"] = illegal
    with pytest.raises(ReplayError, match=rf"line 1 \(draw_v0\): step {i}: recorded action {illegal} .* is illegal"):
        tampered(recorded, edit).verify()


def test_edited_action_to_another_legal_move_fails(recorded):
    game = make_game("draw_v0")
    rows = list(Replay.from_json(recorded).positions())
    i = next(k for k in range(len(rows) - 1) if len(game.legal_actions(rows[k])) > 1)
    other = next(a for a in game.legal_actions(rows[i]) if a != recorded["steps"][i]["action"])

    def edit(o):
        o["steps"][i]["action"] = other
    with pytest.raises(ReplayError, match=r"step \d+|returns"):
        tampered(recorded, edit).verify()


def test_edited_seat_names_its_step(recorded):
    def edit(o):
        o["steps"][1]["seat"] = 1 - o["steps"][1]["seat"]
    with pytest.raises(ReplayError, match=r"step 1: seat \d is to act, recorded seat \d"):
        tampered(recorded, edit).verify()


def test_edited_reward_names_its_step(recorded):
    last = len(recorded["steps"]) - 1

    def edit(o):
        o["steps"][last]["rewards"][0] += 1.0
    with pytest.raises(ReplayError, match=rf"step {last} \(seat \d, action \d+\): rewards expected"):
        tampered(recorded, edit).verify()


def test_a_reward_moved_between_two_steps_names_the_first(recorded):
    """The rewards of two later steps swapped (each seat's total kept, so the returns still add up):
    verification names the earlier of the two steps."""
    steps = recorded["steps"]
    j = max(k for k, st in enumerate(steps) if any(st["rewards"]))
    i = next(k for k in range(j - 1, 0, -1) if steps[k]["rewards"] != steps[j]["rewards"])

    def edit(o):
        o["steps"][i]["rewards"], o["steps"][j]["rewards"] = o["steps"][j]["rewards"], o["steps"][i]["rewards"]
    moved = tampered(recorded, edit)
    assert moved.computed_returns() == recorded["returns"]
    with pytest.raises(ReplayError, match=rf"step {i} \(seat \d, action \d+\): rewards expected"):
        moved.verify()


def test_edited_returns(recorded):
    def edit(o):
        o["returns"][1] += 3.0
    with pytest.raises(ReplayError, match="returns: the steps add up to"):
        tampered(recorded, edit).verify()


def test_edited_deal(recorded):
    def edit(o):
        h = o["deal"]["hands"]
        h[0][0], h[1][0] = h[1][0], h[0][0]
    with pytest.raises(ReplayError, match=r"deal: seed 7 deals"):
        tampered(recorded, edit).verify()


def test_changed_config(recorded):
    def edit(o):
        o["config"]["hand_size"] = 6
    with pytest.raises(ReplayError, match="deal: seed 7 deals"):
        tampered(recorded, edit).verify()

    def unknown(o):
        o["config"]["spinner"] = "none"
    with pytest.raises(ReplayError, match="do not build: .*unknown config key"):
        tampered(recorded, unknown).verify()

    def game(o):
        o["game"] = "draw_v9"
    with pytest.raises(ReplayError, match="do not build: unknown game 'draw_v9'"):
        tampered(recorded, game).verify()


def test_truncated_steps(recorded):
    n = len(recorded["steps"])

    def edit(o):
        del o["steps"][-2:]
    with pytest.raises(ReplayError, match=rf"step {n - 2}: the game goes on .*truncated"):
        tampered(recorded, edit).verify()


def test_extra_step_after_the_end(recorded):
    def edit(o):
        o["steps"].append(dict(o["steps"][-1]))
    with pytest.raises(ReplayError, match=rf"step {len(recorded['steps'])}: the game is over already"):
        tampered(recorded, edit).verify()


def test_other_version_replays_when_identical_and_is_named_when_not(recorded):
    def old(o):
        o["package"] = "0.0.1"
    tampered(recorded, old).verify()  # plays identically: not an error

    def old_and_edited(o):
        o["package"] = "0.0.1"
        o["steps"][1]["seat"] = 1 - o["steps"][1]["seat"]
    with pytest.raises(ReplayError, match=r"step 1: .*recorded with domino-envs 0\.0\.1, replayed with "):
        tampered(recorded, old_and_edited).verify()


def test_garbage_lines_name_line_and_key(tmp_path, recorded):
    good = json.dumps(recorded)
    path = tmp_path / "g.jsonl"
    path.write_text(good + "\n{not json\n")
    with pytest.raises(ReplayError, match=r"g\.jsonl line 2: not valid JSON"):
        load(path)
    for key in ("steps", "seed", "deal"):
        obj = dict(recorded)
        del obj[key]
        path.write_text("\n" + json.dumps(obj) + "\n")
        with pytest.raises(ReplayError, match=rf"line 2: key '{key}' is missing"):
            load(path)
    obj = json.loads(good)
    obj["steps"][3] = {"seat": 0, "action": "x", "rewards": [0, 0]}
    path.write_text(json.dumps(obj) + "\n")
    with pytest.raises(ReplayError, match=r"line 1: key 'steps' step 3: seat and action must be integers"):
        load(path)
    path.write_text("[1, 2]\n")
    with pytest.raises(ReplayError, match="line 1: a replay line is a JSON object"):
        load(path)
    obj = json.loads(good)
    obj["format"] = "domino-replay/0"
    path.write_text(json.dumps(obj) + "\n")
    with pytest.raises(ReplayError, match="line 1: key 'format'"):
        load(path)


def test_replay_error_is_a_domino_error():
    assert issubclass(ReplayError, domino_envs.DominoError)


# ------------------------------------------------------------------------------ domino replay
def test_domino_replay_prints_every_move(tmp_path, capsys, recorded):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(recorded) + "\n" + json.dumps(recorded) + "\n")
    from domino_training.cli import main as cli_main

    assert cli_main(["replay", str(path), "--index", "1"]) == 0
    out = capsys.readouterr().out
    for i, st in enumerate(recorded["steps"], 1):
        assert f"{i:>4}. seat {st['seat']}: {st['name']}" in out
    assert out.count("draw_v0  hand 1") == len(recorded["steps"]) + 1  # a table before each move and at the end
    assert f"result: returns {recorded['returns']}" in out
    assert "agents ['greedy', 'random']" in out

    assert replay_main([str(path), "--index", "0", "--seat", "1", "--moves-only"]) == 0
    out = capsys.readouterr().out
    assert "draw_v0  hand 1" in out.splitlines()[-2] or "seat 1 holds" in out  # the final table, seat 1's view
    assert out.count("seat 1 holds") == 1


def test_domino_replay_errors_are_one_line(tmp_path, capsys, recorded):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(recorded) + "\n")
    assert replay_main([str(path), "--index", "3"]) == 2
    err = capsys.readouterr().err
    assert "--index 3 is out of range" in err and len(err.strip().splitlines()) == 1
    bad = json.loads(json.dumps(recorded))
    bad["steps"][2]["seat"] = 1 - bad["steps"][2]["seat"]
    path.write_text(json.dumps(bad) + "\n")
    assert replay_main([str(path)]) == 2
    err = capsys.readouterr().err
    assert "step 2: seat" in err and len(err.strip().splitlines()) == 1
    assert replay_main([str(tmp_path / "missing.jsonl")]) == 2
    assert "No such file" in capsys.readouterr().err


# ------------------------------------------------------------------------------ evaluation
def test_evaluate_saves_replays_that_verify(tmp_path):
    from domino_training.evaluate import evaluate
    from domino_training.evaluate import main as evaluate_main

    path = tmp_path / "eval.jsonl"
    report = evaluate("sum7_v0", ["random", "greedy"], deals=2, seed=3, replay_path=str(path))
    reps = load(path)
    assert len(reps) == 2 * 2  # deals x seats (one matchup, read both ways with 2 players)
    for rep in reps:
        rep.verify()
        assert sorted(rep.agents) == ["greedy", "random"]
    m = report.matchups[("random", "greedy")]
    for d in range(2):  # the focal agent's mean return over its seats matches the replays'
        rs = [r for r in reps if r.extra["evaluation"]["deal"] == d]
        mean = np.mean([r.returns[r.extra["evaluation"]["focal_seat"]] for r in rs])
        assert mean == pytest.approx(m.reward[d])
    evaluate_main(["--game", "draw_v0", "--agents", "random", "greedy", "--deals", "1",
                   "--save-replays", str(path), "--no-progress"])
    reps = load(path)
    assert len(reps) == 4 + 2 and reps[-1].game == "draw_v0"
    for rep in reps[4:]:
        rep.verify()


def test_deal_of_after_forced_draws():
    """A setter without a special tile draws before the first decision (racehorse, 2 players): the
    drawn tiles are the stock's, not the hand's, in deal_of."""
    game = make_game("racehorse_v0")
    deal = {"hands": [[[0, 1], [0, 2], [0, 3], [0, 4], [0, 6], [1, 2], [1, 3]],
                      [[1, 5], [1, 6], [2, 4], [2, 5], [2, 6], [3, 4], [3, 5]]],
            "stock": [[3, 6], [4, 5], [6, 6], [5, 6], [0, 0], [1, 1]], "first": 0}
    row = game.new_state()
    game.set_deal(row, deal)
    assert not row[H_DONE] and game.hand(row, 0) != [tuple(t) for t in deal["hands"][0]]  # it drew
    back = json.loads(json.dumps(game.deal_of(row)))
    assert [sorted(h) for h in back["hands"]] == [sorted(h) for h in deal["hands"]]
    assert back["stock"] == deal["stock"] and back["first"] == 0
    fresh = game.new_state()
    game.set_deal(fresh, back)
    assert same_decision(game, row, fresh)


def test_recorder_used_out_of_order():
    game = make_game("draw_v0")
    row = game.new_state()
    game.reset(row, 1)
    rec = Recorder(game)
    with pytest.raises(domino_envs.DominoError, match=r"Recorder.step\(\) before Recorder.start"):
        rec.step(0, 0, row)
    rec.start(row, 1)
    with pytest.raises(domino_envs.DominoError, match="before the game is over"):
        rec.finish(row)
