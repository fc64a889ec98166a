"""A two-player game tree as flat arrays, with compiled CFR+ and best-response walks over it.

OpenSpiel's own walks (``exploitability.nash_conv``, ``cfr.CFRPlusSolver``) call back into the
Python game at every history of every pass: on the double-three Block Game (40k decisions) one
NashConv takes about 40 s and a CFR+ iteration several seconds. Here the tree of an OpenSpiel game
is read once (`Tree.build`, one walk through the game) into arrays (every child after its
parent, a node's children side by side), and the passes are numba
loops over them: a NashConv or a CFR+ iteration in milliseconds. Used by domino_training.exploit;
tests/learners/test_exploit.py checks both against OpenSpiel's (1e-6) on the small configs.

The walks are those of OpenSpiel's implementations, for two-player zero-sum games:
- `nash_conv(policy)`: for each seat, its best response's value against the other's policy minus
  its own value under the policy, summed (OpenSpiel's ``nash_conv``); the best response is found
  information state by information state, deepest (by the seat's own decisions) first, each
  picking the action of the highest counterfactual value given the choices below it (perfect
  recall makes those choices the same for every history of an information state);
- `cfr_plus(iterations)`: CFR+ as OpenSpiel's ``CFRPlusSolver`` runs it: alternating updates (seat
  0's regrets, then seat 1's against seat 0's new policy), regret matching+ (cumulative regrets
  floored at 0 after each pass), the average policy weighted by the iteration number.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

TERMINAL, CHANCE, DECISION = 0, 1, 2


@dataclass
class Tree:
    """The arrays (module doc). Nodes: kind, player, infoset, first child, number of children, the
    probability of the edge into the node (chance children; 1 otherwise), seat 0's utility at a
    terminal. Information states: their strings, seat, first slot in the action arrays, number of
    actions, the action ids, and the seat's own decisions before them (depth)."""

    kind: np.ndarray
    player: np.ndarray
    infoset: np.ndarray
    first: np.ndarray
    count: np.ndarray
    prob: np.ndarray
    util: np.ndarray
    info_keys: list
    info_player: np.ndarray
    info_offset: np.ndarray
    info_count: np.ndarray
    info_depth: np.ndarray
    actions: np.ndarray
    states: list  # one OpenSpiel state per information state (to ask a policy there)

    @property
    def size(self) -> int:
        return int(self.kind.size)

    @classmethod
    def build(cls, game) -> Tree:
        """Walk an OpenSpiel two-player zero-sum game once into arrays: depth first (one path of
        states held at a time), every node's children given consecutive ids when it is expanded."""
        if game.num_players() != 2:
            raise ValueError(f"the compiled walks are for two players; {game} has {game.num_players()}")
        kind, player, infoset, first, count, prob, util = [0], [-1], [-1], [0], [0], [1.0], [0.0]
        info_index: dict = {}
        info_keys, info_player, info_actions, info_depth, states = [], [], [], [], []
        stack = [(0, game.new_initial_state(), (0, 0))]

        def add(children):
            first_id = len(kind)
            for q in children:
                kind.append(0), player.append(-1), infoset.append(-1), first.append(0), count.append(0)
                prob.append(q), util.append(0.0)
            return first_id

        while stack:
            i, state, depth = stack.pop()
            if state.is_terminal():
                returns = state.returns()
                if abs(returns[0] + returns[1]) > 1e-9:
                    raise ValueError(f"not zero-sum at a terminal history: returns {returns}")
                kind[i], util[i] = TERMINAL, returns[0]
                continue
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                f = add([q for _, q in outcomes])
                kind[i], first[i], count[i] = CHANCE, f, len(outcomes)
                stack += [(f + k, state.child(a), depth) for k, (a, _) in enumerate(outcomes)]
                continue
            q = state.current_player()
            key = state.information_state_string(q)
            legal = state.legal_actions()
            j = info_index.get(key)
            if j is None:
                j = info_index[key] = len(info_keys)
                info_keys.append(key), info_player.append(q), info_actions.append(legal)
                info_depth.append(depth[q]), states.append(state)
            elif info_player[j] != q or info_actions[j] != legal or info_depth[j] != depth[q]:
                raise ValueError(f"information state {key!r} has histories of different seats, with different "
                                 f"legal actions or with different own histories (not perfect recall)")
            f = add([1.0] * len(legal))
            kind[i], player[i], infoset[i], first[i], count[i] = DECISION, q, j, f, len(legal)
            d = (depth[0] + 1, depth[1]) if q == 0 else (depth[0], depth[1] + 1)
            stack += [(f + k, state.child(a), d) for k, a in enumerate(legal)]
        info_count = np.array([len(a) for a in info_actions], dtype=np.int64)
        info_offset = np.concatenate([[0], np.cumsum(info_count)[:-1]]).astype(np.int64)
        return cls(np.array(kind, np.int8), np.array(player, np.int64), np.array(infoset, np.int64),
                   np.array(first, np.int64), np.array(count, np.int64), np.array(prob, np.float64),
                   np.array(util, np.float64), info_keys, np.array(info_player, np.int64), info_offset,
                   info_count, np.array(info_depth, np.int64),
                   np.array([a for acts in info_actions for a in acts], np.int64), states)

    # ---- policies as arrays: one probability per (information state, legal action) slot
    def uniform(self) -> np.ndarray:
        return np.repeat(1.0 / self.info_count, self.info_count)

    def policy_array(self, action_probabilities) -> np.ndarray:
        """A policy (a callable state -> {action: prob}, e.g. an OpenSpiel policy's
        action_probabilities) as slot probabilities, asked once per information state."""
        out = np.zeros(self.actions.size)
        for i, state in enumerate(self.states):
            probs = action_probabilities(state)
            o = self.info_offset[i]
            for k in range(self.info_count[i]):
                out[o + k] = probs.get(int(self.actions[o + k]), 0.0)
        return out

    def as_dict(self, sigma: np.ndarray) -> dict:
        """Slot probabilities -> {information state string: {action: prob}}."""
        out = {}
        for i, key in enumerate(self.info_keys):
            o, n = self.info_offset[i], self.info_count[i]
            out[key] = {int(self.actions[o + k]): float(sigma[o + k]) for k in range(n)}
        return out

    def _args(self):
        return (self.kind, self.player, self.infoset, self.first, self.count, self.prob, self.util,
                self.info_offset, self.info_count)

    # ---- the walks
    def nash_conv(self, sigma: np.ndarray) -> tuple[float, list[float]]:
        """(NashConv, each seat's best-response gain) of slot probabilities `sigma` (module doc)."""
        gains = []
        for p in (0, 1):
            br = _best_response_value(*self._args(), self.info_player, self.info_depth, sigma, p)
            on = _value(*self._args(), sigma) * (1 if p == 0 else -1)
            gains.append(float(br - on))
        return sum(gains), gains

    def cfr_plus(self, iterations: int, every: int = 0, state=None):
        """Run CFR+ (module doc); returns (average policy, curve [(iteration, exploitability)] every
        `every` iterations and at the last, state to continue from)."""
        n = self.actions.size
        regret, cum, sigma, done = state if state is not None else (np.zeros(n), np.zeros(n), self.uniform(), 0)
        curve = []
        for it in range(done + 1, done + iterations + 1):
            for p in (0, 1):
                _cfr_pass(*self._args(), self.info_player, sigma, regret, cum, p, float(it))
            if every and (it % every == 0 or it == done + iterations or it == 1):
                curve.append((it, self.nash_conv(average(self, cum))[0] / 2))
        return average(self, cum), curve, (regret, cum, sigma, done + iterations)


