"""Files from outside the process never crash a load or run code: a corrupted or crafted training
checkpoint (`domino train --resume`), policy file (`ppo:checkpoint=`, `trained`) or SB3 model zip
(`sb3:model=`) gives a CheckpointError naming what is wrong, and loading an SB3 zip unpickles nothing.
No load runs code planted in a pickle: not an agent's file (`mlp`/`ppo`, `dmc`, `sb3`, `rllib`,
`tabular`) nor a training checkpoint (ppo's, dmc's); each test checks that the plant is live.
"""
from __future__ import annotations

import base64
import gzip
import io
import json
import pickle
import re
import zipfile

import numpy as np
import pytest
import torch

import domino_envs
from domino_agents import trained
from domino_agents.registry import make_agent
from domino_agents.trained import load_policy, policy_meta, save_policy
from domino_envs.errors import CheckpointError
from domino_envs.games import draw
from domino_training.learners.ppo import Trainer
from domino_training.learners.train import load_settings
from domino_training.learners.train import main as train_main

# One worker runs the whole module (tests/conftest.py ONE_WORKER): its module-scoped checkpoint compiles draw's
# training kernels on a cold cache (about 90 s), and two workers starting on its cases both compiled them.
TINY = ["ppo.num_envs=8", "ppo.rollout_steps=8", "ppo.minibatch_size=32", "ppo.epochs=1", "network.hidden=[16]",
        "budget.env_steps=512", "budget.checkpoint_every=1", "imitation.decisions=0", "eval.every_updates=0",
        "eval.final_deals=0", "opponents.snapshot_every=1", "opponents.snapshot=0.5", "opponents.self_play=0.5",
        "opponents.random=0", "opponents.greedy=0", "opponents.heuristic=0"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A checkpoint after two updates (two snapshots in the pool) and its contents."""
    folder = tmp_path_factory.mktemp("run")
    t = Trainer(load_settings(game="draw_v0", overrides=TINY), folder)
    t.iterate()
    t.iterate()
    path = t.save_checkpoint()
    return path, torch.load(path, weights_only=True)


def _edit(data: dict, edit) -> dict:
    import copy

    data = copy.deepcopy(data)
    edit(data)
    return data


def _col(key, fn):
    def edit(d):
        d["collector"][key] = fn(d["collector"][key])
    return edit


def _state(fn):
    def edit(d):
        states = d["collector"]["states"].clone()
        fn(states)
        d["collector"]["states"] = states
    return edit


def _nan_first_weight(d):
    first = next(iter(d["model"]))
    d["model"][first] = d["model"][first].clone()
    d["model"][first].view(-1)[0] = float("nan")


def _bad_adam(d):
    state = d["optimizer"]["state"][0]
    state["exp_avg"] = torch.zeros(3)


def _bad_snapshot_shape(d):
    w, b = d["collector"]["snapshots"][0][0]
    d["collector"]["snapshots"][0][0] = (w[:, :5].clone(), b)


def _nan_snapshot(d):
    w, b = d["collector"]["snapshots"][0][0]
    w = w.clone()
    w[0, 0] = float("nan")
    d["collector"]["snapshots"][0][0] = (w, b)


CORRUPTIONS = {
    # name: (edit of the loaded dict, what the error says)
    "row with every tile in a hand": (_state(lambda s: s[0].__setitem__(draw.HANDS, (1 << 28) - 1)), "vector env row 0"),
    "row with a garbage turn": (_state(lambda s: s[3].__setitem__(0, 9)), "vector env row 3"),
    "finished row": (_state(lambda s: (s[1].__setitem__(0, -1), s[1].__setitem__(1, 1))), "vector env row 1"),
    "rows of the wrong shape": (_col("states", lambda t: t[:5]), "collector states is int64 of shape (5,"),
    "rows as floats": (_col("states", lambda t: t.double()), "collector states is float64"),
    "observation not the row's": (_col("obs", lambda t: t + 1), "not the row's own"),
    "seat not the row's": (_col("seats", lambda t: (t + 1) % 2), "is not the row's seat to act"),
    "NaN returns": (_col("returns", lambda t: t * float("nan")), "returns hold NaN"),
    "unknown controller code": (_col("ctrl", lambda t: t + 99), "controller codes"),
    "pool kind out of range": (_col("kind", lambda t: t + 7), "pool kinds"),
    "snapshot of the wrong shape": (_bad_snapshot_shape, "snapshot 0 has layers"),
    "NaN snapshot": (_nan_snapshot, "snapshot 0 holds NaN"),
    "snapshot count off": (_col("snapshot_count", lambda c: 7), "snapshot_count 7 does not match"),
    "garbage rng state": (_col("rng", lambda r: {"bit_generator": "PCG64", "state": "x"}), "random generator"),
    "missing collector key": (lambda d: d["collector"].pop("ctrl"), "collector state has keys"),
    "NaN model weight": (_nan_first_weight, "NaN"),
    "Adam moment of the wrong shape": (_bad_adam, "optimizer"),
    "negative update": (lambda d: d.__setitem__("update", -1), "update=-1"),
    "env steps not update x batch": (lambda d: d.__setitem__("env_steps", 5), "env_steps 5"),
    "no collector": (lambda d: d.pop("collector"), "lacks ['collector']"),
    "run description malformed": (lambda d: d["run"].pop("train"), "run description is malformed"),
}


@pytest.mark.parametrize("case", list(CORRUPTIONS))
def test_a_corrupted_training_checkpoint_is_refused_before_use(saved, tmp_path, case):
    """Every part of a checkpoint is checked before it is used, and a refused one leaves the
    trainer as it was (weights and vector env rows unchanged)."""
    path, data = saved
    edit, says = CORRUPTIONS[case]
    bad = tmp_path / "checkpoint.pt"
    torch.save(_edit(data, edit), bad)
    t = Trainer(load_settings(game="draw_v0", overrides=TINY), tmp_path / "fresh")
    weights = {k: v.clone() for k, v in t.model.state_dict().items()}
    rows = t.collector.venv.states.copy()
    with pytest.raises(CheckpointError, match=None) as err:
        t.load_checkpoint(bad)
    assert says in str(err.value), str(err.value)
    assert all(torch.equal(weights[k], v) for k, v in t.model.state_dict().items())
    np.testing.assert_array_equal(t.collector.venv.states, rows)
    assert t.update == 0


def test_the_untouched_checkpoint_loads(saved, tmp_path):
    """The fixture's checkpoint itself passes every check (so the refusals above are the edits')."""
    path, data = saved
    t = Trainer(load_settings(game="draw_v0", overrides=TINY), tmp_path)
    t.load_checkpoint(path)
    assert t.update == 2 and t.collector.snapshot_count == 2


def test_resume_from_a_truncated_or_crafted_checkpoint_is_one_line_and_exit_2(saved, tmp_path, capsys):
    path, data = saved
    folder = tmp_path / "run"
    folder.mkdir()
    args = ["draw_v0", "--run-dir", str(folder), "--resume", "--no-progress"] + sum([["--set", s] for s in TINY], [])
    (folder / "checkpoint.pt").write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert train_main(args) == 2
    assert "not a readable training checkpoint" in capsys.readouterr().err
    torch.save(_edit(data, CORRUPTIONS["row with every tile in a hand"][0]), folder / "checkpoint.pt")
    assert train_main(args) == 2
    assert "vector env row 0" in capsys.readouterr().err


def _policy(tmp_path):
    t = Trainer(load_settings(game="draw_v0", overrides=TINY), tmp_path / "p")
    return t.export_policy()


@pytest.mark.parametrize("case, edit, says", [
    ("hidden not a list", lambda m, layers: m.__setitem__("hidden", "16"), "must be ints"),
    ("obs_size a string", lambda m, layers: m.__setitem__("obs_size", "122"), "must be ints"),
    ("no num_actions", lambda m, layers: m.pop("num_actions"), "must be ints"),
    ("huge layer", lambda m, layers: m.__setitem__("hidden", [1 << 40]), "must be ints"),
    ("integer weights", lambda m, layers: layers.__setitem__(0, (layers[0][0].astype(np.int32), layers[0][1])),
     "floating point"),
])
def test_a_malformed_policy_file_is_refused(tmp_path, case, edit, says):
    layers, meta = load_policy(_policy(tmp_path))
    edit(meta, layers)
    path = tmp_path / "bad.npz"
    arrays = {f"{k}{i}": a for i, pair in enumerate(layers) for k, a in zip("wb", pair)}
    np.savez(path, meta=np.array(json.dumps(meta)), **arrays)
    with pytest.raises(CheckpointError, match=says):
        make_agent(f"ppo:checkpoint={path}", domino_envs.make_game("draw_v0"))


def test_a_corrupted_shipped_policy_is_refused_by_the_trained_agent(tmp_path, monkeypatch):
    good = _policy(tmp_path)
    layers, meta = load_policy(good)
    monkeypatch.setattr(trained, "SHIPPED_DIR", tmp_path / "shipped")
    (tmp_path / "shipped").mkdir()
    (tmp_path / "shipped" / "draw_v0.npz").write_bytes(good.read_bytes()[:300])  # truncated
    with pytest.raises(CheckpointError, match="not a readable policy file"):
        make_agent("trained", domino_envs.make_game("draw_v0"))
    layers[1][1][0] = np.inf
    save_policy(tmp_path / "shipped" / "draw_v0.npz", layers, meta)
    with pytest.raises(CheckpointError, match="NaN or infinite"):
        make_agent("trained", domino_envs.make_game("draw_v0"))


# ------------------------------------------------------------------------------ SB3 zips
class _Plant:
    """Unpickling this creates the marker file: what a crafted zip would do on SB3's own loader."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.fixture(scope="module")
