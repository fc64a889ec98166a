"""One rules engine per game, each in its own module (see domino_envs.core for the contract)."""
