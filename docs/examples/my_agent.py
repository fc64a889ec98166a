"""An example of a user's own agent, in one file: an agent is a class; one `register_agent` call names
it; every command that takes agent specs then plays it.

The agent: the legal move that sheds the most pips (the game's action table says what each action
sheds), ties broken at random by its own seeded generator; with ``epsilon`` > 0 it plays a uniformly
random legal move that often instead, so ``my_agent:epsilon=0.1`` shows a spec setting a parameter.

    domino evaluate --import docs/examples/my_agent.py --game draw_v0 --agents my_agent random --deals 20
    domino play draw_v0 --vs my_agent:epsilon=0.1 --import docs/examples/my_agent.py
    python docs/examples/my_agent.py             # the same evaluation from Python

What makes it an agent (agents/base.py): ``__init__(game, seed=None, **params)`` (the spec's keys are
its keyword parameters), ``reset(seed)`` at each hand (the fronts seed every hand, so results repeat),
and ``act(observation, action_mask) -> action id``, a legal one. It reads only what the fronts give
every seat: its observation and the legal moves.
"""
from __future__ import annotations

import numpy as np

from domino_agents import register_agent


class HighestPipAgent:
    """The legal move that sheds the most pips; ties (and an ``epsilon`` share of moves) at random."""

    name = "my_agent"

    def __init__(self, game, seed: int | None = None, epsilon: float = 0.0):
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"my_agent: epsilon={epsilon!r} must be in [0, 1]")
        self.weight = game.action_table().weight  # pips (penalty) each action id sheds
        self.epsilon = float(epsilon)
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        legal = np.flatnonzero(action_mask)
        if self.epsilon and self.rng.random() < self.epsilon:
            return int(self.rng.choice(legal))
        best = legal[self.weight[legal] == self.weight[legal].max()]
        return int(self.rng.choice(best))


register_agent("my_agent", HighestPipAgent)


if __name__ == "__main__":
    from domino_training.evaluate import evaluate

    print(evaluate("draw_v0", ["my_agent", "random"], deals=20).table())
