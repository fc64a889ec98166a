"""Agents by name: `make_agent("pimc:n=16,rollout=greedy", game, seed)`.

Trained policies: ``mlp:checkpoint=PATH`` (a policy file in the MLP format of agents/trained.py, what
every training run exports; ``ppo:`` is its old name, kept as an alias), ``dmc:checkpoint=PATH``
(a DMC Q-network, greedy over the legal Q-values) and ``trained``
(the policy shipped for the game); ``sb3:model=PATH`` for a saved MaskablePPO model;
``rllib:checkpoint=DIR`` for a policy trained by Ray RLlib (training/learners/rllib.py);
``tabular:path=FILE`` for a tabular policy (CFR+ on a small config, domino_training.exploit);
``llm:model=M,base_url=URL,api_key_env=VAR,...`` for a language model (agents/llm.py, docs/llm.md; a spec
carrying a key is refused here, before any message could echo it).

A spec is ``name`` or ``name:key=value,key=value``; values are parsed as int, float, bool
(true/false) or left as strings, and passed to the agent's constructor as keyword arguments, so
every documented constructor parameter is settable from the command line. Unknown names and
unknown keys fail with a message listing what is allowed.

Your own agent: ``register_agent("my_agent", MyAgent)`` (docs/examples/my_agent.py) makes
``my_agent:key=value`` a spec like these, so every command and function that takes agent specs plays
it; a command's ``--import FILE`` runs that call first, in its workers too.
"""
from __future__ import annotations

import inspect

from domino_envs.errors import ConfigError
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
    "mlp": _lazy("trained", "PolicyAgent"),          # mlp:checkpoint=PATH[,sample=true]: a policy file written by training
    "dmc": _lazy("trained", "QPolicyAgent"),         # dmc:checkpoint=PATH: a Q-network (training/learners/dmc.py), greedy over legal Q
    "trained": _lazy("trained", "shipped_agent"),    # the policy shipped for the game (agents/checkpoints/<env>.npz)
    "sb3": lambda game: SB3Agent,                    # sb3:model=PATH[,sample=true]: a MaskablePPO zip saved by domino_training.learners.sb3
    "rllib": _lazy("rllib_agent", "RLlibAgent"),     # rllib:checkpoint=DIR[,sample=true]: domino_training.learners.rllib --out
    "tabular": _lazy("tabular", "TabularAgent"),     # tabular:path=FILE: a CFR+ policy file of a small config (domino_training.exploit)
    "llm": _lazy("llm", "llm_agent"),                # llm:model=M,base_url=URL,api_key_env=VAR,...: a language model (agents/llm.py)
}
# old name -> its name now: the same entry, so older commands and run files still load; parse_spec gives the new
ALIASES = {"ppo": "mlp"}
for _old, _new in ALIASES.items():
    AGENTS[_old] = AGENTS[_new]

NAME_FORBIDDEN = ":,=@/"  # the spec's separators, and --pairs' FOCAL@OPPONENT / FOCAL/OPPONENT


def register_agent(name: str, factory, replace: bool = False) -> None:
    """Make ``make_agent("name:key=value", game, seed)`` build a user's agent, so every front that takes
    agent specs plays it. `factory` is the agent class (used for every game) or, as in AGENTS, a
    function game -> class or callable, called as target(game, seed=seed, **params): its signature
    says which spec keys are allowed. ConfigError for a bad name, a taken one (unless `replace`), a
    factory that is not callable or a class that cannot be called as cls(game, seed=seed)."""
    if not isinstance(name, str) or not name or any(c in NAME_FORBIDDEN or c.isspace() for c in name):
        raise ConfigError(f"agent name {name!r} is not allowed: a name is one non-empty word without whitespace "
                          f"or any of {' '.join(NAME_FORBIDDEN)} (they separate specs), e.g. 'my_agent'")
    if not callable(factory):
        raise ConfigError(f"agent {name!r}: the factory {factory!r} is not callable; pass the agent class, or a "
                          f"function game -> class called as cls(game, seed=seed, **params)")
    if inspect.isclass(factory):
        try:
            inspect.signature(factory).bind(None, seed=None)
        except TypeError:
            raise ConfigError(f"agent {name!r}: {factory.__name__}{inspect.signature(factory)} cannot be called as "
                              f"{factory.__name__}(game, seed=seed, **params); give its constructor (game, seed=None, "
                              f"...keyword parameters...)") from None
        except ValueError:  # a signature inspect cannot read: left to make_agent
            pass
    if name in AGENTS and not replace:
        raise ConfigError(f"agent name {name!r} is already registered; pick another name (taken: {agent_names()}) "
                          f"or pass replace=True to replace it")
    AGENTS[name] = (lambda game: factory) if inspect.isclass(factory) else factory


def agent_names() -> list[str]:
    return list(AGENTS)


def parse_spec(spec: str) -> tuple[str, dict]:
    """'name:k=v,k=v' -> (name, {k: v}), an old name given as its new one (ALIASES: ppo -> mlp); ValueError
    naming the problem and the allowed form."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec {spec!r} is empty; use NAME or NAME:key=value,... with NAME in {agent_names()}")
    name, _, rest = spec.strip().partition(":")
    if name == "llm":  # a key in an llm: spec is refused before any message could echo the spec
        from .llm import refuse_keys, spec_items

        refuse_keys(spec_items(spec))
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; known agents: {agent_names()}")
    params = {}
    if rest:
        for item in rest.split(","):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"agent spec {spec!r}: {item!r} is not key=value")
            params[key.strip()] = config_value(value.strip())
    return ALIASES.get(name, name), params


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
