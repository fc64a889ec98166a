"""Training, evaluation and the command-line jobs built on domino_envs and agents."""
