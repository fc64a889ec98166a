"""What the vector-env learners (ppo, dmc) share for their checkpoint.pt files: the atomic save, the
``weights_only`` load, and the checks a loaded part passes before it is used (a file can be
corrupted or crafted). Each check raises CheckpointError naming the file and the first thing wrong.
"""
from __future__ import annotations

import copy
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn

from domino_agents.trained import CheckpointError
from domino_envs.core import H_DONE, H_TURN
from domino_envs.errors import StateError

# the top-level keys of every learner's checkpoint (its "format" names the learner)
CHECKPOINT_KEYS = ("format", "package_version", "run", "update", "env_steps", "seconds", "model", "optimizer",
                   "collector", "extra")


def save_checkpoint_file(path: Path, data: dict) -> Path:
    """torch.save `data` to `path` through a .tmp file: an interruption never leaves half a checkpoint."""
    tmp = path.with_suffix(".tmp")
    torch.save(data, tmp)
    tmp.replace(path)
    return path


def load_checkpoint_file(path: Path, fmt: str) -> dict:
    """A training checkpoint's contents (weights_only: no code runs), declaring format `fmt` and
    holding `CHECKPOINT_KEYS`; CheckpointError if unusable."""
    if not path.is_file():
        raise CheckpointError(f"no checkpoint at {str(path)!r}")
    try:
        # onto the CPU, whatever device wrote it: the checks run there, and load_state_dict copies
        # weights and Adam's moments onto the run's device (a GPU run can resume on a CPU and back)
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:
        raise CheckpointError(f"{str(path)!r} is not a readable training checkpoint ({type(err).__name__}: {err})") from None
    if not isinstance(data, dict) or data.get("format") != fmt:
        raise CheckpointError(f"{str(path)!r}: not a {fmt} checkpoint")
    missing = sorted(set(CHECKPOINT_KEYS) - set(data))
    if missing or not isinstance(data["run"], dict):
        raise CheckpointError(f"{str(path)!r}: the checkpoint lacks {missing or ['a run description']}")
    return data


def read_counts(data: dict, where: str) -> dict:
    """The checkpoint's update and env_steps (whole numbers) and seconds, each a finite number >= 0."""
    counts = {}
    for key, kind in (("update", int), ("env_steps", int), ("seconds", float)):
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise CheckpointError(f"{where}: {key}={value!r} must be a finite number >= 0")
        if kind(value) != value:
            raise CheckpointError(f"{where}: {key}={value!r} must be a whole number")
        counts[key] = kind(value)
    return counts


def read_generators(states: list, where: str) -> list[np.random.Generator]:
    """A numpy Generator for each saved bit-generator state."""
    out = []
    try:
        for state in states:
            rng = np.random.default_rng()
            rng.bit_generator.state = state
            out.append(rng)
    except (TypeError, ValueError, KeyError) as err:
        raise CheckpointError(f"{where}: a saved random generator state is unusable ({err})") from None
    return out


def load_model_and_optimizer(model: nn.Module, optimizer: torch.optim.Optimizer, data: dict, where: str,
                             then: Callable[[], None] | None = None) -> None:
    """Load the checkpoint's weights and Adam state, checked (`check_adam_state`), then run `then`
    (more of the restore that may fail); on any failure the model and optimizer are put back."""
    weights = data.get("model")
    if not isinstance(weights, dict) or not all(isinstance(t, torch.Tensor) and t.is_floating_point()
                                               and bool(torch.isfinite(t).all()) for t in weights.values()):
        raise CheckpointError(f"{where}: the model weights are missing, not float tensors, or hold NaN/inf")
    before = (copy.deepcopy(model.state_dict()), copy.deepcopy(optimizer.state_dict()))
    try:
        model.load_state_dict(weights)
        optimizer.load_state_dict(data["optimizer"])
        check_adam_state(optimizer, model)
        if then is not None:
            then()
    except (RuntimeError, ValueError, KeyError, TypeError, AttributeError, IndexError) as err:
        model.load_state_dict(before[0])
        optimizer.load_state_dict(before[1])
        if isinstance(err, CheckpointError):
            raise
        raise CheckpointError(f"{where}: weights or optimizer state do not fit this network "
                              f"({type(err).__name__}: {err})") from None


def check_adam_state(optimizer: torch.optim.Optimizer, model: nn.Module) -> None:
    """CheckpointError unless every Adam moment loaded has its parameter's shape and finite values
    (torch accepts a state of any shape and fails, or silently broadcasts, at the next step)."""
    for group in optimizer.param_groups:
        for key in ("lr", "eps", "weight_decay"):
            value = group.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise CheckpointError(f"optimizer {key}={value!r} must be a finite number >= 0")
        for param in group["params"]:
            state = optimizer.state.get(param, {})
            for key in ("exp_avg", "exp_avg_sq"):
                if key in state:
                    t = state[key]
                    if not isinstance(t, torch.Tensor) or t.shape != param.shape or not bool(torch.isfinite(t).all()):
                        raise CheckpointError(f"optimizer state {key} does not fit a parameter of shape "
                                              f"{tuple(param.shape)} or holds NaN/inf")
            step = state.get("step")
            if step is not None and (not isinstance(step, torch.Tensor) or step.numel() != 1
                                     or not bool(torch.isfinite(step).all()) or float(step) < 0):
                raise CheckpointError(f"optimizer step {step!r} must be one finite number >= 0")


def check_vector_rows(game, states, obs, masks, seats, where: str) -> None:
    """CheckpointError unless every saved vector-env row is a live game that ``game.validate``
    accepts, with its seat to act, observation and mask recomputed equal to the saved ones (what a
    resumed learner on the vector env relies on)."""
    for i in range(states.shape[0]):
        row = states[i]
        try:
            game.validate(row)
        except StateError as err:
            raise CheckpointError(f"{where}: vector env row {i}: {err}") from None
        if row[H_DONE]:
            raise CheckpointError(f"{where}: vector env row {i} holds a finished game (the vector env "
                                  f"starts the next one at once, so a saved row is always live)")
        if seats[i] != row[H_TURN]:
            raise CheckpointError(f"{where}: vector env seat {int(seats[i])} of row {i} is not the row's "
                                  f"seat to act {int(row[H_TURN])}")
        if not (np.array_equal(game.observe(row, int(seats[i])), obs[i])
                and np.array_equal(game.legal_mask(row), masks[i])):
            raise CheckpointError(f"{where}: the observation or mask saved for vector env row {i} is not "
                                  f"the row's own")


__all__ = ["CHECKPOINT_KEYS", "check_adam_state", "check_vector_rows", "load_checkpoint_file",
           "load_model_and_optimizer", "read_counts", "read_generators", "save_checkpoint_file"]
