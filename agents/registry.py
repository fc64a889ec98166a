"""Agents by name: `make_agent("pimc:n=16,rollout=greedy", game, seed)`.

Trained policies: ``ppo:checkpoint=PATH`` (a policy file a training run exported) and ``trained``
(the policy shipped for the game); ``sb3:model=PATH`` for a saved MaskablePPO model.

A spec is ``name`` or ``name:key=value,key=value``; values are parsed as int, float, bool
(true/false) or left as strings, and passed to the agent's constructor as keyword arguments, so
every documented constructor parameter is settable from the command line. Unknown names and
unknown keys fail with a message listing what is allowed.
"""
from __future__ import annotations

import inspect

from domino_envs.registry import config_value

from .greedy import GreedyAgent
from .random_agent import RandomAgent
from .sb3_agent import SB3Agent


def _heuristic(game, seed=None, **params):
    from .heuristics import make_heuristic

    return make_heuristic(game, seed=seed, **params)


def _pimc(game, seed=None, **params):
    from .pimc import PIMCAgent

    return PIMCAgent(game, seed=seed, **params)


def _ppo(game, seed=None, **params):
    from .trained import PolicyAgent

    return PolicyAgent(game, seed=seed, **params)


def _trained(game, seed=None, **params):
    from .trained import shipped_agent

    return shipped_agent(game, seed=seed, **params)


def _heuristic_params(game):
    from .heuristics import heuristic_class

    return heuristic_class(game)


AGENTS = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "heuristic": _heuristic,
    "pimc": _pimc,
    "ppo": _ppo,          # ppo:checkpoint=PATH[,sample=true]: a policy file written by training
    "trained": _trained,  # the policy shipped for the game (agents/checkpoints/<env>.npz)
    "sb3": SB3Agent,      # sb3:model=PATH[,sample=true]: a MaskablePPO zip saved by training.sb3
}


def agent_names() -> list[str]:
    return list(AGENTS)


def parse_spec(spec: str) -> tuple[str, dict]:
    """'name:k=v,k=v' -> (name, {k: v}); ValueError naming the problem and the allowed form."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec {spec!r} is empty; use NAME or NAME:key=value,... with NAME in {agent_names()}")
    name, _, rest = spec.strip().partition(":")
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; known agents: {agent_names()}")
    params = {}
    if rest:
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"agent spec {spec!r}: {item!r} is not key=value")
            params[key.strip()] = config_value(value.strip())
    return name, params


def make_agent(spec: str, game, seed: int | None = None):
    """An agent for `game` from a spec string (see module doc)."""
    name, params = parse_spec(spec)
    factory = AGENTS[name]
    target = factory
    if name == "heuristic":
        target = _heuristic_params(game)
    elif name == "pimc":
        from .pimc import PIMCAgent

        target = PIMCAgent
    elif name == "ppo":
        from .trained import PolicyAgent

        target = PolicyAgent
    elif name == "trained":
        from .trained import shipped_agent

        target = shipped_agent
    allowed = [p for p in inspect.signature(target.__init__ if inspect.isclass(target) else target).parameters
               if p not in ("self", "game", "seed")]
    unknown = [k for k in params if k not in allowed]
    if unknown:
        raise ValueError(f"agent spec {spec!r}: unknown parameter(s) {unknown}; allowed for {name} on "
                         f"{game.name}: {allowed}")
    return factory(game, seed=seed, **params)
