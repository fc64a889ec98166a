"""A policy trained by Ray RLlib (training/learners/rllib.py, module in rllib_module.py) as an agent: ``rllib:checkpoint=DIR``.

DIR is the checkpoint folder ``python -m domino_training.learners.rllib --out DIR`` writes. Beside RLlib's own
files it holds ``domino_policy.json`` (the game, its config and the sizes), checked against the game
the agent is made for, so a checkpoint trained on another game or rule config is refused with a
`CheckpointError` naming each difference. Acting is the shared module's masked logits: the most
likely legal action, or (``sample=True``) a sample from the agent's own seeded Generator.

Loading needs the `rllib` extra (ray and torch), imported only when such an agent is built; Ray
itself is not started.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .trained import CheckpointError, SampledAgent, check_meta, read_description

META_FILE = "domino_policy.json"
META_FORMAT = "domino-envs-rllib-policy/1"


class RLlibAgent(SampledAgent):
    """The shared module of an RLlib checkpoint playing `game` (see module doc)."""

    name = "rllib"

    def __init__(self, game, seed: int | None = None, checkpoint: str = "", sample: bool = False):
        if not checkpoint:
            raise CheckpointError("rllib agent needs checkpoint=DIR (a folder written by domino_training.learners.rllib --out)")
        folder = Path(checkpoint)
        where = f"rllib checkpoint {str(folder)!r}"
        info = folder / META_FILE
        if not info.is_file():
            raise CheckpointError(f"{where} has no {META_FILE}: not a checkpoint written by domino_training.learners.rllib --out")
        check_meta(read_description(info, META_FORMAT, where), game, where)
        try:
            import torch

            from .rllib_module import load_module
        except ImportError as err:
            raise CheckpointError(f"{where}: the rllib extra is not installed ({err}); "
                                  f"pip install 'domino-envs[rllib]'") from None
        try:
            self.module = load_module(folder)
        except Exception as err:  # RLlib's own loading errors: all mean "not a usable checkpoint"
            raise CheckpointError(f"{where} does not load ({type(err).__name__}: {err})") from None
        self._torch = torch
        super().__init__(game, seed, sample)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = self.legal_of(action_mask)
        with self._torch.no_grad():
            obs = self._torch.as_tensor(np.asarray(observation, dtype=np.float32))[None, :]
            return self.pick(self.module.policy_net(obs)[0].numpy(), legal)
