"""Search distillation (training/learners/distill.py): the teacher's targets, the fit moving the actor toward
them, and a run that resumes between rounds exactly as an uninterrupted one runs."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from domino_envs import make_game
from domino_envs.errors import ConfigError
from domino_training.learners import distill
from domino_training.learners.ppo import Trainer
from domino_training.learners.run_folder import Eval
from domino_training.learners.train import load, load_settings, train

TINY = ["network.hidden=[16]", "ppo.num_envs=8", "ppo.rollout_steps=8", "ppo.minibatch_size=64", "imitation.decisions=0",
        "eval.every_updates=0", "eval.final_deals=0", "budget.env_steps=64", "budget.checkpoint_every=1",
        "ppo.torch_threads=1"]
DISTILL = ["distill.rounds=2", "distill.positions=24", "distill.epochs=2", "distill.teacher=pimc:n=2,rollout=random"]


def _run(extra=()):
    """A Trainer's settings."""
    return load_settings(game="draw_v0", overrides=TINY + DISTILL + list(extra))


def _game_run(extra=()):
    """What `domino train` trains."""
    return load(game="draw_v0", overrides=TINY + DISTILL + list(extra))


def test_teacher_targets_are_the_searchs_best_actions_or_its_softmax():
    from domino_agents.pimc import PIMCAgent
    from tests.agents.test_pimc import _lead_position

    game, state, good, bad = _lead_position()
    mask = game.legal_mask(state)
    t = distill.teacher_targets(PIMCAgent(game, seed=3, n=32), game, state, 0, np.zeros(2), mask, 0.0)
    assert t[good] == 1.0 and t.sum() == 1.0
    soft = distill.teacher_targets(PIMCAgent(game, seed=3, n=32), game, state, 0, np.zeros(2), mask, 0.05)
    assert soft[good] > soft[bad] > 0 and np.isclose(soft.sum(), 1.0) and soft[mask == 0].sum() == 0
    greedy = distill.teacher_targets(__import__("domino_agents").GreedyAgent(game), game, state, 0, np.zeros(2), mask,
                                     0.0)
    assert greedy.sum() == 1.0 and mask[int(np.argmax(greedy))] == 1


def test_gather_labels_only_real_decisions_of_the_students_games():
    game = make_game("draw_v0")
    from domino_agents.greedy import GreedyAgent

    layers = [(np.zeros((game.num_actions, game.obs_size), np.float32), np.zeros(game.num_actions, np.float32))]
    obs, masks, targets = distill.gather(game, layers, GreedyAgent(game), 50, np.random.default_rng(0), 0.0, 0.0)
    assert obs.shape == (50, game.obs_size) and masks.shape == targets.shape == (50, game.num_actions)
    assert (masks.sum(1) >= 2).all()  # forced moves are not labelled
    assert np.allclose(targets.sum(1), 1) and not (targets[~masks] > 0).any()


def test_fit_moves_the_actor_to_the_targets():
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(256, 6)).astype(np.float32)
    masks = np.ones((256, 3), bool)
    targets = np.eye(3, dtype=np.float32)[(obs[:, 0] > 0).astype(int)]
    actor = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    before = distill.fit(actor, obs, masks, targets, 1, 1e-3, np.random.default_rng(1))
    after = distill.fit(actor, obs, masks, targets, 40, 1e-2, np.random.default_rng(1))
    assert after["distill_loss"] < before["distill_loss"] and after["distill_agreement"] > 0.9


def test_distillation_resumes_between_rounds_exactly(tmp_path):
    straight = tmp_path / "straight"
    train(_game_run(), straight, echo=lambda *a, **k: None)
    # the same run stopped after its first round, then resumed
    stopped = tmp_path / "stopped"
    trainer = Trainer(_run(["distill.rounds=1"]), stopped)
    distill.run_rounds(trainer, 0, 1, echo=lambda *a, **k: None)
    assert torch.load(trainer.checkpoint_path, weights_only=False)["extra"] == {"distill_rounds": 1}
    train(_game_run(), stopped, resume=True, echo=lambda *a, **k: None)
    a, b = (np.load(d / "policy.npz") for d in (straight, stopped))
    assert all(np.array_equal(a[k], b[k]) for k in a.files if k != "meta")
    with np.load(straight / distill.DATA_FILE) as z:
        assert z["obs"].shape[0] == 48  # two rounds of 24 positions
    # a run resumed after PPO has begun does not distill again (points.json gone: the learner runs from
    # its last checkpoint and saves its marks again)
    (straight / "points.json").unlink()
    train(_game_run(), straight, resume=True, echo=lambda *a, **k: None)
    with np.load(straight / distill.DATA_FILE) as z:
        assert z["obs"].shape[0] == 48


