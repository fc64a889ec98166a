"""Gymnasium ids for every game, registered on ``import domino_envs``:

    import gymnasium, domino_envs
    env = gymnasium.make("domino_envs/draw-v0", opponents="greedy", num_players=3)

Each env name ``<game>_v<N>`` of registry.GAMES becomes the id ``domino_envs/<game>-v<N>`` (the
id's version is the env's own suffix, so a rules change that bumps ``draw_v0`` to ``draw_v1``
bumps the id too). An id makes the single-seat view (wrappers.SingleSeatEnv): the learner plays
one seat, fixed opponents play the others inside ``step``, which is what a gymnasium learner
expects; ``env.action_masks()`` and ``info["action_mask"]`` give the legal actions.

``gymnasium.make`` keyword arguments (all optional):

- ``opponents``: an agent spec for every other seat ("random", the default, "greedy",
  "heuristic", "trained", "pimc:n=8", ...: any domino_agents.registry spec), a list with one
  spec or agent per other seat, or an agent class (built once per other seat);
- ``seat`` (a seat, or "rotate", the default), ``seed``, ``render_mode``, ``illegal_action``,
  ``illegal_reward``: as SingleSeatEnv;
- any rule key of the game (``num_players=3``, ``target=50``, ...).

A bad key or value raises ConfigError naming it.

Registering is cheap: it records strings. gymnasium's ``entry_point`` is a lazy "module:function"
string, so no game is built and no kernel compiled before ``gymnasium.make``. The function it
names, domino_agents.gym_env.single_seat_env, lives one layer up because opponents given by spec
need the agent registry; this module names it as data and imports nothing above domino_envs.
"""
from __future__ import annotations

from .errors import ConfigError
from .registry import GAMES, game_names

NAMESPACE = "domino_envs"
ENTRY_POINT = "domino_agents.gym_env:single_seat_env"


def gym_id(name: str) -> str:
    """The gymnasium id of a registered env name: ``draw_v0`` -> ``domino_envs/draw-v0``."""
    if name not in GAMES:
        raise ConfigError(f"unknown game {name!r}; registered games: {game_names()}")
    base, sep, version = name.rpartition("_v")
    if not sep or not base or not version.isdigit():
        raise ConfigError(f"env name {name!r} does not end in _v<N>, which the gymnasium id's version follows")
    return f"{NAMESPACE}/{base}-v{version}"


def gym_ids() -> dict[str, str]:
    """Env name -> gymnasium id, for every registered game."""
    return {name: gym_id(name) for name in game_names()}


def register() -> None:
    """Register every id with gymnasium (once: ids already there are left alone, so a second call or
    a reload does not trigger gymnasium's "overriding environment" warning)."""
    from gymnasium.envs.registration import register as gym_register
    from gymnasium.envs.registration import registry

    for name, env_id in gym_ids().items():
        if env_id not in registry:
            gym_register(id=env_id, entry_point=ENTRY_POINT, kwargs={"game": name})
