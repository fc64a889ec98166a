"""Draw Game / Block Game heuristic: the seed's strategy tips (seed 002) as a scored one-ply choice.

Every legal placement is scored on the observation alone, and the best one is played
(random tie-break). The terms, each a documented constructor parameter:

    pips      * pip value of the tile        "play your high value dominoes as soon as possible"
    double    * 1 if the tile is a double     "get rid of your doubles as soon as possible"
    variety   * distinct numbers kept         "keep at least one of every number in your hand"
    follow    * my tiles that fit the new ends (capped at 3)   "control ... guarantee that you can
                                                               play on your next turn"
    block     * sum over opponents (the next seat counts double) of the share of the new ends'
                numbers that opponent showed it lacks (`voids`)  "make a mental note of which
                number he doesn't have ... use this information to block him"
    scarce    * share of the new ends' numbers already out of the game: played or in my hand
                (count what has been played: those numbers are harder for opponents to match)
    go_out      bonus for playing my last tile (always right: the hand ends and I score)

The scarcity and blocking terms grow with `endgame` when an opponent is down to few tiles, since
then blocking matters more than shedding weight. (A share is 0.5 when one or both new ends show a
number that opponent lacks: the Python original added two numpy booleans, which ORs them, and the
kernel keeps its choices.)

All of it is `line_kernel`, compiled, over a batch of observations and masks; the weights are its
array (`LineHeuristic.WEIGHTS` order), built from the constructor parameters.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from domino_envs.errors import ConfigError
from domino_envs.tiles import TILE_A, TILE_B

from .heuristics import ScoredHeuristic, obs_offsets, pick_best

PIECES = ("hand", "played_by", "ends", "hand_sizes", "voids")  # the observation pieces read, in `off` order
WEIGHTS = ("pips", "double", "variety", "follow", "block", "scarce", "go_out", "endgame")


@njit(cache=True)
def line_kernel(obs, masks, tile, arm, off, n, np1, nt, w, rng, pick, scores, actions):
    """scores[i, a] of every legal action a of row i (-inf where illegal; the terms of the module
    doc, weights w in WEIGHTS order) and, with `pick`, actions[i] = the best (`pick_best`, ties by rng).
    off: first entry of each of PIECES; n players, np1 = max_pip + 1 numbers, nt tiles."""
    o_hand, o_played, o_ends, o_sizes, o_voids = off[0], off[1], off[2], off[3], off[4]
    hand = np.zeros(nt, dtype=np.bool_)
    frac = np.zeros(np1)  # per number: share of its tiles out of the game (in my hand or played)
    nums = np.zeros(np1, dtype=np.bool_)
    for i in range(obs.shape[0]):
        o = obs[i]
        held = 0
        frac[:] = 0.0
        for t in range(nt):
            hand[t] = o[o_hand + t] > 0.5
            held += hand[t]
            p = np.float32(0.0)
            for k in range(n):
                p += o[o_played + k * nt + t]
            if hand[t] or p > 0.5:
                frac[TILE_A[t]] += 1.0
                if TILE_B[t] != TILE_A[t]:
                    frac[TILE_B[t]] += 1.0
        for q in range(np1):
            frac[q] /= np1  # each number is on np1 tiles of the set
        e_sum = np.float32(0.0)
        left = right = 0
        for q in range(np1):
            e_sum += o[o_ends + q] + o[o_ends + np1 + q]
            if o[o_ends + q] > o[o_ends + left]:
                left = q
            if o[o_ends + np1 + q] > o[o_ends + np1 + right]:
                right = q
        empty = e_sum < 0.5
        min_opp = o[o_sizes + 1]
        for k in range(2, n):
            min_opp = min(min_opp, o[o_sizes + k])
        boost = 1.0 + w[7] * (1.0 if min_opp <= 2 else 0.0)
        for a in range(masks.shape[1]):
            scores[i, a] = -np.inf
            if masks[i, a] == 0:
                continue
            t = tile[a]
            ta, tb = TILE_A[t], TILE_B[t]
            if empty:
                n0, n1 = ta, tb
            else:
                v = left if arm[a] == 0 else right
                x = tb if ta == v else ta
                n0, n1 = (x, right) if arm[a] == 0 else (left, x)
            if held - hand[t] == 0:  # my last tile
                scores[i, a] = w[6]
                continue
            nums[:] = False
            follow = 0
            for r in range(nt):
                if hand[r] and r != t:
                    ra, rb = TILE_A[r], TILE_B[r]
                    nums[ra] = True
                    nums[rb] = True
                    if ra == n0 or ra == n1 or rb == n0 or rb == n1:
                        follow += 1
            variety = 0
            for q in range(np1):
                variety += nums[q]
            block = 0.0
            for r in range(1, n):
                lacks = o[o_voids + r * np1 + n0] > 0.5 or o[o_voids + r * np1 + n1] > 0.5
                block += (0.5 if lacks else 0.0) * (2.0 if r == 1 else 1.0)
            scarce = frac[n0] if n0 == n1 else (frac[n0] + frac[n1]) / 2.0
            scores[i, a] = (w[0] * (ta + tb) + w[1] * (1.0 if ta == tb else 0.0) + w[2] * variety
                            + w[3] * min(follow, 3) + boost * (w[4] * block + w[5] * scarce))
        if pick:
            actions[i] = pick_best(scores[i], masks[i], rng)


class LineHeuristic(ScoredHeuristic):
    """Scored one-ply heuristic for draw_v0 / block_v0 (see module doc for the terms)."""

    WEIGHTS = WEIGHTS

    def __init__(self, game, seed: int | None = None, pips: float = 1.0, double: float = 2.0,
                 variety: float = 1.0, follow: float = 1.5, block: float = 4.0, scarce: float = 4.0,
                 go_out: float = 1000.0, endgame: float = 1.0):
        if game.heuristic != "line":
            raise ConfigError(f"{game.name}: LineHeuristic plays draw_v0 / block_v0 only (engines whose "
                              f"heuristic is 'line')")
        super().__init__(game, seed, dict(pips=pips, double=double, variety=variety, follow=follow, block=block,
                                          scarce=scarce, go_out=go_out, endgame=endgame))
        self.np1 = game.config.max_pip + 1
        self.nt = game.n_tiles
        self._off = obs_offsets(game, PIECES)

    def _run(self, obs, masks, rng, pick, scores, actions):
        line_kernel(obs, masks, self.table.tile, self.table.arm, self._off, self.n, self.np1, self.nt,
                    self.weights, rng, pick, scores, actions)
