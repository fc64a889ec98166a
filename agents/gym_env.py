"""What gymnasium's ids build (domino_envs/gym_ids.py): SingleSeatEnv with opponents given by agent spec.

It lives here, not in domino_envs, because an opponent spec such as "heuristic" or "trained" is
resolved by this layer's registry; domino_envs only names this function in its entry-point string.
"""
from __future__ import annotations

from domino_envs.errors import ConfigError, DominoError
from domino_envs.registry import make_game
from domino_envs.wrappers import SingleSeatEnv

from .registry import make_agent


def single_seat_env(game: str, opponents="random", seat: int | str = "rotate", seed: int | None = None,
                    render_mode: str | None = None, illegal_action: str = "raise", illegal_reward: float = -1.0,
                    **config) -> SingleSeatEnv:
    """SingleSeatEnv for the env name `game` built with the rule keys `config` (see gym_ids for every
    keyword); ConfigError naming an unknown rule key, a bad opponent spec or a bad option."""
    engine = make_game(game, **config)
    return SingleSeatEnv(engine, _opponents(engine, opponents), seat=seat, seed=seed, render_mode=render_mode,
                         illegal_action=illegal_action, illegal_reward=illegal_reward)


def _opponents(game, opponents):
    """An agent class passes through (SingleSeatEnv builds one per other seat); a spec string is one
    agent per other seat; a list may mix specs and agents, one per other seat (SingleSeatEnv checks
    the count)."""
    if isinstance(opponents, type):
        return opponents
    if isinstance(opponents, str):
        return [_agent(game, opponents, k) for k in range(game.num_players - 1)]
    if isinstance(opponents, (list, tuple)):
        return [_agent(game, o, k) if isinstance(o, str) else _checked(game, o) for k, o in enumerate(opponents)]
    raise ConfigError(f"{game.name}: opponents={opponents!r} must be an agent spec such as 'random', 'greedy', "
                      f"'heuristic' or 'trained', a list with one spec or agent per other seat, or an agent class")


def _agent(game, spec: str, seat_index: int):
    """One opponent from a spec; the registry's ValueError becomes a ConfigError naming the key."""
    try:
        return make_agent(spec, game, seed=seat_index)
    except DominoError:
        raise
    except ValueError as err:
        raise ConfigError(f"{game.name}: opponents={spec!r}: {err}") from None


def _checked(game, agent):
    """An agent object given in a list: it must follow the Agent protocol (reset and act)."""
    if not (callable(getattr(agent, "act", None)) and callable(getattr(agent, "reset", None))):
        raise ConfigError(f"{game.name}: opponents entry {agent!r} is neither an agent spec nor an agent "
                          f"(an object with reset(seed) and act(observation, action_mask))")
    return agent