def test_distill_settings_are_checked(tmp_path):
    with pytest.raises(ConfigError, match="distill.positions"):
        _run(["distill.positions=0"])
    with pytest.raises(ConfigError, match="distill.teacher_moves"):
        _run(["distill.teacher_moves=1.5"])
    with pytest.raises(ConfigError, match="distill.teacher_deals"):
        _run(["distill.teacher_deals=-1"])
    with pytest.raises(ConfigError, match="distill.teacher_opponent"):
        _run(["distill.teacher_opponent=:n=2"])
    with pytest.raises(ConfigError, match=r"sb3 learner: unknown param 'distill.rounds'"):  # the ppo learners' only
        load_settings(game="draw_v0", learner="sb3", overrides=["distill.rounds=2"])
    with pytest.raises(ConfigError, match="distill.teacher"):
        train(_game_run(["distill.teacher=pimc:n=zero"]), tmp_path / "run", echo=lambda *a, **k: None)


ALTERNATE = ["distill.rounds=1", "distill.every_updates=2", "budget.env_steps=256"]  # rounds before updates 1, 3, 5


def test_rounds_alternate_with_ppo_and_resume_exactly_after_an_interruption(tmp_path, monkeypatch):
    quiet = lambda *a, **k: None  # noqa: E731
    straight = tmp_path / "straight"
    train(_game_run(ALTERNATE), straight, echo=quiet)
    rows = (straight / "distill.csv").read_text().splitlines()[1:]
    assert [r.split(",")[:2] for r in rows] == [["1", "0"], ["2", "2"], ["3", "4"]]  # (round, after update)
    with np.load(straight / distill.DATA_FILE) as z:
        assert z["round"].tolist() == [0] * 24 + [1] * 24 + [2] * 24
    # stopped when the round due after update 2 starts: its checkpoint records update 2 and one round
    stopped = tmp_path / "stopped"
    real = distill.run_round

    def interrupted(trainer, r, echo=print):
        if r == 1:
            raise KeyboardInterrupt
        return real(trainer, r, echo)

    monkeypatch.setattr(distill, "run_round", interrupted)
    with pytest.raises(KeyboardInterrupt):
        train(_game_run(ALTERNATE), stopped, echo=quiet)
    data = torch.load(stopped / "checkpoint.pt", weights_only=False)
    assert (data["update"], data["extra"]) == (2, {"distill_rounds": 1})
    monkeypatch.setattr(distill, "run_round", real)
    train(_game_run(ALTERNATE), stopped, resume=True, echo=quiet)
    a, b = (np.load(d / "policy.npz") for d in (straight, stopped))
    assert all(np.array_equal(a[k], b[k]) for k in a.files if k != "meta")
    again = (stopped / "distill.csv").read_text().splitlines()[1:]
    assert [r.rsplit(",", 1)[0] for r in again] == [r.rsplit(",", 1)[0] for r in rows]  # all but the seconds


def test_a_window_still_logs_each_rounds_own_positions(tmp_path):
    """distill.csv counts each round's gathered positions, whatever the window; which positions a round
    fits is test_a_window_fits_exactly_the_positions_of_the_last_rounds's (mutation distill_window_first_rounds)."""
    train(_game_run(ALTERNATE + ["distill.window=1"]), tmp_path / "run", echo=lambda *a, **k: None)
    rows = (tmp_path / "run" / "distill.csv").read_text().splitlines()
    col = rows[0].split(",").index("positions")
    assert [int(r.split(",")[col]) for r in rows[1:]] == [24, 24, 24]


