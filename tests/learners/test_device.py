"""The learners' device (issue 44): ``ppo.device`` and ``dmc.device`` take any torch device that exists
and refuse the rest naming the key (training/configs.py `check_device`); a run on ``cpu:0`` trains to
exactly what a run on ``cpu`` trains to (the device string reaches the tensor code without changing
it); and every tensor the learners compute with is on the requested device.

No GPU here, so the last check runs on a stand-in: `VirtualDevice` treats ``cpu:0`` as a device of its
own (a tensor is on it once moved or created there, and so is everything computed from it), records
every operation that mixes it with a tensor that never went there (a GPU would fail on that or copy
silently) and every ``.numpy()`` or ``np.asarray`` (``__array__``: also ``np.array(t)`` and ``buf[i] = t``)
of a tensor still on it (a GPU fails on that). torch itself cannot tell:
a CPU tensor reports ``cpu`` whatever index it was put on (checked in `test_cpu_tensors_forget_their_index`).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode

from domino_envs.errors import ConfigError
from domino_training.learners import LearnerRun, train_learner
from domino_training.learners.dmc import DMCTrainer, dmc_settings
from domino_training.learners.network import check_device
from domino_training.learners.ppo import Trainer
from domino_training.learners.train import load_settings

GAME = "draw_v0"
PPO_TINY = ["ppo.num_envs=8", "ppo.rollout_steps=8", "ppo.minibatch_size=32", "ppo.epochs=2", "network.hidden=[16]",
            "budget.env_steps=256", "imitation.decisions=0", "eval.every_updates=0", "eval.final_deals=0",
            "ppo.torch_threads=1", "opponents.snapshot_every=1"]
# the other tensor paths of a ppo run: the perfect-information critic, the imitation warm start, a distillation round
PPO_ALL_PATHS = ["ppo.perfect_info_critic=true", "imitation.decisions=320", "imitation.epochs=2", "distill.rounds=1",
                 "distill.teacher=heuristic", "distill.positions=48", "distill.epochs=2"]
DMC_TINY = {"dmc.num_envs": 8, "dmc.rollout_steps": 8, "dmc.batch_size": 16, "dmc.replay_size": 64,
            "network.hidden": [16], "dmc.torch_threads": 1, "opponents.greedy": 0.5}


# ------------------------------------------------------------------------------ the check
@pytest.mark.parametrize("value", ["cpu", "cpu:0"])
def test_the_cpu_in_either_spelling_is_accepted(value):
    assert check_device("ppo.device", value) == torch.device(value)


@pytest.mark.parametrize("value, why", [
    ("gpu", "not a torch device string"), ("CUDA", "not a torch device string"), ("cuda:x", "not a torch device string"),
    ("", "not a torch device string"), (" cpu", "not a torch device string"), (0, "a torch device string"),
    ("cpu:1", "the CPU is one device"), ("meta", "'meta' is not one of them"), ("hpu", "'hpu' is not one of them")])
def test_a_bad_device_names_the_key_the_value_and_what_is_allowed(value, why):
    with pytest.raises(ConfigError, match=rf"dmc.device={value!r} is not allowed; .*{why}") as err:
        check_device("dmc.device", value)
    if why != "the CPU is one device":
        assert "cpu (or cpu:0), cuda or cuda:N" in str(err.value)


@pytest.mark.parametrize("value", ["cuda", "cuda:0"])
def test_cuda_where_torch_sees_none_is_refused(value, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match=rf"ppo.device='{value}' is not allowed; torch sees no CUDA device; "
                                          rf"use ppo.device=cpu"):
        check_device("ppo.device", value)


def test_a_cuda_index_past_the_devices_torch_sees_is_refused(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert check_device("ppo.device", "cuda") == torch.device("cuda")
    assert check_device("ppo.device", "cuda:1") == torch.device("cuda", 1)
    with pytest.raises(ConfigError, match=r"ppo.device='cuda:2' is not allowed; torch sees 2 CUDA device\(s\), "
                                          r"cuda:0 to cuda:1"):
        check_device("ppo.device", "cuda:2")


def test_xpu_like_cuda_where_torch_has_it_and_not_past_its_count(monkeypatch):
    """The xpu branch of check_device (Intel GPUs): refused where torch.xpu sees none or where this torch
    build has no torch.xpu at all; accepted up to the device count torch.xpu reports."""
    monkeypatch.setattr(torch.xpu, "is_available", lambda: False)
    with pytest.raises(ConfigError, match=r"ppo.device='xpu' is not allowed; torch sees no XPU device; use ppo.device=cpu"):
        check_device("ppo.device", "xpu")
    monkeypatch.setattr(torch.xpu, "is_available", lambda: True)
    monkeypatch.setattr(torch.xpu, "device_count", lambda: 2)
    assert check_device("ppo.device", "xpu") == torch.device("xpu")
    assert check_device("dmc.device", "xpu:1") == torch.device("xpu", 1)
    with pytest.raises(ConfigError, match=r"dmc.device='xpu:2' is not allowed; torch sees 2 XPU device\(s\), xpu:0 to xpu:1"):
        check_device("dmc.device", "xpu:2")
    monkeypatch.delattr(torch, "xpu")
    with pytest.raises(ConfigError, match=r"ppo.device='xpu:0' is not allowed; torch sees no XPU device"):
        check_device("ppo.device", "xpu:0")


def test_mps_only_where_torch_has_it(monkeypatch):
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    with pytest.raises(ConfigError, match=r"dmc.device='mps' is not allowed; torch has no MPS device here"):
        check_device("dmc.device", "mps")
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert check_device("dmc.device", "mps") == torch.device("mps")
    with pytest.raises(ConfigError, match="MPS is one device"):
        check_device("dmc.device", "mps:1")


def test_each_entry_point_refuses_a_device_torch_does_not_have_before_training(tmp_path, monkeypatch):
    """The config file / --set path, a Trainer handed an unchecked config, the learner interface's ppo
    and dmc params (refused before the run folder is written) and a DMCTrainer built directly."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError, match="ppo.device='cuda:1' is not allowed; torch sees no CUDA device"):
        load_settings(game=GAME, overrides=PPO_TINY + ["ppo.device=cuda:1"])
    run = load_settings(game=GAME, overrides=PPO_TINY)
    run.train.ppo.device = "cuda"  # set after the config was checked
    with pytest.raises(ConfigError, match="ppo.device='cuda' is not allowed"):
        Trainer(run, tmp_path / "trainer")
    for learner in ("ppo", "dmc"):
        folder = tmp_path / learner
        with pytest.raises(ConfigError, match=f"{learner}.device='cuda' is not allowed; torch sees no CUDA device"):
            train_learner(learner, LearnerRun(GAME, {}, 0, 1024, [1024], folder, {f"{learner}.device": "cuda"}))
        assert not folder.exists()
    settings = dmc_settings(LearnerRun(GAME, {}, 0, 1024, [1024], tmp_path, DMC_TINY))
    settings.dmc.device = "meta"
    with pytest.raises(ConfigError, match="dmc.device='meta' is not allowed"):
        DMCTrainer(GAME, {}, settings, 0, tmp_path / "dmc_direct")