def sb3_zip(tmp_path_factory):
    from sb3_contrib import MaskablePPO
    from torch import nn

    from domino_agents import RandomAgent
    from domino_envs.wrappers import SingleSeatEnv

    path = tmp_path_factory.mktemp("sb3") / "model.zip"
    env = SingleSeatEnv("draw_v0", RandomAgent, seed=0)
    MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=32, device="cpu",
                policy_kwargs={"net_arch": {"pi": [16], "vf": [16]}, "activation_fn": nn.ReLU}).save(path)
    return path


def _rewrite(src, dst, data=None, weights=None):
    """A copy of an SB3 zip with its data (a dict) and/or policy weights replaced."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            blob = zin.read(item)
            if item.filename == "data" and data is not None:
                blob = json.dumps(data).encode()
            if item.filename == "policy.pth" and weights is not None:
                buf = io.BytesIO()
                torch.save(weights, buf)
                blob = buf.getvalue()
            zout.writestr(item, blob)
    return dst


def test_an_sb3_zip_with_a_planted_pickle_loads_without_running_it(sb3_zip, tmp_path):
    """Every pickled entry of the zip's data is replaced by a payload that creates a file when
    unpickled: SB3's own loader runs it (the threat), our agent does not, and still plays."""
    from sb3_contrib import MaskablePPO

    with zipfile.ZipFile(sb3_zip) as z:
        data = json.loads(z.read("data"))
    marker = tmp_path / "pwned"
    payload = base64.b64encode(pickle.dumps(_Plant(marker))).decode()
    planted = 0
    for value in data.values():
        if isinstance(value, dict) and ":serialized:" in value:
            value[":serialized:"] = payload
            planted += 1
    assert planted >= 4  # spaces, schedules, classes, policy_kwargs
    crafted = _rewrite(sb3_zip, tmp_path / "crafted.zip", data=data)
    game = domino_envs.make_game("draw_v0")
    agent = make_agent(f"sb3:model={crafted}", game)
    assert not marker.exists()
    s = game.new_state()
    game.reset(s, 0)
    assert game.legal_mask(s)[agent.act(game.observe(s, game.current_seat(s)), game.legal_mask(s))] == 1
    with pytest.raises(Exception):  # noqa: B017 - whatever SB3 raises on the planted objects
        MaskablePPO.load(crafted, device="cpu")  # the planted objects are not spaces...
    assert marker.exists()  # ...but SB3's loader ran the pickle first


