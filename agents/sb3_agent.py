"""A saved `sb3_contrib.MaskablePPO` model as an agent: ``make_agent("sb3:model=runs/x/sb3_model.zip", game)``.

The model file is SB3's own zip (training/learners/sb3.py writes it). Beside it, ``<name>.json`` (written by
the same run) records the game, its config and the sizes; when present it is checked against the
game, so a model saved for another game or another rule config is refused even where the sizes
happen to agree (draw_v0 and block_v0 share them). Without it only the spaces are checked.

Acting: ``model.predict(obs, action_masks=mask, deterministic=True)``, the highest-probability legal
action. ``sample=True`` samples the masked policy instead, from the agent's own seeded Generator
(SB3's ``deterministic=False`` would draw from torch's global RNG, which this project never uses).

Loading runs none of the file's code. SB3's own ``MaskablePPO.load`` unpickles (cloudpickle) the
spaces, schedules and classes stored in the zip's ``data``, so a crafted zip runs code on load; this
agent never calls it. It reads ``data`` as plain JSON (for the activation function's name, from an
allowed list), the weights ``policy.pth`` with ``torch.load(weights_only=True)``, and builds a
``MaskableActorCriticPolicy`` of its own for the game's spaces, with the layer sizes the weights
have: anything else in the file is ignored, and weights that do not fit (shapes, keys, NaN) are a
`CheckpointError`. Resuming SB3 *training* (training/learners/sb3.py) does use SB3's loader: resume only run
folders of your own.

sb3_contrib (the ``train`` extra) is imported only when such an agent is built, so the registry
stays importable without it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .trained import CheckpointError, SampledAgent, check_meta, read_description

META_FORMAT = "domino-envs-sb3-model/1"
# activation functions a model may name (torch.nn classes, looked up by name: nothing is unpickled)
ACTIVATIONS = ("ReLU", "Tanh", "ELU", "LeakyReLU", "GELU", "SiLU", "Sigmoid")
SB3_DEFAULT_ACTIVATION = "Tanh"  # what SB3's MlpPolicy uses when policy_kwargs names none
MAX_ZIP_ENTRY = 256 << 20  # bytes read from one entry of a model zip


def _activation_name(data: dict, where: str) -> str:
    """The policy's activation, from the readable text SB3 stores beside a pickled policy_kwargs
    ("<class 'torch.nn.modules.activation.ReLU'>") or from a plain-JSON policy_kwargs."""
    kwargs = data.get("policy_kwargs", {})
    if not isinstance(kwargs, dict) or "activation_fn" not in kwargs:
        return SB3_DEFAULT_ACTIVATION
    text = str(kwargs["activation_fn"])
    for name in ACTIVATIONS:
        if text in (f"<class 'torch.nn.modules.activation.{name}'>", name):
            return name
    raise CheckpointError(f"{where}: activation_fn {text[:80]!r} is not one this loader builds; allowed: "
                          f"{list(ACTIVATIONS)}")


def _widths(weights: dict, prefix: str, where: str) -> list[int]:
    """Layer widths of one MLP of SB3's extractor (prefix.0.weight, prefix.2.weight, ...)."""
    widths, i = [], 0
    while f"{prefix}.{i}.weight" in weights:
        widths.append(int(weights[f"{prefix}.{i}.weight"].shape[0]))
        i += 2
    if any(w <= 0 or w > 1 << 16 for w in widths):
        raise CheckpointError(f"{where}: layer widths {widths} of {prefix} are out of range")
    return widths