# ------------------------------------------------------------------------------ cpu:0 trains as cpu does
def _without_device(meta: dict) -> dict:
    """A policy file's meta without the device it records (the one thing a cpu:0 run writes differently)."""
    meta = json.loads(json.dumps(meta))
    section = meta["train"].get("ppo") or meta["train"].get("dmc")
    assert section.pop("device") in ("cpu", "cpu:0")
    return meta


def _policy(path) -> tuple[list, dict]:
    with np.load(path, allow_pickle=False) as z:
        return [(k, z[k].tobytes()) for k in sorted(z.files) if k != "meta"], json.loads(str(z["meta"]))


def _ppo_run(device: str, folder: Path, extra=()) -> tuple[list, list, dict]:
    """(log rows without timings, policy arrays, meta) of three updates of a tiny ppo run."""
    from domino_training.learners.distill import run_round

    run = load_settings(game=GAME, overrides=PPO_TINY + list(extra) + [f"ppo.device={device}"])
    t = Trainer(run, folder)
    rows = []
    if run.train.imitation.decisions:
        rows.append(t.warm_start())
    if run.train.distill.rounds:
        rows.append({k: v for k, v in run_round(t, 0, echo=lambda *a, **k: None).items() if k != "seconds"})
    for _ in range(3):
        rows.append({k: v for k, v in t.iterate().items() if k not in ("seconds", "steps_per_s", "collect_steps_per_s")})
    arrays, meta = _policy(t.export_policy())
    return rows, arrays, meta


