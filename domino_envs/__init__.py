"""domino-envs: fast, rules-exact PettingZoo environments for domino games.

    import domino_envs
    env = domino_envs.make("draw_v0", num_players=3)
    from domino_envs import draw_v0
    env = draw_v0.env(num_players=3)
"""
from ._numba_cache import configure as _configure_numba_cache

_configure_numba_cache()

from .core import ConfigError, DealError, DominoError, IllegalActionError  # noqa: E402
from .env import DominoEnv, make_env as make
from .registry import game_names, make_game

__version__ = "0.1.0"

__all__ = [
    "ConfigError", "DealError", "DominoEnv", "DominoError", "IllegalActionError",
    "game_names", "make", "make_game", "__version__",
]