def average(tree: Tree, cum: np.ndarray) -> np.ndarray:
    """The average policy of cumulative policy weights (uniform where an information state has none)."""
    out = np.empty_like(cum)
    for i in range(tree.info_count.size):
        o, n = tree.info_offset[i], tree.info_count[i]
        s = cum[o:o + n].sum()
        out[o:o + n] = cum[o:o + n] / s if s > 0 else 1.0 / n
    return out


@njit(cache=True)
def _reach(kind, player, infoset, first, count, prob, info_offset, sigma):
    """Reach probabilities of every node: seat 0's, seat 1's, chance's."""
    n = kind.size
    r = np.ones((3, n))
    for i in range(n):
        if kind[i] == 0:
            continue
        f = first[i]
        for k in range(count[i]):
            c = f + k
            r[0, c] = r[0, i]
            r[1, c] = r[1, i]
            r[2, c] = r[2, i]
            if kind[i] == 1:
                r[2, c] *= prob[c]
            else:
                r[player[i], c] *= sigma[info_offset[infoset[i]] + k]
    return r


@njit(cache=True)
def _values(kind, infoset, first, count, prob, util, info_offset, sigma):
    """Seat 0's value of every node under `sigma`."""
    n = kind.size
    v = np.zeros(n)
    for i in range(n - 1, -1, -1):
        if kind[i] == 0:
            v[i] = util[i]
        elif kind[i] == 1:
            acc = 0.0
            for k in range(count[i]):
                acc += prob[first[i] + k] * v[first[i] + k]
            v[i] = acc
        else:
            acc = 0.0
            o = info_offset[infoset[i]]
            for k in range(count[i]):
                acc += sigma[o + k] * v[first[i] + k]
            v[i] = acc
    return v