@pytest.mark.parametrize("extra", [[], PPO_ALL_PATHS], ids=["plain", "every_path"])
def test_ppo_on_cpu0_trains_exactly_as_on_cpu(extra, tmp_path):
    rows, arrays, meta = _ppo_run("cpu", tmp_path / "cpu", extra)
    rows0, arrays0, meta0 = _ppo_run("cpu:0", tmp_path / "cpu0", extra)
    assert rows0 == rows and "policy_loss" in rows[-1]  # every loss, to the last bit
    assert arrays0 == arrays
    assert meta0["train"]["ppo"]["device"] == "cpu:0" and _without_device(meta0) == _without_device(meta)


def test_dmc_on_cpu0_trains_exactly_as_on_cpu(tmp_path):
    out = {}
    for device in ("cpu", "cpu:0"):
        settings = dmc_settings(LearnerRun(GAME, {}, 0, 1024, [1024], tmp_path, {**DMC_TINY, "dmc.device": device}))
        t = DMCTrainer(GAME, {}, settings, 0, tmp_path / device)
        rows = [t.iterate() for _ in range(5)]
        points = train_learner("dmc", LearnerRun(GAME, {}, 3, 1024, [512, 1024], tmp_path / f"iface_{device}",
                                                 {**DMC_TINY, "dmc.device": device}))
        out[device] = rows, _policy(t.export_policy(tmp_path / f"{device}.npz")), \
            [_policy(p.spec.split("=", 1)[1])[0] for p in points]
    (rows, (arrays, meta), marks), (rows0, (arrays0, meta0), marks0) = out["cpu"], out["cpu:0"]
    assert rows0 == rows and all(np.isfinite(r["loss"]) for r in rows)
    assert arrays0 == arrays and marks0 == marks
    assert meta0["train"]["dmc"]["device"] == "cpu:0" and _without_device(meta0) == _without_device(meta)


def test_a_dmc_run_resumes_on_another_device_and_from_a_checkpoint_without_one(tmp_path):
    """The device is not part of what a resume must match (a GPU run can go on on a CPU); checkpoints
    written before dmc.device existed hold no device and still resume. Another setting still refuses."""
    def trainer(**params):
        return DMCTrainer(GAME, {}, dmc_settings(LearnerRun(GAME, {}, 0, 1024, [1024], tmp_path, {**DMC_TINY, **params})),
                          0, tmp_path / "run")

    first = trainer()
    first.iterate()
    first.save_checkpoint()
    on_cpu0 = trainer(**{"dmc.device": "cpu:0"})
    on_cpu0.load_checkpoint()
    assert on_cpu0.iteration == 1 and on_cpu0.rp_size == first.rp_size
    data = torch.load(first.checkpoint_path, weights_only=True)
    del data["run"]["settings"]["dmc"]["device"]
    torch.save(data, first.checkpoint_path)
    trainer().load_checkpoint()
    from domino_envs.errors import CheckpointError

    with pytest.raises(CheckpointError, match="cannot resume"):
        trainer(**{"dmc.lr": 1e-3}).load_checkpoint()


# ------------------------------------------------------------------------------ every tensor on the device
# the ways a tensor's memory is read as a numpy array: on a GPU each fails ("can't convert cuda:0 device type
# tensor to numpy"); np.asarray(t), np.array(t) and assigning t into a numpy array all call t.__array__
NUMPY_READS = {"numpy": ".numpy()", "__array__": "np.asarray()"}


