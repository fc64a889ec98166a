"""Intervals and aggregates, in one place: every table the project publishes takes its numbers from here.

- `Stat`: mean and 95% normal interval of per-deal values (the evaluation harness, ratings' partner table).
- `trimmed_means`, `stratified_resamples`, `interval_estimates`, `improvement`: rliable's IQM, stratified
  bootstrap and probability of improvement, vectorized over resamples (the benchmark's aggregates;
  tests/benchmark/test_benchmark.py checks them against rliable and scipy).
- `grand_mean_interval`: the percentile interval of a seeds x deals matrix's grand mean, seeds and deals
  resampled together (learned best responses over several seeds).
- `percentile_interval`: the 2.5 and 97.5 percentiles of bootstrap replicates (ratings' refits).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054  # the standard normal's 97.5% quantile


@dataclass
class Stat:
    """Mean and 95% normal interval of per-deal values."""

    mean: float
    lo: float
    hi: float
    n: int

    @classmethod
    def of(cls, values, clip: tuple[float, float] | None = None) -> Stat:
        v = np.asarray(values, dtype=np.float64)
        n = int(v.size)
        if n == 0:
            return cls(math.nan, math.nan, math.nan, 0)
        m = float(v.mean())
        half = Z95 * float(v.std(ddof=1)) / math.sqrt(n) if n > 1 else math.inf
        lo, hi = m - half, m + half
        if clip is not None:
            lo, hi = max(lo, clip[0]), min(hi, clip[1])
        return cls(m, lo, hi, n)

    def as_dict(self) -> dict:
        return {"mean": self.mean, "lo": self.lo, "hi": self.hi}


def percentile_interval(replicates, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The 95% percentile interval of bootstrap replicates along `axis`."""
    b = np.asarray(replicates, dtype=np.float64)
    return np.percentile(b, 2.5, axis=axis), np.percentile(b, 97.5, axis=axis)


def trimmed_means(samples: np.ndarray) -> np.ndarray:
    """IQM of each row: the mean of the middle half, cutting int(n / 4) values from each end
    (scipy's trim_mean(x, 0.25), which rliable's aggregate_iqm is)."""
    n = samples.shape[-1]
    k = int(0.25 * n)
    return np.sort(samples, axis=-1)[..., k:n - k].mean(axis=-1)


def stratified_resamples(x: np.ndarray, reps: int, rng: np.random.Generator) -> np.ndarray:
    """reps resamples of a runs x games matrix, the runs of each game drawn with replacement on
    their own (rliable's stratified bootstrap over runs, the games kept): (reps, runs, games)."""
    runs, games = x.shape
    return x[rng.integers(0, runs, size=(reps, runs, games)), np.arange(games)]


def interval_estimates(x: np.ndarray, reps: int, rng: np.random.Generator) -> dict:
    """IQM and mean of a runs x games score matrix with percentile 95% intervals of the stratified
    bootstrap. The same estimates as rliable's get_interval_estimates with aggregate_iqm and
    aggregate_mean, vectorized (rliable calls its function once per resample, about 3 ms each;
    tests/benchmark/test_benchmark.py checks the two agree)."""
    b = stratified_resamples(x, reps, rng).reshape(reps, -1)
    iqm, mean = trimmed_means(b), b.mean(axis=1)
    return {"iqm": float(trimmed_means(x.ravel())), "iqm_lo": float(np.percentile(iqm, 2.5)),
            "iqm_hi": float(np.percentile(iqm, 97.5)), "mean": float(x.mean()),
            "mean_lo": float(np.percentile(mean, 2.5)), "mean_hi": float(np.percentile(mean, 97.5))}


def improvement(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """P(a run of X beats a run of Y) on each game, averaged over games (ties half), for stacks of
    resamples (..., runs, games): rliable's probability_of_improvement (the Mann-Whitney U / mn)."""
    gt = (x[..., :, None, :] > y[..., None, :, :]).mean(axis=(-3, -2))
    eq = (x[..., :, None, :] == y[..., None, :, :]).mean(axis=(-3, -2))
    return (gt + 0.5 * eq).mean(axis=-1)


def grand_mean_interval(matrix: np.ndarray, reps: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of the grand mean of a [seeds, deals] matrix, resampling seeds and
    deals (columns are the same deals in every row, so they are resampled together)."""
    rng = np.random.default_rng(seed)
    s, d = matrix.shape
    rows = rng.integers(s, size=(reps, s))
    cols = rng.integers(d, size=(reps, d))
    means = np.array([matrix[np.ix_(r, c)].mean() for r, c in zip(rows, cols)])
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))
