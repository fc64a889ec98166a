"""Seven-Toed Pete and Racehorse heuristic: the Fives family's count, read from the observation.

Both games score when the count (the sum of the open ends) is a multiple of five; they differ in
what that is worth. In Pete a scoring play earns another turn at once and only going out (or the
lowest pips in a block) wins a chip (seed 001: "unlearn the desire to make high multiples of five
in favor of making extra plays"). In Racehorse the count pays count/5 points, a double or score
tile obliges another play, and the hand's winner takes the pips left in the other hands (seed
004). The heuristic scores each legal placement (a one-ply look plus a peek at the next seat):

    go_out      playing my last tile: a domino (Racehorse: only a non-special last tile goes out;
                a special last tile washes me up, which `washed` penalises instead)
    score       1 if the placement makes a scoring count (Pete: an extra turn)
    points      * count / 5 when it scores (Racehorse: points won now)
    special     1 if the tile obliges another play (Racehorse: a double or score tile; Pete with
                double_extra_turn: a double) - more tiles shed this turn
    setup       * my remaining tiles that would score on the new layout ("set up fives")
    open        * what the next seat could score on the new layout: unseen tiles (not ruled out
                by its `voids`) that would score there, weighted by their points ("don't open
                fives for the next seat")
    pips        * pip value of the tile (lowest pips win blocked hands; Racehorse awards pips)
    double      1 for a double (hard to place later)

The count after a placement is predicted from the observation alone: an arm's end contributes
its pip, twice if it is a crosswise double; the lead double counts 2d until both its sides are
covered; an empty spinner branch counts nothing. (The branches that open once a spinner's sides
are covered are not predicted in the look-ahead; the engine's mask still offers them.)
"""
from __future__ import annotations

import numpy as np

from domino_envs.errors import ConfigError
from domino_envs.tiles import TILE_A, TILE_B

SCORE_TILES = {(6, 4), (5, 5), (5, 0), (4, 1), (3, 2)}
PETE_DEFAULTS = dict(go_out=1000.0, score=30.0, points=0.0, special=0.0, setup=2.0, open=4.0, pips=0.3,
                     double=1.5, washed=0.0)
RACEHORSE_DEFAULTS = dict(go_out=60.0, score=0.0, points=6.0, special=2.0, setup=1.5, open=3.0, pips=0.6,
                          double=1.0, washed=40.0)


