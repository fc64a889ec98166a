"""A policy trained by Ray RLlib (training/learners/rllib.py) as an agent: ``rllib:checkpoint=DIR``.

DIR is a checkpoint folder of the rllib learner (``policy_<mark>/`` in its run folder), or the run
folder itself (``python -m domino_training.learners.rllib --out DIR``, ``domino train --learner rllib``),
which plays its latest checkpoint (``policy/``). Beside RLlib's own files it holds ``domino_policy.npz``: the shared module's policy
network as plain arrays in the project's policy format (tanh between layers), with the game, its
config and the sizes, checked against the game the agent is made for (a checkpoint of another game
or rule config is a `CheckpointError` naming each difference). Acting is that network's masked
logits: the most likely legal action, or (``sample=True``) a sample from the agent's own seeded
Generator.

Only that file is read, without pickle: RLlib's own loader (``from_checkpoint``) unpickles
``module_state.pkl`` and ``class_and_ctor_args.pkl``, so a crafted checkpoint would run code there;
this agent never calls it, and needs neither Ray nor torch.
"""
from __future__ import annotations

from pathlib import Path

from .trained import CheckpointError, PolicyAgent

META_FILE = "domino_policy.json"  # the game and sizes, for the trainer's --restore check
META_FORMAT = "domino-envs-rllib-policy/1"
POLICY_FILE = "domino_policy.npz"  # the policy network as arrays: what the agent plays


class RLlibAgent(PolicyAgent):
    """The policy network exported beside an RLlib checkpoint, playing `game` (see module doc)."""

    name = "rllib"

    def __init__(self, game, seed: int | None = None, checkpoint: str = "", sample: bool = False):
        if not checkpoint:
            raise CheckpointError("rllib agent needs checkpoint=DIR (a folder written by domino_training.learners.rllib "
                                  "--out)")
        folder = Path(checkpoint)
        if not (folder / POLICY_FILE).is_file() and (folder / "policy" / POLICY_FILE).is_file():
            folder = folder / "policy"  # a run folder of the rllib learner: its latest checkpoint
        if not (folder / POLICY_FILE).is_file():
            raise CheckpointError(
                f"rllib checkpoint {str(folder)!r} has no {POLICY_FILE} (the policy's weights as plain arrays, "
                f"written beside every checkpoint; RLlib's own files are never unpickled): not a checkpoint of "
                f"domino_training.learners.rllib --out, or one saved before the export (restore and save it again: "
                f"python -m domino_training.learners.rllib --restore DIR --iterations 1 --out NEW)")
        super().__init__(game, seed, checkpoint=str(folder / POLICY_FILE), sample=sample)
