"""Domino Sum 7 heuristic: shed weight, keep a follow-up, and end the hand only when ahead.

Sum 7 ends at once when a side is closed and the other gets a tile, when both sides are closed,
when a seat goes out, or when every seat passes in a row; the fewest pips then win and the losers
pay their own pips. So the decisive choices are *when* to end it (seed 003's tactical advice:
"don't rush to place a required number or close a side with zero if you have many points in your
remaining tiles / you see that opponents have few tiles", "hold onto a required number when
opponents have few tiles, forcing them to draw", "consider carefully when to use a zero as a
trap"). Opponents' pips are estimated from the observation: each opponent's hand size times the
mean pips of the unseen tiles it is not known to lack (`lacks`).

Each legal action is scored; the terms (constructor parameters):

    end       * (estimated lowest opponent pips - my pips after) for a move that ends the hand
                (going out always ends it in my favour, so it scores `go_out` instead)
    close     * the same margin, for a zero trap that closes one side without ending the hand:
                it hands everyone the power to end the hand, which only helps the seat ahead
    pips      * pips shed
    follow    * my remaining tiles that fit the requirements after the move (capped at 3)
    open      * share of the unseen tiles the next seat could play after the move (not lacked)
    wait        base score of waiting (the pass action) when it does not end the hand
    force     * for a wait: the chance the next seat has nothing to place (it must then draw from
                the market), when the market is not empty

All of it is `sum7_kernel`, compiled, over a batch of observations and masks; the weights are its
array (`Sum7Heuristic.WEIGHTS` order), built from the constructor parameters.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from domino_envs.actions import PASS
from domino_envs.errors import ConfigError
from domino_envs.tiles import TILE_A, TILE_B

from .heuristics import ScoredHeuristic, obs_offsets, pick_best

WEIGHTS = ("end", "close", "pips", "follow", "open", "wait", "force", "go_out")
PIECES = ("hand", "played_by", "required", "closed", "traps_live", "hand_sizes", "market", "lacks", "passes")
NT = 28
PIPS = (TILE_A[:NT] + TILE_B[:NT]).astype(np.float64)


@njit(cache=True, _nrt=False)  # allocates nothing
def _fits(tiles, count, r0, r1, traps_live):
    """How many of tiles[:count] could be placed on a side requiring r0 or r1 (-1: no requirement),
    ignoring 0-0's wild use; a zero tile only while traps are live."""
    c = 0
    for j in range(count):
        a, b = TILE_A[tiles[j]], TILE_B[tiles[j]]
        if a == 0 and not traps_live:
            continue
        if a == r0 or a == r1 or b == r0 or b == r1 or (a == 0 and b == 0 and (r0 >= 0 or r1 >= 0)):
            c += 1
    return c


