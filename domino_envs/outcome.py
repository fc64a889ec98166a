"""How a finished game is scored between its seats: win shares and finishing ranks, defined once.

Every game ends with one return per seat (points, chips or pips, in the game's reward units). The
seats with the top return share the game's one win: each of the w tied seats gets 1/w, so the shares
of a game sum to 1 and the fair share of n seats is 1/n. Finishing ranks are competition ranks
(0 = best; equal returns share the better rank). Returns within `TIE_TOLERANCE` of each other count
as equal: the engines' returns are integers, and a learner's accumulated float rewards may carry
rounding from scaling, never a real difference this small.

Every caller uses these: the evaluation harness and ratings (training/evaluate.py,
training/benchmark/ratings.py), the learners' win-mode rewards (`centered_win_shares`: ppo, dmc,
imitation), the example learner, and the PIMC search's rollouts through the compiled twin
`win_share_of`. tests/engine/test_outcome.py feeds them the same random returns with ties.
"""
from __future__ import annotations

import numpy as np
from numba import njit

TIE_TOLERANCE = 1e-9  # returns closer than this to the top return tie with it


def win_shares(returns) -> np.ndarray:
    """Each seat's share of the game's one win: 1/w for each of the w seats with the top return, 0
    for the others. `returns` is one game's returns (n,) or a batch of games (games, n)."""
    r = np.asarray(returns, dtype=np.float64)
    winners = r >= r.max(axis=-1, keepdims=True) - TIE_TOLERANCE
    return winners / winners.sum(axis=-1, keepdims=True)


def centered_win_shares(returns) -> np.ndarray:
    """Win shares less the fair share 1/n: the zero-sum terminal reward of the learners' win mode
    (positive for a winner, negative for a loser, 0 for everyone when all tie)."""
    r = np.asarray(returns, dtype=np.float64)
    return win_shares(r) - 1.0 / r.shape[-1]


def finishing_ranks(returns) -> np.ndarray:
    """Competition ranks of one game's returns (0 = best; equal returns share the better rank):
    a seat's rank is how many seats did strictly better."""
    r = np.asarray(returns, dtype=np.float64)
    return (r[None, :] > r[:, None] + TIE_TOLERANCE).sum(axis=1)


@njit(cache=True, inline="always")
def win_share_of(returns, n_players, seat):
    """The compiled twin of `win_shares` for one seat of one game (the PIMC rollouts score with it):
    1/w if `seat` is among the w seats with the top return of returns[:n_players], else 0."""
    top = returns[0]
    for k in range(1, n_players):
        if returns[k] > top:
            top = returns[k]
    if returns[seat] < top - TIE_TOLERANCE:
        return 0.0
    w = 0
    for k in range(n_players):
        if returns[k] >= top - TIE_TOLERANCE:
            w += 1
    return 1.0 / w
