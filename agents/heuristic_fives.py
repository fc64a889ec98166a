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
are covered are not predicted in the look-ahead; the engine's mask still offers them: such a
placement is scored on the layout as it stands.)

All of it is `fives_kernel`, compiled, over a batch of observations and masks; the weights are its
array (`FivesHeuristic.WEIGHTS` order), built from the constructor parameters and the game's defaults.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from domino_envs.errors import ConfigError
from domino_envs.tiles import TILE_A, TILE_B

from .heuristics import ScoredHeuristic, obs_offsets, pick_best

SCORE_TILES = {(6, 4), (5, 5), (5, 0), (4, 1), (3, 2)}
PETE_DEFAULTS = dict(go_out=1000.0, score=30.0, points=0.0, special=0.0, setup=2.0, open=4.0, pips=0.3,
                     double=1.5, washed=0.0)
RACEHORSE_DEFAULTS = dict(go_out=60.0, score=0.0, points=6.0, special=2.0, setup=1.5, open=3.0, pips=0.6,
                          double=1.0, washed=40.0)
WEIGHTS = ("go_out", "score", "points", "special", "setup", "open", "pips", "double", "washed")
PIECES = ("hand", "played_by", "arm_ends", "arm_tiles", "arm_double", "count", "hand_sizes", "voids")
NT, NPIP = 28, 7  # both games play the double-six set
# SPECIAL[variant, t]: tile t obliges another play (0: Pete, a double; 1: Racehorse, a double or score tile)
SPECIAL = np.zeros((2, NT), dtype=np.bool_)
for _t in range(NT):
    _a, _b = int(TILE_A[_t]), int(TILE_B[_t])
    SPECIAL[0, _t] = _a == _b
    SPECIAL[1, _t] = _a == _b or (_a, _b) in SCORE_TILES or (_b, _a) in SCORE_TILES


@njit(cache=True, inline="always")
def _old(ends, tiles, dbl, k):
    """What arm k's end adds to the count now: its pip, twice for a crosswise double; a lone lead
    double 2d until both sides are covered; an empty spinner branch nothing."""
    e = ends[k]
    if tiles[k] > 0:
        return e * (2 if dbl[k] else 1)
    if k >= 2:
        return 0
    if dbl[k]:
        return 0 if tiles[1 - k] == 0 else 2 * e
    return e


