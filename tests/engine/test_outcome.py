"""One outcome rule (domino_envs/outcome.py): win shares with ties shared and finishing ranks, fed the
same random returns with planted ties through every place that scores a finished game, which must agree.

The callers: the evaluation harness (training/evaluate.py) and ratings (training/benchmark/ratings.py)
use the functions themselves; the learners' win-mode rewards (ppo, dmc, imitation) use
`centered_win_shares`; the PIMC search's rollouts the compiled twin through `agents/pimc.py`'s
`_score`; human play the winners it announces; the example learner `win_shares`. A source check makes
sure no module scores ties on its own again.
"""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from domino_envs import outcome
from domino_envs.outcome import TIE_TOLERANCE, centered_win_shares, finishing_ranks, win_share_of, win_shares

ROOT = Path(__file__).resolve().parents[2]


def returns_with_ties(rng: np.random.Generator, games: int, n: int, integer: bool) -> np.ndarray:
    """Random returns where about half the games have a tie (at the top or below it): integer points,
    or floats with a rounding-sized perturbation on the tied copies."""
    r = rng.integers(-20, 21, size=(games, n)).astype(np.float64)
    for g in range(games):
        if rng.random() < 0.5:
            a, b = rng.choice(n, size=2, replace=False)
            r[g, b] = r[g, a]
            if rng.random() < 0.5:
                r[g, :] = r[g, a]  # everyone tied
    if not integer:
        r += rng.uniform(-TIE_TOLERANCE / 4, TIE_TOLERANCE / 4, size=r.shape) * (rng.random(r.shape) < 0.5)
        r *= 1.0  # float returns as the learners accumulate them
    return r


@pytest.mark.parametrize("n", [2, 3, 4, 6])
@pytest.mark.parametrize("integer", [True, False])
def test_every_caller_scores_random_games_with_ties_alike(n, integer):
    from domino_agents.pimc import _score
    from domino_training.benchmark import ratings
    from domino_training.evaluate import win_shares as evaluate_win_shares

    rng = np.random.default_rng(n * 10 + integer)
    games = returns_with_ties(rng, 400, n, integer)
    batch = win_shares(games)
    ranks = np.array([finishing_ranks(r) for r in games])
    assert np.allclose(batch.sum(axis=1), 1.0)
    for g, r in enumerate(games):
        one = win_shares(r)
        assert np.array_equal(one, batch[g])
        assert np.array_equal(evaluate_win_shares(r), one)
        assert np.array_equal(ratings.finishing_ranks(r), ranks[g])
        # the ranks say the same: the winners are the seats ranked 0, each with 1/(how many)
        top = ranks[g] == 0
        assert np.array_equal(one > 0, top) and np.allclose(one[top], 1.0 / top.sum())
        # a seat that did strictly better has a strictly better rank
        for i in range(n):
            for j in range(n):
                if r[i] > r[j] + TIE_TOLERANCE:
                    assert ranks[g][i] < ranks[g][j]
        # the compiled twin, seat by seat, and PIMC's rollout scoring (returns are ints there)
        for seat in range(n):
            assert win_share_of(r, n, seat) == pytest.approx(one[seat], abs=1e-15)
        if integer:
            out = np.zeros((1, 2))
            tot = r.astype(np.int64)
            for seat in range(n):
                out[:] = 0.0
                _score(tot, np.zeros(n, dtype=np.int64), n, seat, out, 0)
                assert out[0, 0] == pytest.approx(one[seat], abs=1e-15) and out[0, 1] == tot[seat]
    # the learners' win-mode reward: the share less the fair share, zero-sum per game
    centered = centered_win_shares(games)
    assert np.allclose(centered, batch - 1.0 / n) and np.allclose(centered.sum(axis=1), 0.0)


def test_ties_and_near_ties():
    assert win_shares([3, 3, 1]).tolist() == [0.5, 0.5, 0.0]
    assert win_shares([2, 2, 2, 2]).tolist() == [0.25] * 4
    assert win_shares([1.0, 1.0 + TIE_TOLERANCE / 2]).tolist() == [0.5, 0.5]  # rounding, not a difference
    assert win_shares([1.0, 1.0 + 1e-6]).tolist() == [0.0, 1.0]
    assert finishing_ranks([5, 9, 9, 1]).tolist() == [2, 0, 0, 3]
    assert centered_win_shares([4, 0]).tolist() == [0.5, -0.5]


def test_no_module_scores_ties_on_its_own():
    """The rule lives in domino_envs/outcome.py only: no other module of the library, the agents or
    the example learner compares returns against their maximum with np.isclose (the six copies this
    replaced did), and each caller named in outcome's docstring imports from it."""
    offenders = []
    for folder in ("domino_envs", "agents", "training", "docs/examples"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "outcome.py" and path.parent.name == "domino_envs":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "isclose"
                        and ".max(" in ast.unparse(node)):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []
    for rel in ("training/evaluate.py", "training/benchmark/ratings.py", "training/learners/ppo.py",
                "training/learners/dmc.py", "training/learners/imitate.py", "agents/pimc.py",
                "training/tools/play.py", "docs/examples/my_learner.py"):
        assert "from domino_envs.outcome import" in (ROOT / rel).read_text(), rel
    assert outcome.__doc__ and "centered_win_shares" in outcome.__doc__
