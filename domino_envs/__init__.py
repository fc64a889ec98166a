"""domino-envs: fast, rules-exact PettingZoo environments for domino games.

    import domino_envs
    env = domino_envs.make("draw_v0", num_players=3)
    from domino_envs import draw_v0
    env = draw_v0.env(num_players=3)
    venv = domino_envs.make_vec("draw_v0", 1024, seed=0)   # batched self-play (vector.py)
    env = gymnasium.make("domino_envs/draw-v0", opponents="greedy")   # one seat (gym_ids.py)
"""
from ._numba_cache import configure as _configure_numba_cache

_configure_numba_cache()

from .env import DominoEnv  # noqa: E402
from .env import make_env as make
from .errors import (  # noqa: E402
    CheckpointError,
    ConfigError,
    DealError,
    DominoError,
    IllegalActionError,
    ProtocolError,
    ReplayError,
    SamplingError,
    StateError,
)
from .gym_ids import register as _register_gym_ids  # noqa: E402
from .registry import game_names, make_game  # noqa: E402
from .version import __version__  # noqa: E402

_register_gym_ids()  # strings only: nothing is built or compiled before gymnasium.make

__all__ = [
    "CheckpointError", "ConfigError", "DealError", "DominoEnv", "DominoError", "IllegalActionError", "ProtocolError", "ReplayError",
    "SamplingError", "StateError", "VectorEnv",
    "game_names", "make", "make_game", "make_vec", "__version__",
]


def __getattr__(name: str):
    """`make_vec` and `VectorEnv` load on first use: the vector module imports every game's kernels."""
    if name in ("make_vec", "VectorEnv"):
        from . import vector

        return getattr(vector, name)
    raise AttributeError(f"module 'domino_envs' has no attribute {name!r}")