@njit(cache=True, _nrt=False)  # allocates nothing
def _points(ends, tiles, dbl, opened, count, t):
    """The most points (count / 5) tile t makes on any open arm of a started layout, 0 if none scores."""
    a, b = TILE_A[t], TILE_B[t]
    best = 0
    for k in range(ends.size):
        if not opened[k]:
            continue
        e = ends[k]
        if e != a and e != b:
            continue
        x = b if a == e else a
        new = count - _old(ends, tiles, dbl, k) + x * (2 if a == b else 1)
        if new > 0 and new % 5 == 0:
            best = max(best, new // 5)
    return best


@njit(cache=True)
def fives_kernel(obs, masks, tile, arm, off, n, arms, pete, w, rng, pick, scores, actions):
    """scores[i, a] of every legal action a of row i (-inf where illegal; the terms of the module
    doc, weights w in WEIGHTS order) and, with `pick`, actions[i] = the best (`pick_best`, ties by rng).
    off: first entry of each of PIECES; n players, `arms` arms in the observation, pete: the variant."""
    o_hand, o_played, o_ends, o_tiles, o_dbl, o_count, o_sizes, o_voids = (
        off[0], off[1], off[2], off[3], off[4], off[5], off[6], off[7])
    special_of = SPECIAL[0] if pete else SPECIAL[1]
    hand = np.zeros(NT, dtype=np.bool_)
    unseen = np.zeros(NT, dtype=np.int64)
    ends0 = np.zeros(arms, dtype=np.int64)
    tiles0 = np.zeros(arms, dtype=np.int64)
    dbl0 = np.zeros(arms, dtype=np.bool_)
    open0 = np.zeros(arms, dtype=np.bool_)
    ends1, tiles1, dbl1, open1 = ends0.copy(), tiles0.copy(), dbl0.copy(), open0.copy()
    for i in range(obs.shape[0]):
        o = obs[i]
        held = 0
        n_unseen = 0
        played_any = np.float32(0.0)
        for t in range(NT):
            hand[t] = o[o_hand + t] > 0.5
            held += hand[t]
            p = np.float32(0.0)
            for k in range(n):
                p += o[o_played + k * NT + t]
            played_any += p
            if not hand[t] and not p > 0.5:
                unseen[n_unseen] = t
                n_unseen += 1
        empty = played_any < 0.5
        for k in range(arms):
            row = o_ends + k * NPIP
            s = np.float32(0.0)
            best = 0
            for q in range(NPIP):
                s += o[row + q]
                if o[row + q] > o[row + best]:
                    best = q
            open0[k] = s > 0.5
            ends0[k] = best if open0[k] else -1
            tiles0[k] = int(o[o_tiles + k])
            dbl0[k] = o[o_dbl + k] > 0.5
        count0 = int(np.rint(o[o_count]))
        share = o[o_sizes + 1] / max(n_unseen, 1) if n > 1 else 0.0  # a tile's chance to be in the next hand
        for a in range(masks.shape[1]):
            scores[i, a] = -np.inf
            if masks[i, a] == 0:
                continue
            t, k = tile[a], arm[a]
            ta, tb = TILE_A[t], TILE_B[t]
            ends1[:] = ends0
            tiles1[:] = tiles0
            dbl1[:] = dbl0
            open1[:] = open0
            new_count = count0
            if empty:  # the lead: both sides show its halves
                ends1[:] = -1
                ends1[0], ends1[1] = ta, tb
                open1[:] = False
                open1[0] = open1[1] = True
                dbl1[:] = False
                dbl1[0] = dbl1[1] = ta == tb
                tiles1[:] = 0
                new_count = ta + tb
            elif open0[k] and (ends0[k] == ta or ends0[k] == tb):
                x = tb if ta == ends0[k] else ta
                new_count = count0 - _old(ends0, tiles0, dbl0, k) + x * (2 if ta == tb else 1)
                ends1[k], tiles1[k], dbl1[k] = x, tiles0[k] + 1, ta == tb
            makes = new_count > 0 and new_count % 5 == 0
            special = special_of[t]
            last = held - hand[t] == 0
            v = 0.0
            if last:
                v += -w[8] if (special and not pete) else w[0]
            v += w[1] * (1.0 if makes else 0.0) + w[2] * (new_count // 5 if makes else 0)
            v += w[3] * (1.0 if (special and not last) else 0.0)
            setup = 0
            for u in range(NT):
                if hand[u] and u != t and _points(ends1, tiles1, dbl1, open1, new_count, u) > 0:
                    setup += 1
            v += w[4] * min(setup, 3)
            if w[5] != 0.0:
                threat = 0.0
                for j in range(n_unseen):
                    u = unseen[j]
                    if o[o_voids + NPIP + TILE_A[u]] > 0.5 or o[o_voids + NPIP + TILE_B[u]] > 0.5:
                        continue  # the next seat lacks one of its numbers
                    pts = _points(ends1, tiles1, dbl1, open1, new_count, u)
                    if pts:
                        threat += 1.0 if pete else pts
                v -= w[5] * threat * share
            v += w[6] * (ta + tb) + w[7] * (1.0 if ta == tb else 0.0)
            scores[i, a] = v
        if pick:
            actions[i] = pick_best(scores[i], masks[i], rng)


class FivesHeuristic(ScoredHeuristic):
    """Scored heuristic for seven_toed_pete_v0 and racehorse_v0 (see module doc for the terms).

    Every weight is a constructor parameter; the defaults differ per game (PETE_DEFAULTS,
    RACEHORSE_DEFAULTS) and any given keyword overrides them."""

    WEIGHTS = WEIGHTS

    def __init__(self, game, seed: int | None = None, go_out: float | None = None, score: float | None = None,
                 points: float | None = None, special: float | None = None, setup: float | None = None,
                 open: float | None = None, pips: float | None = None, double: float | None = None,
                 washed: float | None = None):
        if game.heuristic not in ("fives:pete", "fives:racehorse"):
            raise ConfigError(f"{game.name}: FivesHeuristic plays seven_toed_pete_v0 / racehorse_v0 only "
                              f"(engines whose heuristic is 'fives:pete' or 'fives:racehorse')")
        pete = game.heuristic == "fives:pete"  # the variant picks the weights and the scoring rules
        w = dict(PETE_DEFAULTS if pete else RACEHORSE_DEFAULTS)
        given = dict(go_out=go_out, score=score, points=points, special=special, setup=setup, open=open,
                     pips=pips, double=double, washed=washed)
        w.update({k: float(v) for k, v in given.items() if v is not None})
        if pete and getattr(game.config, "double_extra_turn", False) and special is None:
            w["special"] = 8.0
        super().__init__(game, seed, w)
        self.pete = pete
        self._off = obs_offsets(game, PIECES)
        self._arms = dict(game.obs_pieces())["arm_tiles"][0]

    def _run(self, obs, masks, rng, pick, scores, actions):
        fives_kernel(obs, masks, self.table.tile, self.table.arm, self._off, self.n, self._arms, self.pete,
                     self.weights, rng, pick, scores, actions)
