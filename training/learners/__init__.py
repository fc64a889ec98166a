"""The learners: our PPO (with imitation and search distillation), deep Monte-Carlo, SB3's MaskablePPO
and RLlib's PPO, the opponent pool they train against, the run folder and the one driver.

Inside this package (lower modules first): network, pool, checkpoint, run_folder < interface (the
contract, the learner registry and the one driver, train_learner) < imitate, distill, sb3 < ppo, dmc,
rllib (each learner whole: its settings, check, train and register_learner call; the registry imports
a built-in's module on first use; each settings section lives with what reads it, and ppo.py's
TrainConfig gathers the ppo learners' sections) < train and rllib_command (the
`domino train` command and the RLlib command, fronts of that driver). The names a user imports are
re-exported here: ``from domino_training.learners import LearnerRun, register_learner, train_learner``.
"""
from domino_training.learners.interface import (
    LEARNERS,
    Evaluation,
    LearnerError,
    LearnerRun,
    PointLog,
    PolicyPoint,
    learner_names,
    learner_settings,
    params_table,
    register_learner,
    train_learner,
)

__all__ = ["Evaluation", "LEARNERS", "LearnerError", "LearnerRun", "PointLog", "PolicyPoint",
           "learner_names", "learner_settings", "params_table", "register_learner", "train_learner"]