@njit(cache=True)
def _value(kind, player, infoset, first, count, prob, util, info_offset, info_count, sigma):
    return _values(kind, infoset, first, count, prob, util, info_offset, sigma)[0]


@njit(cache=True)
def _cfr_pass(kind, player, infoset, first, count, prob, util, info_offset, info_count, info_player, sigma,
              regret, cum, p, it):
    """One CFR+ update of seat p's regrets and average weights, then regret matching+ for its
    information states (OpenSpiel's alternating CFR+ pass)."""
    r = _reach(kind, player, infoset, first, count, prob, info_offset, sigma)
    v = _values(kind, infoset, first, count, prob, util, info_offset, sigma)
    sign = 1.0 if p == 0 else -1.0
    for i in range(kind.size):
        if kind[i] != 2 or player[i] != p:
            continue
        cf = r[1 - p, i] * r[2, i]
        o = info_offset[infoset[i]]
        for k in range(count[i]):
            regret[o + k] += cf * sign * (v[first[i] + k] - v[i])
            cum[o + k] += it * r[p, i] * sigma[o + k]
    for j in range(info_count.size):
        if info_player[j] != p:
            continue
        o = info_offset[j]
        total = 0.0
        for k in range(info_count[j]):
            if regret[o + k] < 0:
                regret[o + k] = 0.0
            total += regret[o + k]
        for k in range(info_count[j]):
            sigma[o + k] = regret[o + k] / total if total > 0 else 1.0 / info_count[j]


@njit(cache=True)
def _best_response_value(kind, player, infoset, first, count, prob, util, info_offset, info_count, info_player,
                         info_depth, sigma, p):
    """Seat p's best-response value against `sigma` (module doc: deepest information states first)."""
    n = kind.size
    r = _reach(kind, player, infoset, first, count, prob, info_offset, sigma)
    sign = 1.0 if p == 0 else -1.0
    best = np.full(info_count.size, -1)
    q = np.zeros(sigma.size)
    depth_max = -1
    for j in range(info_count.size):
        if info_player[j] == p and info_depth[j] > depth_max:
            depth_max = info_depth[j]
    v = np.zeros(n)
    for d in range(depth_max, -2, -1):  # d = -1: the last pass, every choice made
        for i in range(n - 1, -1, -1):
            if kind[i] == 0:
                v[i] = sign * util[i]
            elif kind[i] == 1:
                acc = 0.0
                for k in range(count[i]):
                    acc += prob[first[i] + k] * v[first[i] + k]
                v[i] = acc
            elif player[i] != p:
                acc = 0.0
                o = info_offset[infoset[i]]
                for k in range(count[i]):
                    acc += sigma[o + k] * v[first[i] + k]
                v[i] = acc
            else:
                j = infoset[i]
                if info_depth[j] > d:
                    v[i] = v[first[i] + best[j]]
                elif info_depth[j] == d:
                    cf = r[1 - p, i] * r[2, i]
                    o = info_offset[j]
                    for k in range(count[i]):
                        q[o + k] += cf * v[first[i] + k]
                    v[i] = 0.0
                else:
                    v[i] = 0.0
        for j in range(info_count.size):
            if info_player[j] == p and info_depth[j] == d:
                o = info_offset[j]
                b = 0
                for k in range(1, info_count[j]):
                    if q[o + k] > q[o + b]:
                        b = k
                best[j] = b
    return v[0]
