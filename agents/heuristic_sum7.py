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
"""
from __future__ import annotations

import numpy as np

from domino_envs.actions import PASS
from domino_envs.errors import ConfigError
from domino_envs.tiles import TILE_A, TILE_B


class Sum7Heuristic:
    """Scored heuristic for sum7_v0 (see module doc for the terms)."""

    name = "heuristic"

    def __init__(self, game, seed: int | None = None, end: float = 3.0, close: float = 1.0, pips: float = 1.0,
                 follow: float = 2.0, open: float = 6.0, wait: float = -6.0, force: float = 8.0,
                 go_out: float = 1000.0):
        if game.heuristic != "sum7":
            raise ConfigError(f"{game.name}: Sum7Heuristic plays sum7_v0 only (engines whose heuristic is 'sum7')")
        self.game = game
        self.table = game.action_table()
        self.n = game.num_players
        self.w = dict(end=end, close=close, pips=pips, follow=follow, open=open, wait=wait, force=force,
                      go_out=go_out)
        self._rng = np.random.default_rng(seed)
        self._pips = (TILE_A[:28] + TILE_B[:28]).astype(float)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    @staticmethod
    def _fits(tiles, reqs, traps_live):
        """How many of `tiles` could be placed on a side requiring one of `reqs` (ignoring 0-0's wild use)."""
        c = 0
        for u in tiles:
            a, b = int(TILE_A[u]), int(TILE_B[u])
            if a == 0 and not traps_live:
                continue
            if a in reqs or b in reqs or (a == 0 and b == 0 and reqs):
                c += 1
        return c

    def scores(self, observation, action_mask):
        o = self.game.decode(observation)
        w = self.w
        hand = o["hand"] > 0.5
        played = o["played_by"].sum(axis=0) > 0.5
        unseen = ~hand & ~played
        unseen_ids = np.flatnonzero(unseen)
        closed = o["closed"] > 0.5
        req = [int(o["required"][s].argmax()) + 1 if o["required"][s].sum() > 0.5 and not closed[s] else None
               for s in range(2)]
        traps = o["traps_live"][0] > 0.5
        sizes = o["hand_sizes"]
        lacks = o["lacks"] > 0.5
        my_pips = float(self._pips[hand].sum())
        est = []
        for r in range(1, self.n):
            pool = unseen & ~lacks[r]
            mean = self._pips[pool].mean() if pool.any() else (self._pips[unseen].mean() if unseen.any() else 0.0)
            est.append(sizes[r] * mean)
        min_opp = min(est) if est else 0.0
        passes = int(round(float(o["passes"][0])))
        market = o["market"][0]
        nxt_pool = unseen & ~lacks[1] if self.n > 1 else unseen
        nxt_ids = np.flatnonzero(nxt_pool)
        legal = np.flatnonzero(action_mask)
        out = np.empty(legal.size)
        for i, act in enumerate(legal):
            if self.table.kind[act] == PASS:
                if passes >= self.n - 1:  # everyone else passed: waiting ends the hand now
                    out[i] = w["end"] * (min_opp - my_pips)
                    continue
                reqs = {q for q in req if q is not None}
                can = self._fits(nxt_ids, reqs, traps)
                p_stuck = 1.0 - min(1.0, can * sizes[1] / max(len(unseen_ids), 1)) if self.n > 1 else 0.0
                out[i] = w["wait"] + (w["force"] * p_stuck if market > 0 else 0.0)
                continue
            t, s = int(self.table.tile[act]), int(self.table.arm[act])
            a, b = int(TILE_A[t]), int(TILE_B[t])
            rest = hand.copy()
            rest[t] = False
            after = my_pips - (a + b)
            if not rest.any():
                out[i] = w["go_out"]
                continue
            other_closed = closed[1 - s]
            zero = a == 0
            if other_closed:  # a tile on the last open side ends the hand
                out[i] = w["end"] * (min_opp - after)
                continue
            new_req = list(req)
            if zero:
                new_req[s] = None
            else:
                q = req[s]
                x = b if a == q else a
                new_req[s] = 7 - x if 1 <= 7 - x <= 6 else None
            reqs = {q for q in new_req if q is not None}
            v = w["pips"] * (a + b)
            if zero:
                v += w["close"] * (min_opp - after)
            v += w["follow"] * min(self._fits(np.flatnonzero(rest), reqs, traps), 3)
            if self.n > 1 and len(unseen_ids):
                v -= w["open"] * self._fits(nxt_ids, reqs, traps) / len(unseen_ids)
            out[i] = v
        return legal, out

    def act(self, observation, action_mask) -> int:
        legal, s = self.scores(observation, action_mask)
        if legal.size == 0:
            raise ValueError("Sum7Heuristic.act: the action mask has no legal action")
        best = legal[np.isclose(s, s.max())]
        return int(best[self._rng.integers(best.size)]) if best.size > 1 else int(best[0])