def _random_layers(game, hidden=16):
    """Weights of a policy for `game` with one hidden layer: what a policy file holds."""
    rng = np.random.default_rng(1)
    return [(rng.normal(size=(hidden, game.obs_size)), np.zeros(hidden)),
            (rng.normal(size=(game.num_actions, hidden)), np.zeros(game.num_actions))]


def test_an_rllib_checkpoint_with_planted_pickles_loads_without_running_them(tmp_path):
    """RLlib's own loader unpickles module_state.pkl and class_and_ctor_args.pkl; here both create a
    file when unpickled. The rllib agent reads only domino_policy.npz, so it plays and the file is
    never created; without that file it refuses with a CheckpointError, and still runs nothing."""
    from domino_agents.rllib_agent import POLICY_FILE

    game = domino_envs.make_game("draw_v0")
    marker = tmp_path / "pwned"
    module = tmp_path / "ckpt" / "learner_group" / "learner" / "rl_module" / "shared"
    module.mkdir(parents=True)
    for name in ("module_state.pkl", "class_and_ctor_args.pkl"):
        (module / name).write_bytes(pickle.dumps(_Plant(marker)))
    layers = _random_layers(game)
    save_policy(tmp_path / "ckpt" / POLICY_FILE, layers, {**policy_meta(game, (16,), "rllib", 100), "activation": "tanh"})
    agent = make_agent(f"rllib:checkpoint={tmp_path / 'ckpt'}", game)
    s = game.new_state()
    game.reset(s, 0)
    assert game.legal_mask(s)[agent.act(game.observe(s, game.current_seat(s)), game.legal_mask(s))] == 1
    (tmp_path / "ckpt" / POLICY_FILE).unlink()
    with pytest.raises(CheckpointError, match=f"has no {POLICY_FILE}"):
        make_agent(f"rllib:checkpoint={tmp_path / 'ckpt'}", game)
    assert not marker.exists()
    pickle.loads((module / "module_state.pkl").read_bytes()).close()  # what RLlib's loader would do first
    assert marker.exists()  # the plant is live


