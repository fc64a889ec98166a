"""The learners: our PPO (with imitation and search distillation), deep Monte-Carlo, SB3's MaskablePPO
and RLlib's PPO, the opponent pool they train against, and the `domino train` driver.

Inside this package (lower modules first): network, pool, checkpoint < imitate, distill < ppo, dmc, sb3, rllib <
interface (the learner registry) < train (the `domino train` driver). The names a user imports are
re-exported here: ``from domino_training.learners import LearnerRun, register_learner, train_learner``.
"""
from domino_training.learners.interface import (
    LEARNERS,
    LearnerError,
    LearnerRun,
    PointLog,
    PolicyPoint,
    dmc_settings,
    learner_names,
    register_learner,
    train_learner,
)

__all__ = ["LEARNERS", "LearnerError", "LearnerRun", "PointLog", "PolicyPoint", "dmc_settings", "learner_names",
           "register_learner", "train_learner"]