class VirtualDevice(TorchFunctionMode):
    """``cpu:0`` as a device of its own (see the module doc): while active, a tensor is on it once
    ``.to`` that device or made with ``device=`` it, and so is every result computed from it; its
    ``.device`` then reads ``cpu:0``. `violations` lists each op mixing it with a tensor of more
    than one element that never went there (0-dim tensors mix with a GPU's, as torch allows) and each
    ``.numpy()`` or numpy conversion (``__array__``: ``np.asarray(t)``, ``np.array(t)``, ``buf[i] = t``) of
    a tensor on it. `used` counts the ops that ran on it, `copies_in` and `copies_out`
    the copies of arrays to it and off it (0-dim ones left out: clip_grad_norm_ moves its scalar to
    the device torch's C++ reports for the gradients, which for this stand-in is `cpu`), `reads` the
    values read into Python straight off it (``float()``, ``.item()``, ``.tolist()``: each a wait
    for a GPU)."""

    # a copy across devices is how data gets there; Module.to compares the types of a parameter before and after
    LEGAL_MIX = {"copy_", "_has_compatible_shallow_copy_type"}

    def __init__(self, device: str = "cpu:0"):
        super().__init__()
        self.device = torch.device(device)
        self.violations: list[str] = []
        self.used: dict[str, int] = {}
        self.copies_in = self.copies_out = self.reads = 0

    @staticmethod
    def on(t) -> bool:
        return isinstance(t, torch.Tensor) and getattr(t, "_on_virtual_device", False)

    @staticmethod
    def _tensors(obj):
        if isinstance(obj, torch.Tensor):
            yield obj
        elif isinstance(obj, (list, tuple)):
            for x in obj:
                yield from VirtualDevice._tensors(x)
        elif isinstance(obj, dict):
            for x in obj.values():
                yield from VirtualDevice._tensors(x)

    def _target(self, name, args, kwargs):
        """Where a move or a factory puts its result: True (here), False (elsewhere), None (no device given)."""
        if name == "cpu":
            return False
        if name == "to":
            device = torch._C._nn._parse_to(*args[1:], **kwargs)[0]
        else:
            device = kwargs.get("device")
        return None if device is None else torch.device(device) == self.device

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        attr = getattr(getattr(func, "__self__", None), "__name__", None)
        if name == "__get__" and attr == "device" and self.on(args[0]):
            return self.device
        if name == "__set__" and attr == "data":
            func(*args, **kwargs)
            args[0]._on_virtual_device = self.on(args[1])
            return None
        tensors = list(self._tensors((args, kwargs)))
        here = [t for t in tensors if self.on(t)]
        if here:
            self.used[name] = self.used.get(name, 0) + 1
            self.reads += name in ("__float__", "__int__", "__bool__", "item", "tolist")
            if name in NUMPY_READS:
                self.violations.append(f"{NUMPY_READS[name]} of a {tuple(args[0].shape)} tensor on {self.device}")
            stray = [tuple(t.shape) for t in tensors if not self.on(t) and t.dim() > 0]
            if stray and name not in self.LEGAL_MIX and not (name == "to" and self._target(name, args, kwargs)):
                self.violations.append(f"{name}: tensors {stray} not on {self.device} with {len(here)} on it")
        result = func(*args, **kwargs)
        target = self._target(name, args, kwargs) if name in ("to", "cpu") or "device" in kwargs else None
        on = bool(here) if target is None else target
        if name in ("to", "cpu") and target is not None and self.on(args[0]) != target and args[0].dim() > 0:
            self.copies_in += target
            self.copies_out += not target
        if isinstance(result, torch.Tensor):
            if args and result is args[0] and on != self.on(result) and not result.requires_grad:
                result = result.detach()  # a move that returned its input: only the moved name changes place
            result._on_virtual_device = on
        elif isinstance(result, (list, tuple)) and on:
            for t in self._tensors(result):
                t._on_virtual_device = True
        return result


def test_cpu_tensors_forget_their_index():
    """Why the stand-in: torch reports every CPU tensor as on `cpu`, so `.device` cannot show a
    tensor that missed `.to("cpu:0")`."""
    assert torch.device("cpu:0").index == 0 and torch.device("cpu:0") != torch.device("cpu")
    assert torch.zeros(2, device="cpu:0").device == torch.zeros(2).to("cpu:0").device == torch.device("cpu")