# ------------------------------------------------------------------------------ planted pickles, every loader
def _planted_policy(path, game, marker, algo):
    """A policy file whose first weight matrix is an object array holding the plant (numpy pickles
    object arrays into the .npz, and np.load(allow_pickle=True) would unpickle it)."""
    save_policy(path, _random_layers(game), policy_meta(game, (16,), algo, 100))
    with np.load(path) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["w0"] = np.array([_Plant(marker)], dtype=object)
    np.savez(path, **arrays)
    return lambda: np.load(path, allow_pickle=True)["w0"][0].close()  # what an unsafe loader would do


def _planted_table(path, game, marker, algo):
    """A tabular policy file (JSON, gzip for .gz) whose bytes are a pickle of the plant instead."""
    blob = pickle.dumps(_Plant(marker))
    path.write_bytes(gzip.compress(blob) if path.name.endswith(".gz") else blob)
    return lambda: pickle.loads(gzip.decompress(path.read_bytes()) if path.name.endswith(".gz")
                                else path.read_bytes()).close()


@pytest.mark.parametrize("spec, file, plant, says", [
    ("mlp:checkpoint={}", "policy.npz", _planted_policy, "Object arrays cannot be loaded"),
    ("ppo:checkpoint={}", "policy.npz", _planted_policy, "Object arrays cannot be loaded"),
    ("dmc:checkpoint={}", "policy.npz", _planted_policy, "Object arrays cannot be loaded"),
    ("tabular:path={}", "policy.json", _planted_table, "not a readable tabular policy file"),
    ("tabular:path={}", "policy.json.gz", _planted_table, "not a readable tabular policy file"),
], ids=["mlp", "ppo", "dmc", "tabular", "tabular-gz"])
def test_an_agent_file_with_a_planted_pickle_is_refused_without_running_it(tmp_path, spec, file, plant, says):
    """A file given to an agent spec holds a pickle that creates a file when unpickled: loading it is
    a CheckpointError naming the file, and the file is never created; an unsafe load would create it."""
    game = domino_envs.make_game("draw_v0")
    marker, path = tmp_path / "pwned", tmp_path / file
    unsafe_load = plant(path, game, marker, spec.partition(":")[0])
    with pytest.raises(CheckpointError, match=re.escape(str(path)) + ".*" + says):
        make_agent(spec.format(path), game)
    assert not marker.exists()
    unsafe_load()
    assert marker.exists()  # the plant is live