def load_maskable_policy(path: Path, game, where: str):
    """The MaskableActorCriticPolicy of an SB3 zip, built without unpickling (see module doc)."""
    import io
    import json
    import zipfile

    try:
        import torch
        from gymnasium import spaces
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
        from torch import nn
    except ImportError as err:
        raise CheckpointError(f"{where}: sb3_contrib is not installed ({err}); pip install 'domino-envs[train]'") from None
    try:
        with zipfile.ZipFile(path) as z:
            for name in ("data", "policy.pth"):
                if z.getinfo(name).file_size > MAX_ZIP_ENTRY:
                    raise CheckpointError(f"{where}: its {name} is larger than {MAX_ZIP_ENTRY} bytes")
            data = json.loads(z.read("data"))
            weights = torch.load(io.BytesIO(z.read("policy.pth")), map_location="cpu", weights_only=True)
    except CheckpointError:
        raise
    except Exception as err:  # zip, JSON, torch errors: all mean "not a MaskablePPO model"
        raise CheckpointError(f"{where} is not a readable MaskablePPO model ({type(err).__name__}: {err})") from None
    if not isinstance(data, dict) or not isinstance(weights, dict) or not all(
            isinstance(t, torch.Tensor) and t.is_floating_point() for t in weights.values()):
        raise CheckpointError(f"{where} is not a readable MaskablePPO model (its data or weights are malformed)")
    if not all(bool(torch.isfinite(t).all()) for t in weights.values()):
        raise CheckpointError(f"{where}: its weights hold NaN or infinite values")
    first = weights.get("mlp_extractor.policy_net.0.weight", weights.get("action_net.weight"))
    last = weights.get("action_net.weight")
    problems = []
    if first is None or last is None or first.dim() != 2 or last.dim() != 2:
        raise CheckpointError(f"{where}: no MlpPolicy weights (mlp_extractor / action_net) in policy.pth")
    if first.shape[1] != game.obs_size:
        problems.append(f"observation shape ({int(first.shape[1])},) vs {(game.obs_size,)}")
    if last.shape[0] != game.num_actions:
        problems.append(f"{int(last.shape[0])} actions vs {game.num_actions}")
    if problems:
        raise CheckpointError(f"{where} does not fit {game.name}: " + "; ".join(problems))
    net_arch = {"pi": _widths(weights, "mlp_extractor.policy_net", where),
                "vf": _widths(weights, "mlp_extractor.value_net", where)}
    policy = MaskableActorCriticPolicy(
        spaces.Box(0.0, game.obs_high(), (game.obs_size,), np.float32), spaces.Discrete(game.num_actions),
        lr_schedule=lambda _: 0.0, net_arch=net_arch, activation_fn=getattr(nn, _activation_name(data, where)))
    try:
        policy.load_state_dict(weights)
    except (RuntimeError, ValueError, KeyError) as err:
        raise CheckpointError(f"{where}: its weights do not fit a MaskablePPO MlpPolicy of widths {net_arch} "
                              f"({err})") from None
    policy.set_training_mode(False)
    return policy


def meta_path(model_path: str | Path) -> Path:
    """sb3_model.zip -> sb3_model.json (where training/learners/sb3.py records the game of a model)."""
    return Path(model_path).with_suffix(".json")


class SB3Agent(SampledAgent):
    """A MaskablePPO model playing `game` (see module doc)."""

    name = "sb3"

    def __init__(self, game, seed: int | None = None, model: str = "", sample: bool = False):
        if not model:
            raise CheckpointError("sb3 agent needs model=PATH (a MaskablePPO .zip saved by domino_training.learners.sb3)")
        path = Path(model)
        if not path.is_file():
            raise CheckpointError(f"sb3 model file {str(path)!r} does not exist")
        where = f"sb3 model {str(path)!r}"
        info = meta_path(path)
        if info.is_file():
            check_meta(read_description(info, META_FORMAT, where), game, where)
        self.policy = load_maskable_policy(path, game, where)
        super().__init__(game, seed, sample)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = self.legal_of(action_mask)
        obs = np.asarray(observation, dtype=np.float32)
        if not self.sample:
            action, _ = self.policy.predict(obs, action_masks=legal, deterministic=True)
            return int(action)
        import torch

        policy = self.policy
        with torch.no_grad():
            obs_t, _ = policy.obs_to_tensor(obs)
            probs = policy.get_distribution(obs_t, action_masks=legal[None, :]).distribution.probs[0].double().numpy()
        probs[~legal] = 0.0
        return int(self._rng.choice(probs.size, p=probs / probs.sum()))
