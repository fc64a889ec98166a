"""Magic-7 heuristic: grow rows toward my own cards, kill to block, spend the joker in time.

Magic-7 is Sevens (Fan Tan) with a draw pile, kills and jokers (seed 000). What matters: every row
grows one rank at a time from its 7, so a card I play opens the next rank for whoever holds it.
The seed's notes: kill a card to block a row ("you are ensuring that someone gets stuck with the
Ace"), force a card with a joker ("one smart way to get rid of Joker and more tile at same time is
to force a tile in your own hand"), and play the joker before the game ends (it costs 20).

Each legal action is scored from the decoded observation; the terms (constructor parameters):

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
"""
from __future__ import annotations

import numpy as np

from domino_envs.actions import DRAW, JOKER, KILL, PLACE
from domino_envs.errors import ConfigError


class Magic7Heuristic:
    """Scored heuristic for magic7_v0 (see module doc for the terms)."""

    name = "heuristic"

    def __init__(self, game, seed: int | None = None, pips: float = 1.0, unlock: float = 3.0, next: float = 4.0,
                 gift: float = 0.4, self_force: float = 15.0, late: float = 1.0, late_at: int = 3,
                 block: float = 0.5, stuck: float = 1.0, kill_cost: float = 1.0):
        if game.heuristic != "magic7":
            raise ConfigError(f"{game.name}: Magic7Heuristic plays magic7_v0 only (engines whose heuristic is 'magic7')")
        self.game = game
        self.table = game.action_table()
        self.n = game.num_players
        self.w = dict(pips=pips, unlock=unlock, next=next, gift=gift, self_force=self_force, late=late,
                      block=block, stuck=stuck, kill_cost=kill_cost)
        self.late_at = int(late_at)
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    @staticmethod
    def _direction(rank: int, ends) -> int:
        """-1 if a card of `rank` extends its row downward, +1 upward (relative to the row ends or 7)."""
        lo = int(ends[0]) if ends[0] > 0 else 7
        return -1 if rank < lo or (ends[0] == 0 and rank < 7) else 1

    def scores(self, observation, action_mask):
        o = self.game.decode(observation)
        w = self.w
        hand = o["hand"] > 0.5  # (4, 13): suit, rank - 1
        rows = o["rows"] > 0.5
        killed_mine = o["killed"] > 0.5
        seen = hand | rows | killed_mine
        unseen = ~seen  # opponents' live or killed cards, or the pile
        row_ends = o["row_ends"]
        live = o["live_counts"]
        near_end = (live[1:].min() <= self.late_at if self.n > 1 else False) or live[0] <= self.late_at \
            or o["pile"][0] < 0.5
        pen = np.arange(1, 14, dtype=float)
        legal = np.flatnonzero(action_mask)
        out = np.empty(legal.size)
        for i, act in enumerate(legal):
            kind = int(self.table.kind[act])
            if kind == PLACE:
                c = int(self.table.tile[act])
                s, r = divmod(c, 13)
                r += 1
                d = self._direction(r, row_ends[s])
                beyond = np.arange(r + d, 0 if d < 0 else 14, d)  # ranks past this card, 1..13
                mine_beyond = hand[s, beyond - 1].sum() if beyond.size else 0
                v = w["pips"] * r + w["unlock"] * mine_beyond
                if r == 7 or beyond.size == 0:
                    out[i] = v
                    continue
                nxt = r + d
                if hand[s, nxt - 1]:
                    v += w["next"]
                elif unseen[s, nxt - 1]:
                    v -= w["gift"] * nxt
                out[i] = v
            elif kind == JOKER:
                slot = int(self.table.arm[act])
                s, end = divmod(slot, 2)
                lo, hi = int(row_ends[s][0]), int(row_ends[s][1])
                target = lo - 1 if end == 0 else hi + 1
                v = w["pips"] * 20 * (1.0 if near_end else 0.0)
                if 1 <= target <= 13 and hand[s, target - 1]:
                    v = w["pips"] * (20 + target) + w["self_force"]
                elif 1 <= target <= 13:
                    v += w["late"] * 20 * near_end - w["gift"] * target - (0 if near_end else 10)
                out[i] = v
            elif kind == KILL:
                c = int(self.table.tile[act])
                if c >= 52:
                    out[i] = -w["kill_cost"] * 20 - 100
                    continue
                s, r = divmod(c, 13)
                r += 1
                d = self._direction(r, row_ends[s])
                beyond = np.arange(r + d, 0 if d < 0 else 14, d)
                blocked = float((unseen[s, beyond - 1] * pen[beyond - 1]).sum()) if beyond.size else 0.0
                own = float((hand[s, beyond - 1] * pen[beyond - 1]).sum()) if beyond.size else 0.0
                out[i] = w["block"] * blocked - w["stuck"] * own - w["kill_cost"] * self.table.tile_weight[c]
            elif kind == DRAW:
                out[i] = 0.0
            else:  # PASS
                out[i] = -1000.0
        return legal, out

    def act(self, observation, action_mask) -> int:
        legal, s = self.scores(observation, action_mask)
        if legal.size == 0:
            raise ValueError("Magic7Heuristic.act: the action mask has no legal action")
        best = legal[np.isclose(s, s.max())]
        return int(best[self._rng.integers(best.size)]) if best.size > 1 else int(best[0])