def test_a_policy_current_teacher_searches_with_the_actor_as_it_is(tmp_path):
    from domino_agents.trained import load_policy

    trainer = Trainer(_run(["distill.teacher=pimc:n=2,rollout=policy,policy=current"]), tmp_path)
    teacher = distill.make_teacher(trainer, distill.teacher_spec(trainer), seed=0)
    assert teacher.policy == str(tmp_path / distill.TEACHER_FILE)
    layers, _ = load_policy(teacher.policy)
    assert all(np.array_equal(w, v) and np.array_equal(b, c)
               for (w, b), (v, c) in zip(layers, trainer.model.actor_layers()))


def test_each_round_measures_its_teachers_strength_on_the_same_deals(tmp_path):
    from domino_training.evaluate import evaluate

    strength = ["distill.teacher=pimc:n=2,rollout=policy,policy=current", "distill.teacher_deals=6",
                "distill.teacher_opponent=greedy"]
    train(_game_run(strength), tmp_path / "run", echo=lambda *a, **k: None)
    rows = distill_rows(tmp_path / "run")
    assert len(rows) == 2 and all(0 <= float(r["teacher_lo"]) <= float(r["teacher_win"]) <= float(r["teacher_hi"])
                                  for r in rows)
    # the last round's teacher (its actor file is the last one written) replayed on eval.seed's deals
    spec = f"pimc:n=2,rollout=policy,policy={tmp_path / 'run' / distill.TEACHER_FILE}"
    report = evaluate("draw_v0", [spec, "greedy"], 6, Eval().seed, pairs=[(spec, "greedy")], progress=False)
    assert float(rows[1]["teacher_win"]) == report.matchups[(spec, "greedy")].win_stat.mean
    train(_game_run(), tmp_path / "off", echo=lambda *a, **k: None)
    assert "teacher_win" not in distill_rows(tmp_path / "off")[0]


def distill_rows(run_dir):
    import csv

    with (run_dir / "distill.csv").open() as fh:
        return list(csv.DictReader(fh))


# ------------------------------------------------------------------------------ settings that must change behaviour
class ValuesTeacher:
    """A searching teacher whose action values are given: win share `values[a]` for each legal action."""

    searches = True

    def __init__(self, values):
        self.values = np.asarray(values, np.float64)
        self.seen = []

    def observe_state(self, state, seat, returns):
        self.seen.append(seat)

    def action_values(self, mask):
        legal = np.flatnonzero(mask)
        return legal, (self.values[legal], np.zeros(legal.size))


@pytest.mark.parametrize("temperature", [1.0, 0.1, 100.0])
def test_softmax_targets_divide_the_win_shares_by_the_temperature(temperature):
    """Against scipy's softmax of win / temperature over the legal actions: at 1 and 0.1 the targets
    differ, at 100 they are nearly uniform (multiplying by the temperature would make them sharpest)."""
    from scipy.special import softmax

    game = make_game("draw_v0")
    state = game.new_state()
    game.reset(state, 3)
    mask = np.zeros(game.num_actions, np.int8)
    mask[[2, 5, 9, 11]] = 1
    values = np.zeros(game.num_actions)
    values[[2, 5, 9, 11]] = [0.9, 0.5, 0.2, 0.5]
    t = distill.teacher_targets(ValuesTeacher(values), game, state, 0, np.zeros(2), mask, temperature)
    expected = softmax(values[[2, 5, 9, 11]] / temperature)
    np.testing.assert_allclose(t[[2, 5, 9, 11]], expected, rtol=1e-5)
    assert t.sum() == pytest.approx(1.0) and not t[mask == 0].any()
    if temperature == 100.0:
        assert t[[2, 5, 9, 11]].max() - t[[2, 5, 9, 11]].min() < 0.01
    best = distill.teacher_targets(ValuesTeacher(values), game, state, 0, np.zeros(2), mask, 0.0)
    assert best[[2, 5, 9, 11]].tolist() == [1.0, 0.0, 0.0, 0.0]
    values[5] = 0.9  # a tie at the top splits the target
    best = distill.teacher_targets(ValuesTeacher(values), game, state, 0, np.zeros(2), mask, 0.0)
    assert best[[2, 5, 9, 11]].tolist() == [0.5, 0.5, 0.0, 0.0]