@njit(cache=True)
def sum7_kernel(obs, masks, kind, tile, arm, off, n, w, rng, pick, scores, actions):
    """scores[i, a] of every legal action a of row i (-inf where illegal; the terms of the module
    doc, weights w in WEIGHTS order) and, with `pick`, actions[i] = the best (`pick_best`, ties by rng).
    off: first entry of each of PIECES; n players."""
    o_hand, o_played, o_req, o_closed, o_traps, o_sizes, o_market, o_lacks, o_passes = (
        off[0], off[1], off[2], off[3], off[4], off[5], off[6], off[7], off[8])
    hand = np.zeros(NT, dtype=np.bool_)
    unseen = np.zeros(NT, dtype=np.bool_)
    rest = np.zeros(NT, dtype=np.int64)
    nxt = np.zeros(NT, dtype=np.int64)
    req = np.full(2, -1, dtype=np.int64)  # each side's required number, -1 for none
    for i in range(obs.shape[0]):
        o = obs[i]
        held = 0
        n_unseen = 0
        my_pips = 0.0
        unseen_pips = 0.0
        for t in range(NT):
            hand[t] = o[o_hand + t] > 0.5
            held += hand[t]
            if hand[t]:
                my_pips += PIPS[t]
            p = np.float32(0.0)
            for k in range(n):
                p += o[o_played + k * NT + t]
            unseen[t] = not hand[t] and not p > 0.5
            if unseen[t]:
                n_unseen += 1
                unseen_pips += PIPS[t]
        closed0 = o[o_closed] > 0.5
        closed1 = o[o_closed + 1] > 0.5
        req[:] = -1
        for s in range(2):
            total = np.float32(0.0)
            best = 0
            for q in range(6):
                total += o[o_req + 6 * s + q]
                if o[o_req + 6 * s + q] > o[o_req + 6 * s + best]:
                    best = q
            if total > 0.5 and not (closed0 if s == 0 else closed1):
                req[s] = best + 1
        traps = o[o_traps] > 0.5
        min_opp = np.inf  # estimated lowest opponent pips: hand size x mean pips of what it may hold
        for r in range(1, n):
            c = 0
            tot = 0.0
            for t in range(NT):
                if unseen[t] and not o[o_lacks + r * NT + t] > 0.5:
                    c += 1
                    tot += PIPS[t]
            if c:
                mean = tot / c
            elif n_unseen:
                mean = unseen_pips / n_unseen
            else:
                mean = 0.0
            min_opp = min(min_opp, np.float64(o[o_sizes + r]) * mean)
        if n < 2:
            min_opp = 0.0
        passes = int(np.rint(o[o_passes]))
        market = o[o_market]
        n_nxt = 0
        for t in range(NT):
            if unseen[t] and (n < 2 or not o[o_lacks + NT + t] > 0.5):
                nxt[n_nxt] = t
                n_nxt += 1
        for a in range(masks.shape[1]):
            scores[i, a] = -np.inf
            if masks[i, a] == 0:
                continue
            if kind[a] == PASS:
                if passes >= n - 1:  # everyone else passed: waiting ends the hand now
                    scores[i, a] = w[0] * (min_opp - my_pips)
                    continue
                p_stuck = 0.0
                if n > 1:
                    can = _fits(nxt, n_nxt, req[0], req[1], traps)
                    p_stuck = 1.0 - min(1.0, can * np.float64(o[o_sizes + 1]) / max(n_unseen, 1))
                scores[i, a] = w[5] + (w[6] * p_stuck if market > 0 else 0.0)
                continue
            t, s = tile[a], arm[a]
            ta, tb = TILE_A[t], TILE_B[t]
            if held - hand[t] == 0:  # my last tile: going out ends the hand in my favour
                scores[i, a] = w[7]
                continue
            after = my_pips - (ta + tb)
            if (closed1 if s == 0 else closed0):  # a tile on the last open side ends the hand
                scores[i, a] = w[0] * (min_opp - after)
                continue
            zero = ta == 0
            r0, r1 = req[0], req[1]
            if zero:
                x = -1
            else:
                q = req[s]
                x = tb if ta == q else ta
                x = 7 - x if 1 <= 7 - x <= 6 else -1
            if s == 0:
                r0 = x
            else:
                r1 = x
            n_rest = 0
            for u in range(NT):
                if hand[u] and u != t:
                    rest[n_rest] = u
                    n_rest += 1
            v = w[2] * (ta + tb)
            if zero:
                v += w[1] * (min_opp - after)
            v += w[3] * min(_fits(rest, n_rest, r0, r1, traps), 3)
            if n > 1 and n_unseen:
                v -= w[4] * _fits(nxt, n_nxt, r0, r1, traps) / n_unseen
            scores[i, a] = v
        if pick:
            actions[i] = pick_best(scores[i], masks[i], rng)


class Sum7Heuristic(ScoredHeuristic):
    """Scored heuristic for sum7_v0 (see module doc for the terms)."""

    WEIGHTS = WEIGHTS

    def __init__(self, game, seed: int | None = None, end: float = 3.0, close: float = 1.0, pips: float = 1.0,
                 follow: float = 2.0, open: float = 6.0, wait: float = -6.0, force: float = 8.0,
                 go_out: float = 1000.0):
        if game.heuristic != "sum7":
            raise ConfigError(f"{game.name}: Sum7Heuristic plays sum7_v0 only (engines whose heuristic is 'sum7')")
        super().__init__(game, seed, dict(end=end, close=close, pips=pips, follow=follow, open=open, wait=wait,
                                          force=force, go_out=go_out))
        self._off = obs_offsets(game, PIECES)

    def _run(self, obs, masks, rng, pick, scores, actions):
        sum7_kernel(obs, masks, self.table.kind, self.table.tile, self.table.arm, self._off, self.n,
                    self.weights, rng, pick, scores, actions)