def _ppo_trainer(folder):
    return Trainer(load_settings(game="draw_v0", overrides=TINY), folder)


def _dmc_trainer(folder):
    from domino_training.learners import LearnerRun
    from domino_training.learners.dmc import DMCTrainer, dmc_settings

    params = {"dmc.num_envs": 2, "dmc.rollout_steps": 4, "dmc.batch_size": 8, "dmc.replay_size": 64,
              "network.hidden": [8], "dmc.torch_threads": 1}
    return DMCTrainer("draw_v0", {}, dmc_settings(LearnerRun("draw_v0", {}, 0, 1024, [1024], folder, params)),
                      0, folder)


@pytest.mark.parametrize("make_trainer", [_ppo_trainer, _dmc_trainer], ids=["ppo", "dmc"])
def test_a_training_checkpoint_with_a_planted_pickle_is_refused_without_running_it(tmp_path, make_trainer):
    """The trainer's own checkpoint.pt, its `extra` replaced by a pickle that creates a file when
    unpickled: torch.load(weights_only=True) refuses it (an UnpicklingError), which resuming turns into
    a CheckpointError naming the file; the file is never created, though a plain torch.load creates it."""
    t = make_trainer(tmp_path / "run")
    path = t.save_checkpoint()
    data = torch.load(path, weights_only=True)
    marker = tmp_path / "pwned"
    data["extra"] = {"note": _Plant(marker)}
    torch.save(data, path)
    with pytest.raises(CheckpointError, match=re.escape(str(path)) + ".*not a readable training checkpoint "
                                              r"\(UnpicklingError: Weights only load failed"):
        t.load_checkpoint(path)
    assert not marker.exists()
    torch.load(path, weights_only=False)["extra"]["note"].close()
    assert marker.exists()  # the plant is live


@pytest.mark.parametrize("case", ["truncated", "nan weights", "wrong shape", "not a zip", "unknown activation"])
def test_a_corrupted_sb3_zip_is_refused(sb3_zip, tmp_path, case):
    with zipfile.ZipFile(sb3_zip) as z:
        data = json.loads(z.read("data"))
        weights = torch.load(io.BytesIO(z.read("policy.pth")), weights_only=True)
    bad = tmp_path / "bad.zip"
    if case == "truncated":
        bad.write_bytes(sb3_zip.read_bytes()[:1000])
        says = "not a readable MaskablePPO model"
    elif case == "nan weights":
        weights["action_net.bias"][0] = float("nan")
        _rewrite(sb3_zip, bad, weights=weights)
        says = "NaN"
    elif case == "wrong shape":
        weights["action_net.weight"] = weights["action_net.weight"][:, :8]
        _rewrite(sb3_zip, bad, weights=weights)
        says = "do not fit"
    elif case == "not a zip":
        bad.write_bytes(b"PK\x03\x04 garbage")
        says = "not a readable MaskablePPO model"
    else:
        data["policy_kwargs"]["activation_fn"] = "<class 'os.system'>"
        _rewrite(sb3_zip, bad, data=data)
        says = "is not one this loader builds"
    with pytest.raises(CheckpointError, match=says):
        make_agent(f"sb3:model={bad}", domino_envs.make_game("draw_v0"))