class LowestLegal:
    """A searching teacher that plays the lowest legal action; it records the seat it is told it plays."""

    searches = True

    def __init__(self, game):
        self.game, self.told, self.acting = game, [], []

    def observe_state(self, state, seat, returns):
        self.told.append(seat)
        self.acting.append(self.game.current_seat(state))

    def act(self, obs, mask):
        return int(np.flatnonzero(mask)[0])


class RecordingGame:
    """The engine, with every step recorded: (legal mask, action, the acting seat's observation)."""

    def __init__(self, game):
        self._game, self.steps = game, []

    def __getattr__(self, name):
        return getattr(self._game, name)

    def step(self, state, action):
        g = self._game
        self.steps.append((g.legal_mask(state).copy(), int(action), g.observe(state, g.current_seat(state)).copy()))
        return g.step(state, action)


def _gather_with(teacher_moves: float, positions: int = 200):
    """gather with a teacher playing the lowest legal action and a student (its logits 100 apart)
    the highest: who played each real decision, the recorded steps, and what gather returned."""
    engine = make_game("draw_v0")
    game = RecordingGame(engine)
    teacher = LowestLegal(engine)
    bias = 100.0 * np.arange(engine.num_actions, dtype=np.float32)
    layers = [(np.zeros((engine.num_actions, engine.obs_size), np.float32), bias)]
    obs, masks, targets = distill.gather(game, layers, teacher, positions, np.random.default_rng(4), teacher_moves, 0.0)
    real = [(m, a, o) for m, a, o in game.steps if m.sum() >= 2]
    by = ["teacher" if a == np.flatnonzero(m)[0] else "student" if a == np.flatnonzero(m)[-1] else "?"
          for m, a, _ in real]
    return by, real, obs, masks, targets, teacher


def test_teacher_moves_zero_plays_the_students_moves_and_one_the_teachers():
    by, real, obs, masks, targets, teacher = _gather_with(0.0)
    assert set(by) == {"student"}
    by, real, obs, masks, targets, teacher = _gather_with(1.0)
    assert set(by) == {"teacher"}
    by, real, *_ = _gather_with(0.5)
    share = by.count("teacher") / len(by)
    assert set(by) == {"teacher", "student"} and abs(share - 0.5) < 4 * np.sqrt(0.25 / len(by)), share


def test_gathered_positions_are_the_acting_seats_and_the_teacher_is_told_that_seat():
    """Each labelled position is the observation of the seat to act, in the order reached; the
    teacher searches for that seat; its target is its own move there."""
    by, real, obs, masks, targets, teacher = _gather_with(0.5, positions=120)
    assert len(obs) == 120 and len(real) >= 120
    for k in range(120):
        m, _, o = real[k]
        assert np.array_equal(obs[k], o) and np.array_equal(masks[k], m != 0)
        assert targets[k, np.flatnonzero(m)[0]] == 1.0
    assert teacher.told == teacher.acting[:len(teacher.told)] and len(set(teacher.told)) == 2


def test_a_window_fits_exactly_the_positions_of_the_last_rounds(tmp_path, monkeypatch):
    """distill.window=2 over 4 rounds: round r's fit gets the positions of rounds r-1 and r as saved in
    distill.npz, in order (not the first rounds'); window=0 fits every round's."""
    fitted = []
    real_fit = distill.fit

    def spy(actor, obs, masks, targets, *args, **kwargs):
        fitted.append(obs.copy())
        return real_fit(actor, obs, masks, targets, *args, **kwargs)

    monkeypatch.setattr(distill, "fit", spy)
    for window, folder in ((2, "w2"), (0, "all")):
        fitted.clear()
        trainer = Trainer(_run(["distill.rounds=4", f"distill.window={window}", "distill.teacher=greedy",
                                "distill.positions=16", "distill.epochs=1"]), tmp_path / folder)
        distill.run_rounds(trainer, 0, 4, echo=lambda *a, **k: None)
        with np.load(tmp_path / folder / distill.DATA_FILE) as z:
            saved, rounds = z["obs"], z["round"]
        assert rounds.tolist() == [0] * 16 + [1] * 16 + [2] * 16 + [3] * 16
        for r, obs in enumerate(fitted):
            first = max(0, r - window + 1) if window else 0
            np.testing.assert_array_equal(obs, saved[(rounds >= first) & (rounds <= r)])
