"""The game configs (one YAML file per game), installed as the package data domino_training.game_configs
so that a wheel install finds them; read by domino_training/configs.py."""
