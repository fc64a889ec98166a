"""Draw Game / Block Game heuristic: the seed's strategy tips (seed 002) as a scored one-ply choice.

Every legal placement is scored on the decoded observation alone, and the best one is played
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
then blocking matters more than shedding weight.
"""
from __future__ import annotations

import numpy as np

from domino_envs.errors import ConfigError
from domino_envs.tiles import TILE_A, TILE_B

from .random_agent import uniform_over


class LineHeuristic:
    """Scored one-ply heuristic for draw_v0 / block_v0 (see module doc for the terms)."""

    name = "heuristic"

    def __init__(self, game, seed: int | None = None, pips: float = 1.0, double: float = 2.0,
                 variety: float = 1.0, follow: float = 1.5, block: float = 4.0, scarce: float = 4.0,
                 go_out: float = 1000.0, endgame: float = 1.0):
        self.game = game
        if game.heuristic != "line":
            raise ConfigError(f"{game.name}: LineHeuristic plays draw_v0 / block_v0 only (engines whose "
                              f"heuristic is 'line')")
        self.table = game.action_table()
        self.n = game.num_players
        self.np1 = game.config.max_pip + 1
        self.nt = game.n_tiles
        self.w = dict(pips=pips, double=double, variety=variety, follow=follow, block=block, scarce=scarce,
                      go_out=go_out, endgame=endgame)
        self._rng = np.random.default_rng(seed)
        self._pip_tiles = [np.flatnonzero((TILE_A[:self.nt] == q) | (TILE_B[:self.nt] == q)) for q in range(self.np1)]

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def scores(self, observation: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(legal actions, their scores) - exposed for tests and inspection."""
        o = self.game.decode(observation)
        w = self.w
        hand = o["hand"] > 0.5
        played = o["played_by"].sum(axis=0) > 0.5
        out_of_game = hand | played  # tiles opponents cannot hold
        ends = o["ends"]
        empty = ends.sum() < 0.5
        left = int(ends[0].argmax())
        right = int(ends[1].argmax())
        voids = o["voids"] > 0.5
        sizes = o["hand_sizes"]
        min_opp = sizes[1:].min() if self.n > 1 else 7
        boost = 1.0 + w["endgame"] * (min_opp <= 2)
        legal = np.flatnonzero(action_mask)
        out = np.empty(legal.size)
        for i, act in enumerate(legal):
            t = int(self.table.tile[act])
            a, b = int(TILE_A[t]), int(TILE_B[t])
            if empty:
                new = (a, b)
            else:
                end = int(self.table.arm[act])
                v = left if end == 0 else right
                x = b if a == v else a
                new = (x, right) if end == 0 else (left, x)
            rest = hand.copy()
            rest[t] = False
            if not rest.any():
                out[i] = w["go_out"]
                continue
            rest_ids = np.flatnonzero(rest)
            nums = np.zeros(self.np1, dtype=bool)
            nums[TILE_A[rest_ids]] = True
            nums[TILE_B[rest_ids]] = True
            follow = sum(1 for r in rest_ids if TILE_A[r] in new or TILE_B[r] in new)
            block = 0.0
            for r in range(1, self.n):
                share = (voids[r, new[0]] + voids[r, new[1]]) / 2.0
                block += share * (2.0 if r == 1 else 1.0)
            scarce = 0.0
            for q in set(new):
                ids = self._pip_tiles[q]
                scarce += out_of_game[ids].mean()
            scarce /= len(set(new))
            out[i] = (w["pips"] * (a + b) + w["double"] * (a == b) + w["variety"] * nums.sum()
                      + w["follow"] * min(follow, 3) + boost * (w["block"] * block + w["scarce"] * scarce))
        return legal, out

    def best(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """The legal actions of the best score (act picks one of them uniformly)."""
        legal, s = self.scores(observation, action_mask)
        if legal.size == 0:
            raise ValueError("LineHeuristic.act: the action mask has no legal action")
        return legal[np.isclose(s, s.max())]

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        best = self.best(observation, action_mask)
        return int(best[self._rng.integers(best.size)]) if best.size > 1 else int(best[0])

    def action_probs(self, observation: np.ndarray, action_mask: np.ndarray) -> np.ndarray:
        """`act`'s probabilities: uniform over the tied best-scoring legal actions."""
        return uniform_over(self.best(observation, action_mask), np.asarray(action_mask).size)
