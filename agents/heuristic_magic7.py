"""Magic-7 heuristic: grow rows toward my own cards, kill to block, spend the joker in time.

Magic-7 is Sevens (Fan Tan) with a draw pile, kills and jokers (seed 000). What matters: every row
grows one rank at a time from its 7, so a card I play opens the next rank for whoever holds it.
The seed's notes: kill a card to block a row ("you are ensuring that someone gets stuck with the
Ace"), force a card with a joker ("one smart way to get rid of Joker and more tile at same time is
to force a tile in your own hand"), and play the joker before the game ends (it costs 20).

Each legal action is scored from the observation; the terms (constructor parameters):

    pips     * penalty shed by the action (a card's Table-1 value; a joker 20)
    unlock   * my cards beyond the played card in its direction (cards this play brings closer
               to playable: "play what unlocks your own tiles")
    next     1 if I hold the very next card (I can follow up at once)
    gift     * penalty of unseen cards the play makes playable for others (the next card when it
               is not mine): opening rows for opponents helps them shed
    self_force  bonus for a joker whose target card I hold (sheds joker and target together)
    late     * 20 for any other joker play once the game nears its end (an opponent or I am down
               to `late_at` live tiles, or the pile is empty): spend the joker before the end
    block    * penalty of unseen cards cut off by a kill (they can never be played)
    stuck    * penalty of my own cards a kill cuts off (they become unplayable too)
    kill_cost * penalty of the killed tile itself (it stays in my hand)

(A draw scores 0 and a pass -1000: they are chosen only when nothing better is legal.) All of it is
`magic7_kernel`, compiled, over a batch of observations and masks; the weights are its array
(`Magic7Heuristic.WEIGHTS` order, `late_at` last), built from the constructor parameters.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from domino_envs.actions import DRAW, JOKER, KILL, PLACE
from domino_envs.errors import ConfigError

from .heuristics import ScoredHeuristic, obs_offsets, pick_best

WEIGHTS = ("pips", "unlock", "next", "gift", "self_force", "late", "block", "stuck", "kill_cost", "late_at")
PIECES = ("hand", "killed", "rows", "row_ends", "live_counts", "pile")


@njit(cache=True, inline="always")
def _direction(r, low_end):
    """-1 if a card of rank r extends its row downward, +1 upward (relative to the row's low end or 7)."""
    lo = int(low_end) if low_end > 0 else 7
    return -1 if r < lo or (low_end == 0 and r < 7) else 1


@njit(cache=True)
def magic7_kernel(obs, masks, kind, tile, arm, tile_weight, off, n, w, rng, pick, scores, actions):
    """scores[i, a] of every legal action a of row i (-inf where illegal; the terms of the module
    doc, weights w in WEIGHTS order) and, with `pick`, actions[i] = the best (`pick_best`, ties by rng).
    off: first entry of each of PIECES; n players."""
    o_hand, o_killed, o_rows, o_ends, o_live, o_pile = off[0], off[1], off[2], off[3], off[4], off[5]
    hand = np.zeros((4, 13), dtype=np.bool_)
    unseen = np.zeros((4, 13), dtype=np.bool_)  # opponents' live or killed cards, or the pile
    late_at = w[9]
    for i in range(obs.shape[0]):
        o = obs[i]
        for s in range(4):
            for r in range(13):
                j = 13 * s + r
                hand[s, r] = o[o_hand + j] > 0.5
                unseen[s, r] = not (hand[s, r] or o[o_rows + j] > 0.5 or o[o_killed + j] > 0.5)
        near = o[o_pile] < 0.5  # the game nears its end: the pile is empty or a seat is down to late_at tiles
        for k in range(n):
            near = near or o[o_live + k] <= late_at
        near_f = 1.0 if near else 0.0
        for a in range(masks.shape[1]):
            scores[i, a] = -np.inf
            if masks[i, a] == 0:
                continue
            kd = kind[a]
            if kd == PLACE:
                c = tile[a]
                s, r = c // 13, c % 13 + 1
                d = _direction(r, o[o_ends + 2 * s])
                stop = 0 if d < 0 else 14
                mine_beyond = 0
                for q in range(r + d, stop, d):  # ranks past this card
                    mine_beyond += hand[s, q - 1]
                v = w[0] * r + w[1] * mine_beyond
                if r != 7 and r + d != stop:
                    nxt = r + d
                    if hand[s, nxt - 1]:
                        v += w[2]
                    elif unseen[s, nxt - 1]:
                        v -= w[3] * nxt
                scores[i, a] = v
            elif kd == JOKER:
                s, end = arm[a] // 2, arm[a] % 2
                lo, hi = int(o[o_ends + 2 * s]), int(o[o_ends + 2 * s + 1])
                target = lo - 1 if end == 0 else hi + 1
                v = w[0] * 20 * near_f
                if 1 <= target <= 13 and hand[s, target - 1]:
                    v = w[0] * (20 + target) + w[4]
                elif 1 <= target <= 13:
                    v += w[5] * 20 * near_f - w[3] * target - (0 if near else 10)
                scores[i, a] = v
            elif kd == KILL:
                c = tile[a]
                if c >= 52:
                    scores[i, a] = -w[8] * 20 - 100
                    continue
                s, r = c // 13, c % 13 + 1
                d = _direction(r, o[o_ends + 2 * s])
                stop = 0 if d < 0 else 14
                blocked = 0.0
                own = 0.0
                for q in range(r + d, stop, d):
                    if unseen[s, q - 1]:
                        blocked += q
                    if hand[s, q - 1]:
                        own += q
                scores[i, a] = w[6] * blocked - w[7] * own - w[8] * tile_weight[c]
            elif kd == DRAW:
                scores[i, a] = 0.0
            else:  # PASS
                scores[i, a] = -1000.0
        if pick:
            actions[i] = pick_best(scores[i], masks[i], rng)


class Magic7Heuristic(ScoredHeuristic):
    """Scored heuristic for magic7_v0 (see module doc for the terms)."""

    WEIGHTS = WEIGHTS

    def __init__(self, game, seed: int | None = None, pips: float = 1.0, unlock: float = 3.0, next: float = 4.0,
                 gift: float = 0.4, self_force: float = 15.0, late: float = 1.0, late_at: int = 3,
                 block: float = 0.5, stuck: float = 1.0, kill_cost: float = 1.0):
        if game.heuristic != "magic7":
            raise ConfigError(f"{game.name}: Magic7Heuristic plays magic7_v0 only (engines whose heuristic is 'magic7')")
        self.late_at = int(late_at)
        super().__init__(game, seed, dict(pips=pips, unlock=unlock, next=next, gift=gift, self_force=self_force,
                                          late=late, block=block, stuck=stuck, kill_cost=kill_cost,
                                          late_at=self.late_at))
        self._off = obs_offsets(game, PIECES)

    def _run(self, obs, masks, rng, pick, scores, actions):
        magic7_kernel(obs, masks, self.table.kind, self.table.tile, self.table.arm, self.table.tile_weight,
                      self._off, self.n, self.weights, rng, pick, scores, actions)
