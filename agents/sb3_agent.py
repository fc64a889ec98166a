"""A saved `sb3_contrib.MaskablePPO` model as an agent: ``make_agent("sb3:model=runs/x/sb3_model.zip", game)``.

The model file is SB3's own zip (training/sb3.py writes it). Beside it, ``<name>.json`` (written by
the same run) records the game, its config and the sizes; when present it is checked against the
game, so a model saved for another game or another rule config is refused even where the sizes
happen to agree (draw_v0 and block_v0 share them). Without it only the spaces are checked.

Acting: ``model.predict(obs, action_masks=mask, deterministic=True)``, the highest-probability legal
action. ``sample=True`` samples the masked policy instead, from the agent's own seeded Generator
(SB3's ``deterministic=False`` would draw from torch's global RNG, which this project never uses).

sb3_contrib (the ``train`` extra) is imported only when such an agent is built, so the registry
stays importable without it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .trained import CheckpointError, SampledAgent, check_meta, read_description

META_FORMAT = "domino-envs-sb3-model/1"


def meta_path(model_path: str | Path) -> Path:
    """sb3_model.zip -> sb3_model.json (where training/sb3.py records the game of a model)."""
    return Path(model_path).with_suffix(".json")


class SB3Agent(SampledAgent):
    """A MaskablePPO model playing `game` (see module doc)."""

    name = "sb3"

    def __init__(self, game, seed: int | None = None, model: str = "", sample: bool = False):
        if not model:
            raise CheckpointError("sb3 agent needs model=PATH (a MaskablePPO .zip saved by domino_training.sb3)")
        path = Path(model)
        if not path.is_file():
            raise CheckpointError(f"sb3 model file {str(path)!r} does not exist")
        where = f"sb3 model {str(path)!r}"
        info = meta_path(path)
        if info.is_file():
            check_meta(read_description(info, META_FORMAT, where), game, where)
        try:
            from sb3_contrib import MaskablePPO
        except ImportError as err:
            raise CheckpointError(f"{where}: sb3_contrib is not installed ({err}); pip install 'domino-envs[train]'") from None
        try:
            self.model = MaskablePPO.load(path, device="cpu")
        except Exception as err:  # zip, pickle, key errors: all mean "not a MaskablePPO model"
            raise CheckpointError(f"{where} is not a readable MaskablePPO model ({type(err).__name__}: {err})") from None
        obs_shape = getattr(self.model.observation_space, "shape", None)
        n_actions = getattr(self.model.action_space, "n", None)
        problems = []
        if obs_shape != (game.obs_size,):
            problems.append(f"observation shape {obs_shape} vs {(game.obs_size,)}")
        if n_actions != game.num_actions:
            problems.append(f"{n_actions} actions vs {game.num_actions}")
        if problems:
            raise CheckpointError(f"{where} does not fit {game.name}: " + "; ".join(problems))
        super().__init__(game, seed, sample)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = self.legal_of(action_mask)
        obs = np.asarray(observation, dtype=np.float32)
        if not self.sample:
            action, _ = self.model.predict(obs, action_masks=legal, deterministic=True)
            return int(action)
        import torch

        policy = self.model.policy
        with torch.no_grad():
            obs_t, _ = policy.obs_to_tensor(obs)
            probs = policy.get_distribution(obs_t, action_masks=legal[None, :]).distribution.probs[0].double().numpy()
        probs[~legal] = 0.0
        return int(self._rng.choice(probs.size, p=probs / probs.sum()))
