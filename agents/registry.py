"""Agents by name: `make_agent("pimc:n=16,rollout=greedy", game, seed)`.

Trained policies: ``ppo:checkpoint=PATH`` (a policy file a training run exported), ``dmc:checkpoint=PATH``
(a DMC Q-network, greedy over the legal Q-values) and ``trained``
(the policy shipped for the game); ``sb3:model=PATH`` for a saved MaskablePPO model;
``rllib:checkpoint=DIR`` for a policy trained by Ray RLlib (training/learners/rllib.py);
``tabular:path=FILE`` for a tabular policy (CFR+ on a small config, domino_training.exploit).

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


def _lazy(module: str, attribute: str):
    """The agent class (or factory) `attribute` of domino_agents.`module`, imported when first asked for,
    so the registry stays importable without what those agents need (numba kernels, torch, ray)."""
    def target(game):
        import importlib

        return getattr(importlib.import_module(f"domino_agents.{module}"), attribute)

    return target


def _heuristic_class(game):
    from .heuristics import heuristic_class

    return heuristic_class(game)


# name -> the class or factory for a game (called as target(game, seed=seed, **params)); its
# signature is what a spec may set
AGENTS = {
    "random": lambda game: RandomAgent,
    "greedy": lambda game: GreedyAgent,
    "heuristic": _heuristic_class,                  # the game's own heuristic class
    "pimc": _lazy("pimc", "PIMCAgent"),
    "ppo": _lazy("trained", "PolicyAgent"),          # ppo:checkpoint=PATH[,sample=true]: a policy file written by training
    "dmc": _lazy("trained", "QPolicyAgent"),         # dmc:checkpoint=PATH: a Q-network (training/learners/dmc.py), greedy over legal Q
    "trained": _lazy("trained", "shipped_agent"),    # the policy shipped for the game (agents/checkpoints/<env>.npz)
    "sb3": lambda game: SB3Agent,                    # sb3:model=PATH[,sample=true]: a MaskablePPO zip saved by domino_training.learners.sb3
    "rllib": _lazy("rllib_agent", "RLlibAgent"),     # rllib:checkpoint=DIR[,sample=true]: domino_training.learners.rllib --out
    "tabular": _lazy("tabular", "TabularAgent"),     # tabular:path=FILE: a CFR+ policy file of a small config (domino_training.exploit)
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
    target = AGENTS[name](game)
    allowed = [p for p in inspect.signature(target.__init__ if inspect.isclass(target) else target).parameters
               if p not in ("self", "game", "seed")]
    unknown = [k for k in params if k not in allowed]
    if unknown:
        raise ValueError(f"agent spec {spec!r}: unknown parameter(s) {unknown}; allowed for {name} on "
                         f"{game.name}: {allowed}")
    return target(game, seed=seed, **params)