class Layout:
    """Arms of a line layout as the observation shows them, with the count-prediction rules."""

    __slots__ = ("ends", "tiles", "dbl", "open", "count", "empty")

    def __init__(self, ends, tiles, dbl, open_, count, empty):
        self.ends, self.tiles, self.dbl, self.open, self.count, self.empty = ends, tiles, dbl, open_, count, empty

    @classmethod
    def from_obs(cls, o) -> Layout:
        arm_ends = o["arm_ends"]
        open_ = arm_ends.sum(axis=1) > 0.5
        ends = np.where(open_, arm_ends.argmax(axis=1), -1)
        empty = o["played_by"].sum() < 0.5
        return cls(ends, o["arm_tiles"].astype(int), o["arm_double"] > 0.5, open_, int(round(float(o["count"][0]))), empty)

    def _old(self, k: int) -> int:
        e = int(self.ends[k])
        if self.tiles[k] > 0:
            return e * (2 if self.dbl[k] else 1)
        if k >= 2:
            return 0  # an empty spinner branch adds nothing
        if self.dbl[k]:  # a lone lead double counts 2d until both sides are covered
            return 0 if self.tiles[1 - k] == 0 else 2 * e
        return e

    def place(self, t: int, k: int) -> tuple[int, Layout] | None:
        """(count after, layout after) for tile t on arm k; None if it does not fit."""
        a, b = int(TILE_A[t]), int(TILE_B[t])
        if self.empty:
            n = self.ends.size
            ends = np.full(n, -1)
            ends[0], ends[1] = a, b
            open_ = np.zeros(n, dtype=bool)
            open_[:2] = True
            dbl = np.zeros(n, dtype=bool)
            dbl[:2] = a == b
            return a + b, Layout(ends, np.zeros(n, dtype=int), dbl, open_, a + b, False)
        if not self.open[k]:
            return None
        e = int(self.ends[k])
        if e not in (a, b):
            return None
        x = b if a == e else a
        new = self.count - self._old(k) + x * (2 if a == b else 1)
        ends, tiles, dbl = self.ends.copy(), self.tiles.copy(), self.dbl.copy()
        ends[k], tiles[k], dbl[k] = x, tiles[k] + 1, a == b
        return new, Layout(ends, tiles, dbl, self.open, new, False)

    def scoring_points(self, t: int) -> int:
        """The most points (count / 5) tile t can make on any open arm, 0 if none scores."""
        best = 0
        for k in np.flatnonzero(self.open):
            r = self.place(t, int(k))
            if r is not None and r[0] > 0 and r[0] % 5 == 0:
                best = max(best, r[0] // 5)
        return best


class FivesHeuristic:
    """Scored heuristic for seven_toed_pete_v0 and racehorse_v0 (see module doc for the terms).

    Every weight is a constructor parameter; the defaults differ per game (PETE_DEFAULTS,
    RACEHORSE_DEFAULTS) and any given keyword overrides them."""

    name = "heuristic"

    def __init__(self, game, seed: int | None = None, go_out: float | None = None, score: float | None = None,
                 points: float | None = None, special: float | None = None, setup: float | None = None,
                 open: float | None = None, pips: float | None = None, double: float | None = None,
                 washed: float | None = None):
        if game.heuristic not in ("fives:pete", "fives:racehorse"):
            raise ConfigError(f"{game.name}: FivesHeuristic plays seven_toed_pete_v0 / racehorse_v0 only "
                              f"(engines whose heuristic is 'fives:pete' or 'fives:racehorse')")
        self.game = game
        self.pete = game.heuristic == "fives:pete"  # the variant picks the weights and the scoring rules
        self.table = game.action_table()
        w = dict(PETE_DEFAULTS if self.pete else RACEHORSE_DEFAULTS)
        given = dict(go_out=go_out, score=score, points=points, special=special, setup=setup, open=open,
                     pips=pips, double=double, washed=washed)
        w.update({k: float(v) for k, v in given.items() if v is not None})
        if self.pete and getattr(game.config, "double_extra_turn", False) and special is None:
            w["special"] = 8.0
        self.w = w
        self.n = game.num_players
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def _special(self, t: int) -> bool:
        a, b = int(TILE_A[t]), int(TILE_B[t])
        if self.pete:
            return a == b
        return a == b or (b, a) in SCORE_TILES or (a, b) in SCORE_TILES

    def scores(self, observation, action_mask):
        o = self.game.decode(observation)
        w = self.w
        lay = Layout.from_obs(o)
        hand = o["hand"] > 0.5
        played = o["played_by"].sum(axis=0) > 0.5
        unseen = np.flatnonzero(~hand & ~played)
        voids = o["voids"] > 0.5
        nxt_voids = voids[1] if self.n > 1 else np.zeros(7, dtype=bool)
        legal = np.flatnonzero(action_mask)
        out = np.empty(legal.size)
        for i, act in enumerate(legal):
            t, k = int(self.table.tile[act]), int(self.table.arm[act])
            a, b = int(TILE_A[t]), int(TILE_B[t])
            r = lay.place(t, k)
            new_count, after = r if r is not None else (lay.count, lay)
            scores = new_count > 0 and new_count % 5 == 0
            rest = hand.copy()
            rest[t] = False
            special = self._special(t)
            last = not rest.any()
            v = 0.0
            if last:
                v += w["washed"] * -1.0 if (special and not self.pete) else w["go_out"]
            v += w["score"] * scores + w["points"] * (new_count // 5 if scores else 0)
            v += w["special"] * (special and not last)
            setup = sum(after.scoring_points(int(u)) > 0 for u in np.flatnonzero(rest))
            v += w["setup"] * min(setup, 3)
            if w["open"]:
                threat = 0.0
                for u in unseen:
                    if nxt_voids[TILE_A[u]] or nxt_voids[TILE_B[u]]:
                        continue
                    pts = after.scoring_points(int(u))
                    threat += (1.0 if self.pete else pts) if pts else 0.0
                # a tile is in the next seat's hand with probability ~ its hand size / unseen count
                share = o["hand_sizes"][1] / max(len(unseen), 1) if self.n > 1 else 0.0
                v -= w["open"] * threat * share
            v += w["pips"] * (a + b) + w["double"] * (a == b)
            out[i] = v
        return legal, out

    def act(self, observation, action_mask) -> int:
        legal, s = self.scores(observation, action_mask)
        if legal.size == 0:
            raise ValueError("FivesHeuristic.act: the action mask has no legal action")
        best = legal[np.isclose(s, s.max())]
        return int(best[self._rng.integers(best.size)]) if best.size > 1 else int(best[0])
