"""The agent registry (agents/registry.py): `register_agent` makes a user's class an agent spec and
refuses bad names and factories, naming the value and what is allowed; `mlp:` and its old name
`ppo:` are one entry; docs/examples/my_agent.py registers its agent with one call."""
from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import domino_agents
from domino_agents import registry
from domino_agents.trained import PolicyAgent, policy_meta, save_policy
from domino_envs.errors import ConfigError, DominoError
from domino_envs.registry import make_game
from domino_training.evaluate import evaluate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "my_agent.py"


@pytest.fixture(autouse=True)
def own_registry(monkeypatch):
    """Each test registers into a copy: the registry is as it was after the test."""
    monkeypatch.setattr(registry, "AGENTS", dict(registry.AGENTS))


class LowestFirst:
    """The lowest legal action id, or the highest with reverse=true."""

    def __init__(self, game, seed=None, reverse: bool = False):
        self.reverse = reverse

    def reset(self, seed=None):
        pass

    def act(self, observation, action_mask):
        legal = np.flatnonzero(action_mask)
        return int(legal[-1] if self.reverse else legal[0])


def test_a_registered_class_is_a_spec_with_its_keyword_parameters():
    game = make_game("draw_v0")
    domino_agents.register_agent("lowest", LowestFirst)
    assert "lowest" in domino_agents.agent_names()
    agent = domino_agents.make_agent("lowest:reverse=true", game, seed=3)
    assert isinstance(agent, LowestFirst) and agent.reverse is True
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['depth'\]; allowed for lowest on draw_v0: \['reverse'\]"):
        domino_agents.make_agent("lowest:depth=2", game)
    report = evaluate("draw_v0", ["lowest", "lowest:reverse=true"], 3, seed=0)  # the harness builds it by name
    assert report.matchups[("lowest", "lowest:reverse=true")].win.shape == (3,)


def test_a_factory_follows_the_registry_contract():
    """A function game -> class (as the AGENTS entries are) picks the class per game."""
    seen = []

    def factory(game):
        seen.append(game.name)
        return LowestFirst

    registry.register_agent("per_game", factory)
    assert registry.AGENTS["per_game"] is factory
    assert isinstance(registry.make_agent("per_game", make_game("sum7_v0")), LowestFirst) and seen == ["sum7_v0"]


@pytest.mark.parametrize("name,shown", [
    ("", "''"), ("my:agent", "'my:agent'"), ("a,b", "'a,b'"), ("k=v", "'k=v'"), ("two words", "'two words'"),
    ("tab\there", "'tab\\\\there'"), ("x@y", "'x@y'"), ("x/y", "'x/y'"), (None, "None"), (7, "7"),
])
def test_a_bad_name_is_refused_naming_it_and_what_is_allowed(name, shown):
    with pytest.raises(ConfigError, match=rf"agent name {shown} is not allowed: a name is one non-empty word "
                                          r"without whitespace or any of : , = @ /"):
        registry.register_agent(name, LowestFirst)
    assert name not in registry.AGENTS


def test_a_taken_name_is_refused_unless_replace_is_passed():
    before = registry.AGENTS["greedy"]
    with pytest.raises(ConfigError, match=r"agent name 'greedy' is already registered; pick another name "
                                          r"\(taken: \[.*'greedy'.*\]\) or pass replace=True"):
        registry.register_agent("greedy", LowestFirst)
    assert registry.AGENTS["greedy"] is before
    registry.register_agent("mine", LowestFirst)
    with pytest.raises(ConfigError, match="'mine' is already registered"):
        registry.register_agent("mine", LowestFirst)  # the user's own names too
    registry.register_agent("greedy", LowestFirst, replace=True)
    assert isinstance(registry.make_agent("greedy", make_game("draw_v0")), LowestFirst)


