"""`make demo`: a seeded tournament of the available agents on the Draw Game, printed as a table.

Until a trained agent exists this is the main job: every pair of agents plays the same seeded
deals with seats swapped (duplicate deals), and the table reports wins and mean reward per hand.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

import domino_envs
from agents import RandomAgent

DEALS = 500


def play_hand(env, agents, seed):
    """One hand on a fixed seed; returns each seat's total reward."""
    env.reset(seed=seed)
    for i, a in enumerate(agents):
        a.reset(seed * 1000 + 17 * i + sum(map(ord, a.label)))
    totals = {name: 0.0 for name in env.possible_agents}
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = int(name.split("_")[1])
        env.step(agents[seat].act(obs["observation"], obs["action_mask"]))
        for k, r in env.rewards.items():
            totals[k] += r
    return [totals[n] for n in env.possible_agents]


def _labelled(agent, label):
    agent.label = label
    return agent


def main(deals: int = DEALS) -> None:
    env = domino_envs.make("draw_v0")
    pool = {"random-a": lambda: _labelled(RandomAgent(), "a"), "random-b": lambda: _labelled(RandomAgent(), "b")}
    print(f"Draw Game, 2 players: {deals} duplicate deals per pairing (seats swapped)\n")
    print(f"{'agent':<10} {'vs':<10} {'win rate':>9} {'95% CI':>17} {'mean reward':>12}")
    for a, b in itertools.permutations(pool, 2):
        wins, rewards = [], []
        for deal in range(deals):
            for seat_a in (0, 1):
                seats = [pool[a](), pool[b]()] if seat_a == 0 else [pool[b](), pool[a]()]
                r = play_hand(env, seats, seed=deal)
                mine, theirs = r[seat_a], r[1 - seat_a]
                wins.append(1.0 if mine > theirs else 0.5 if mine == theirs else 0.0)
                rewards.append(mine)
        w = float(np.mean(wins))
        half = 1.96 * math.sqrt(max(w * (1 - w), 1e-12) / len(wins))
        print(f"{a:<10} {b:<10} {w:>9.3f} [{w - half:.3f}, {w + half:.3f}] {np.mean(rewards):>12.2f}")


if __name__ == "__main__":
    main()