def test_the_virtual_device_sees_a_missed_move_and_a_numpy_read_on_the_device():
    lin = torch.nn.Linear(3, 2)
    with VirtualDevice() as vd:
        lin.to(torch.device("cpu:0"))
        x = torch.zeros(4, 3).to("cpu:0")
        assert lin.weight.device == torch.device("cpu:0") and vd.violations == []
        y = lin(x)
        y.sum().backward()
        torch.optim.Adam(lin.parameters()).step()
        y.detach().cpu().numpy()
        torch.zeros(2, device="cpu:0") + torch.ones(2, device="cpu:0")
        assert vd.violations == [] and vd.used["linear"] == 1
        np.asarray(y.detach().cpu())
        buf = np.zeros((4, 2), np.float32)
        buf[:] = y.detach().cpu()
        assert vd.violations == [] and vd.used["linear"] == 1
        lin(torch.zeros(4, 3))  # made without the device
        y.detach().numpy()  # still on the device
        torch.zeros(2, device="cpu:0") + torch.ones(2)
        np.asarray(y.detach())  # each a numpy read of a tensor still on the device
        np.asarray(y.detach()[0], dtype=np.float64)
        buf[:] = y.detach()
    assert [v.split(":")[0] for v in vd.violations] == ["linear", ".numpy() of a (4, 2) tensor on cpu", "add",
                                                        "np.asarray() of a (4, 2) tensor on cpu",
                                                        "np.asarray() of a (2,) tensor on cpu",
                                                        "np.asarray() of a (4, 2) tensor on cpu"]


def _everything_on(model, optimizer, vd: VirtualDevice) -> None:
    assert vd.violations == []
    assert all(vd.on(p) for p in model.parameters())
    moments = [s[k] for s in optimizer.state.values() for k in ("exp_avg", "exp_avg_sq")]
    assert moments and all(vd.on(m) for m in moments)


def test_every_tensor_of_a_ppo_run_is_on_its_device(tmp_path):
    """Collection (both critics), the update, the imitation warm start, a distillation round, a
    checkpoint saved and loaded back, a snapshot, the policy export: all on ppo.device."""
    from domino_training.learners.distill import run_round

    run = load_settings(game=GAME, overrides=PPO_TINY + PPO_ALL_PATHS + ["ppo.device=cpu:0"])
    with VirtualDevice() as vd:
        t = Trainer(run, tmp_path)
        t.warm_start()
        run_round(t, 0, echo=lambda *a, **k: None)
        t.iterate()
        t.save_checkpoint()
        t.load_checkpoint()
        t.iterate()
        t.export_policy()
        assert t.collector.snapshot_count == 2
    _everything_on(t.model, t.optimizer, vd)
    assert vd.used["linear"] > 0 and vd.used["backward"] > 0


def test_every_tensor_of_a_dmc_run_is_on_its_device(tmp_path):
    settings = dmc_settings(LearnerRun(GAME, {}, 0, 1024, [1024], tmp_path, {**DMC_TINY, "dmc.device": "cpu:0"}))
    with VirtualDevice() as vd:
        t = DMCTrainer(GAME, {}, settings, 0, tmp_path)
        t.iterate()
        t.save_checkpoint()
        t.load_checkpoint()
        t.iterate()
        t.export_policy(tmp_path / "q.npz")
    _everything_on(t.q, t.optimizer, vd)
    assert vd.used["linear"] > 0 and vd.used["backward"] > 0


@pytest.mark.parametrize("pi_critic", [False, True])
def test_collection_copies_each_array_once_a_step_and_the_update_once_an_update(pi_critic, tmp_path):
    """Self-play on 8 games for 8 steps: every step sends the observations (and the critic's rows)
    over once and brings logits and values back once, plus one round trip for the bootstrap values at
    the end; the update sends each rollout array once and a permutation per epoch, and brings its
    losses back once, at the end (no value read off the device in between)."""
    from domino_training.learners.ppo import ppo_update

    run = load_settings(game=GAME, overrides=PPO_TINY + ["ppo.device=cpu:0", "opponents.self_play=1", "opponents.snapshot=0",
                                                    "opponents.random=0", "opponents.greedy=0", "opponents.heuristic=0",
                                                    f"ppo.perfect_info_critic={str(pi_critic).lower()}"])
    with VirtualDevice() as vd:
        t = Trainer(run, tmp_path)
        vd.copies_in = vd.copies_out = 0
        buf = t.collector.collect(t.model)
        assert buf.size == 8 * 8 and (vd.copies_in, vd.copies_out, vd.reads) == (8 * (1 + pi_critic) + 1, 8 + 1, 0)
        vd.copies_in = vd.copies_out = 0
        ppo_update(t.model, t.optimizer, buf, t.cfg.ppo, t.collector.rng, t.device)
        # in: obs mask act logp adv value (and the critic's rows) and a permutation for each of the 2 epochs
        assert (vd.copies_in, vd.copies_out, vd.reads) == (6 + pi_critic + 2, 1, 0)
    assert vd.violations == []