@pytest.mark.parametrize("factory", [None, "LowestFirst", LowestFirst(None)], ids=["None", "a string", "an instance"])
def test_a_factory_that_is_not_callable_is_refused(factory):
    with pytest.raises(ConfigError, match=rf"agent 'mine': the factory {factory!r} is not callable; pass the agent "
                                          r"class, or a function game -> class"):
        registry.register_agent("mine", factory)
    assert "mine" not in registry.AGENTS


def test_a_class_that_cannot_take_game_and_seed_is_refused():
    class NoSeed:
        def __init__(self, game):
            pass

    with pytest.raises(ConfigError, match=r"agent 'mine': NoSeed\(game\) cannot be called as "
                                          r"NoSeed\(game, seed=seed, \*\*params\)"):
        registry.register_agent("mine", NoSeed)
    assert "mine" not in registry.AGENTS


def test_refusals_are_domino_errors_and_value_errors():
    with pytest.raises(DominoError):
        registry.register_agent("a b", LowestFirst)
    with pytest.raises(ValueError):  # what the commands catch for a one-line error
        registry.register_agent("a b", LowestFirst)


# ------------------------------------------------------------------------------ mlp: and ppo:
def policy_file(path, game, seed=0):
    rng = np.random.default_rng(seed)
    layers = [(rng.normal(size=(16, game.obs_size)), rng.normal(size=16)),
              (rng.normal(size=(game.num_actions, 16)), rng.normal(size=game.num_actions))]
    return save_policy(path, layers, policy_meta(game, [16], "test", 0))


def test_ppo_is_the_old_name_of_mlp_one_entry():
    assert registry.AGENTS["ppo"] is registry.AGENTS["mlp"]
    assert "mlp:checkpoint=PATH" in registry.__doc__ and "``ppo:`` is its old name" in registry.__doc__


@pytest.mark.parametrize("sample", ["false", "true"])
def test_mlp_and_ppo_build_the_same_policy_and_play_identically(tmp_path, sample):
    game = make_game("sum7_v0")
    path = policy_file(tmp_path / "p.npz", game)
    mlp = registry.make_agent(f"mlp:checkpoint={path},sample={sample}", game, seed=5)
    ppo = registry.make_agent(f"ppo:checkpoint={path},sample={sample}", game, seed=5)
    assert type(mlp) is type(ppo) is PolicyAgent and mlp.name == "mlp"
    assert mlp.meta == ppo.meta and all(np.array_equal(a, b) for la, lb in zip(mlp.layers, ppo.layers)
                                        for a, b in zip(la, lb))
    reports = [evaluate("sum7_v0", [f"{name}:checkpoint={path},sample={sample}", "random"], 6, seed=2)
               for name in ("mlp", "ppo")]
    (a,), (b,) = ([m for k, m in r.matchups.items() if k[1] == "random"] for r in reports)
    assert np.array_equal(a.win, b.win) and np.array_equal(a.reward, b.reward)


# ------------------------------------------------------------------------------ the example
def test_the_example_registers_its_agent_with_one_call():
    calls = [node for node in ast.walk(ast.parse(EXAMPLE.read_text())) if isinstance(node, ast.Call)
             and getattr(node.func, "id", getattr(node.func, "attr", None)) == "register_agent"]
    assert len(calls) == 1 and [ast.literal_eval(calls[0].args[0])] == ["my_agent"]
    before = set(registry.AGENTS)
    spec = importlib.util.spec_from_file_location("my_agent_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert set(registry.AGENTS) - before == {"my_agent"}
    for name in ("draw_v0", "magic7_v0"):
        game = make_game(name)
        agent = registry.make_agent("my_agent:epsilon=0.25", game, seed=1)
        assert isinstance(agent, module.HighestPipAgent) and agent.epsilon == 0.25
    with pytest.raises(ValueError, match=r"epsilon=2 must be in \[0, 1\]"):
        registry.make_agent("my_agent:epsilon=2", make_game("draw_v0"))
