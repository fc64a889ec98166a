"""The RLModule our RLlib training builds (training/learners/rllib.py) and the loading of a trained one,
in the agents layer so that `rllib:checkpoint=DIR` (rllib_agent.py) loads a policy without the
training code. RLlib records a module's class by its import path in the checkpoint: defined here, it
is ``domino_agents.rllib_module.MaskedActorCritic`` however the trainer was started (``python -m``
included), so the checkpoint loads anywhere the package is installed.

The module uses RLlib's current RLModule API (``setup()`` building the networks from the keyword
arguments ``observation_space``, ``action_space``, ``model_config`` that `RLModuleSpec` passes).
RLlib 2.60 nevertheless logs "`RLModule(config=[RLModuleConfig object])` has been deprecated" the
first time any RLModule is built, its own default PPO module included: ``RLModule.__init__`` still
makes an ``RLModuleConfig`` for old subclasses, and that class is marked deprecated (ray-project/ray
issue 51630). `quiet_rllib_module_config_notice` drops exactly that record (RLlib's own call in its
rl_module.py, that message); any other deprecation, and this one logged from anywhere else, still
shows. It is installed on import, so remote env runners (which import this module to unpickle the
class) are quiet too.

Needs the `rllib` extra (ray and torch); imported only when an RLlib policy is trained or loaded.
"""
from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

try:
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module import rl_module as _rllib_rl_module
    from ray.rllib.core.rl_module.apis import ValueFunctionAPI
    from ray.rllib.core.rl_module.torch import TorchRLModule
    from torch import nn
except ImportError as exc:  # only useful with the extra; say how to get it
    raise ImportError(
        f"domino_agents.rllib_module needs the `rllib` extra ({exc}); install it with: pip install 'domino-envs[rllib]'"
    ) from exc

POLICY = "shared"  # the one module every seat plays with
MASKED_LOGIT = -1e9  # finite (not -inf): softmax stays defined even for an all-zero mask
RLLIB_MODULE_CONFIG_NOTICE = "RLModule(config=[RLModuleConfig object])"  # what RLlib's own internal notice names


class _RLlibOwnModuleConfigNotice(logging.Filter):
    """False (drop) only for RLlib's internal RLModuleConfig deprecation record (see module doc):
    logged from RLlib's own rl_module.py and naming `RLLIB_MODULE_CONFIG_NOTICE`."""

    def filter(self, record: logging.LogRecord) -> bool:
        from_rllib = Path(record.pathname).resolve() == Path(_rllib_rl_module.__file__).resolve()
        return not (from_rllib and RLLIB_MODULE_CONFIG_NOTICE in record.getMessage())


def quiet_rllib_module_config_notice() -> logging.Filter:
    """Install the filter on the logger RLlib's deprecation notices go through (once; idempotent)
    and return it."""
    source = getattr(_rllib_rl_module, "deprecation_warning", None)  # the function that logs them
    logger = logging.getLogger(getattr(source, "__module__", "ray._common.deprecation"))
    for existing in logger.filters:
        if isinstance(existing, _RLlibOwnModuleConfigNotice):
            return existing
    notice_filter = _RLlibOwnModuleConfigNotice()
    logger.addFilter(notice_filter)
    return notice_filter


quiet_rllib_module_config_notice()


def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for d_in, d_out in zip(sizes[:-2], sizes[1:-1]):
        layers += [nn.Linear(d_in, d_out), nn.Tanh()]
    layers.append(nn.Linear(sizes[-2], sizes[-1]))
    return nn.Sequential(*layers)


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """Policy and value MLPs (separate, tanh) over ``obs["observation"]``; the policy's logits of
    actions whose ``obs["action_mask"]`` is 0 are replaced by MASKED_LOGIT. ``model_config["hidden"]``
    gives the widths (default [128, 128])."""

    def setup(self):
        space = self.observation_space
        if not hasattr(space, "spaces") or not {"observation", "action_mask"} <= set(space.spaces):
            raise ValueError(f"MaskedActorCritic needs a Dict observation space with keys 'observation' and "
                             f"'action_mask'; got {space}")
        obs_dim = int(np.prod(space["observation"].shape))
        n_actions = int(self.action_space.n)
        if space["action_mask"].shape != (n_actions,):
            raise ValueError(f"action_mask shape {space['action_mask'].shape} does not match the "
                             f"{n_actions} actions of {self.action_space}")
        hidden = list((self.model_config or {}).get("hidden", [128, 128]))
        self.policy_net = _mlp([obs_dim, *hidden, n_actions])
        self.value_net = _mlp([obs_dim, *hidden, 1])

    def _forward(self, batch, **kwargs):
        obs = batch[Columns.OBS]
        logits = self.policy_net(obs["observation"].float())
        legal = obs["action_mask"].bool()
        return {Columns.ACTION_DIST_INPUTS: torch.where(legal, logits, torch.full_like(logits, MASKED_LOGIT))}

    def compute_values(self, batch, embeddings=None):
        return self.value_net(batch[Columns.OBS]["observation"].float()).squeeze(-1)


def load_module(checkpoint: str | Path) -> MaskedActorCritic:
    """The shared module of a checkpoint written by ``--out`` (no Ray needed), to act with
    `greedy_actions` or ``forward_inference``."""
    folder = Path(checkpoint).resolve()
    if not (folder / "learner_group").is_dir() and (folder / "policy" / "learner_group").is_dir():
        folder = folder / "policy"  # a run folder: its latest checkpoint
    path = folder / "learner_group" / "learner" / "rl_module" / POLICY
    if not path.is_dir():
        raise FileNotFoundError(f"{checkpoint} is not an RLlib checkpoint of domino_training.learners.rllib: no {path}")
    return MaskedActorCritic.from_checkpoint(str(path))


def greedy_actions(module: MaskedActorCritic, observations: list[dict]) -> np.ndarray:
    """The module's most likely action for each observation (our env's dict), as the trained policy
    would act at inference."""
    batch = {Columns.OBS: {
        "observation": torch.as_tensor(np.stack([o["observation"] for o in observations])),
        "action_mask": torch.as_tensor(np.stack([o["action_mask"] for o in observations])),
    }}
    with torch.no_grad():
        logits = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
    return logits.argmax(-1).numpy()
