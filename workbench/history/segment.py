"""Where a series' level moves: a weighted, outlier-robust segmentation of its log medians.

Why this shape. Each run says how far its own median can be trusted (its round spread, its precision, its
A/A twin): a run whose rounds disagreed by 19% must not count as much as one whose rounds agreed to 0.5%,
so each point is weighted by 1 / σᵢ², as asv's ``step_detect`` weights each point by its interval.
The search is exact optimal partitioning here (:func:`pelt`, on the weights' cumulative sums), not
``ruptures``, on measured evidence: ruptures' ``Pelt`` with this same weighted cost (a ``BaseCost`` on
cumulative sums, O(1) per segment, ``min_size`` = :data:`MIN_RUNS`) finds the same cuts (the brute-force
check and every history test pass on it) but judges 1,000 runs × 100 cells (tests/perf/history.py part c)
in 52.6 CPU s (124 s wall, load 4.4-6.1) against 1.9 CPU s (4.5 s) here, target 10 s: a series without a
change prunes nothing, and ruptures copies a dict per candidate (58 CPU s against 0.7 for the search alone,
part d). ``jump`` 3 or 5 brings it to 7.9 or 4.7 CPU s but puts cuts at multiples of the jump only: other
cuts than the exact search in 126 or 154 of 200 stepped series (a step at run 7 is never found at run 7).

A run's own σᵢ is not the whole truth: three rounds often understate it, and a host that ran slow for a
whole run looks precise from inside it. Three rules keep such runs from being called changes:

- **the series' noise**: each run's σ is λ × its own and a between-run τ in quadrature, fitted to the
  differences of successive runs (see :func:`series_noise`). Successive differences barely see a step (one
  difference of many) and the fit ignores a few wild ones, so a step cannot inflate the noise that should
  reveal it — the plain spread of a series with a 15% step is mostly the step.
- **outliers**: a run far (:data:`OUTLIER_Z` σ) from every run near it on both sides is set aside before the
  search.
- **persistence**: a segment has :data:`MIN_RUNS` runs at least, and a change must stand when any one run
  on either side of it is left out (:func:`kept_cuts`): one run off by 20% and back, or a last run alone,
  never makes a change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Runs on each side of a change, at least (2 let a busy host's two-run dips through as pairs of changes).
MIN_RUNS = 3
#: Penalty of a new segment in units of log n (the weighted cost is in units of σ², so BIC's is 1-2;
#: calibrated by tests/perf/history.py for at most 1 false alarm per 100 series of 50 runs without a step).
PENALTY_PER_LOG_N = 4.0
#: A run this many σ from the runs on both sides of it is an outlier.
OUTLIER_Z = 4.0
#: The least noise a run is given (0.2%): a timer's own resolution, below which no step is told apart.
MIN_SIGMA = 0.002
#: median |z| of a standard normal: the consistency constant of the noise's robust spread.
_MEDIAN_ABS_Z = 0.6744897501960817
#: Degrees of freedom of the t the noise's shape is fitted under (1, a Cauchy: with a dozen runs, one step
#: among the differences must not decide the shape).
_T_DOF = 1.0
#: Successive differences the shape is fitted on, at most (a 1,000-run series is fitted on an even sample).
_FIT_DIFFS = 200


@dataclass(frozen=True)
class Noise:
    """Each run's σ on the log scale (λ × its own, and τ, in quadrature), λ, τ, and the series' typical σ."""

    sigmas: np.ndarray
    between: float
    scale: float = 1.0

    @property
    def typical(self) -> float:
        """One run's σ, as reported: the root of the median variance."""
        return float(math.sqrt(np.median(self.sigmas ** 2))) if len(self.sigmas) else MIN_SIGMA


def _t_fit(d: np.ndarray, a: np.ndarray) -> tuple[float, float]:
    """(λ, τ) of the variance λ²a + 2τ² that best fits the differences ``d`` under a Student t of
    :data:`_T_DOF` degrees of freedom (a step or a wild run among them costs little), on a grid."""
    if len(d) > _FIT_DIFFS:  # the shape is the series' whole: an even sample of its differences tells it
        keep = np.linspace(0, len(d) - 1, _FIT_DIFFS).astype(int)
        d, a = d[keep], a[keep]
    lam = np.concatenate([[0.0], np.geomspace(0.05, 30.0, 24)])[:, None, None]
    tau = np.concatenate([[0.0], np.geomspace(MIN_SIGMA / 4, max(float(d.max()), MIN_SIGMA), 24)])[None, :, None]
    v = np.maximum(lam ** 2 * a[None, None, :] + 2 * tau ** 2, MIN_SIGMA ** 2)
    nu = _T_DOF
    loglik = (-0.5 * np.log(v) - (nu + 1) / 2 * np.log1p(d[None, None, :] ** 2 / (nu * v))).sum(axis=2)
    i, j = np.unravel_index(int(np.argmax(loglik)), loglik.shape)
    return float(lam[i, 0, 0]), float(tau[0, j, 0])


def series_noise(x: np.ndarray, own: np.ndarray) -> Noise:
    """Each run's σ: λ × its own (floored at :data:`MIN_SIGMA`) and a between-run τ (what no run sees of
    itself: the host's slow phases), in quadrature. The shape (how much of each; λ = 0 where the runs' own
    σ tell nothing of their errors) fits the successive differences Δx best under a t; the size then makes
    their robust spread that of a normal: median |Δx| / √(σᵢ² + σᵢ₋₁²) = 0.6745. The typical run is never
    given less noise than the typical run measured of itself."""
    own = np.maximum(np.nan_to_num(np.asarray(own, dtype=float)), MIN_SIGMA)
    if len(x) < 3:
        return Noise(own, 0.0)
    d = np.abs(np.diff(x))
    a = own[1:] ** 2 + own[:-1] ** 2
    lam, tau = _t_fit(d, a)
    k = float(np.median(d / np.sqrt(np.maximum(lam * lam * a + 2 * tau * tau, MIN_SIGMA ** 2)))) / _MEDIAN_ABS_Z
    sigmas = np.sqrt((lam * k * own) ** 2 + (tau * k) ** 2)
    floor = float(np.median(own)) / math.sqrt(float(np.median(sigmas ** 2)) or MIN_SIGMA ** 2)
    k *= max(1.0, floor)  # the typical run is no more precise than the typical run says it is
    return Noise(np.maximum(np.sqrt((lam * k * own) ** 2 + (tau * k) ** 2), MIN_SIGMA), tau * k, lam * k)


def outliers(x: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Runs more than :data:`OUTLIER_Z` σ from every one of the 2 runs before them and of the 2 after them
    (the first run: of the 2 after it), each pair's σ the two runs' in quadrature. The first run of a step
    is near the runs after it, so it stays. The last run is never one: nothing after it says whether it
    starts a step, and a change needs :data:`MIN_RUNS` runs after it anyway."""
    n = len(x)
    if n < 3:
        return np.zeros(n, dtype=bool)

    def z(k: int) -> np.ndarray:
        """|x_i - x_i+k| in σ, inf where i+k is out of the series."""
        out = np.full(n, np.inf)
        i = np.arange(max(0, -k), min(n, n - k))
        out[i] = np.abs(x[i] - x[i + k]) / np.hypot(s[i], s[i + k])
        return out

    before, after = np.minimum(z(-1), z(-2)), np.minimum(z(1), z(2))
    wild = (before > OUTLIER_Z) & (after > OUTLIER_Z)  # the first run has no run before: inf
    wild[-1] = False
    return wild


def pelt(x: np.ndarray, w: np.ndarray, penalty: float, min_size: int = MIN_RUNS) -> list[int]:
    """The optimal partition of ``x`` into segments of constant weighted mean (each new segment costs
    ``penalty``): the first index of each new segment. Exact optimal partitioning; the ``min_size`` ends
    t, t+1, ... whose segments start before t are solved together (a third of the Python steps)."""
    n = len(x)
    if n < 2 * min_size:
        return []
    c0, c1, c2 = (np.concatenate([[0.0], np.cumsum(v)]) for v in (w, w * x, w * x * x))
    best = np.full(n + 1, np.inf)
    best[0] = -penalty
    last = np.zeros(n + 1, dtype=int)
    for t in range(min_size, n + 1, min_size):
        ends = np.arange(t, min(t + min_size, n + 1))
        e = ends[:, None]
        mean_part = (c1[e] - c1[None, :t]) ** 2 / (c0[e] - c0[None, :t])
        total = best[None, :t] + (c2[e] - c2[None, :t]) - mean_part
        for j, end in enumerate(ends):
            total[j, end - min_size + 1:] = np.inf  # a segment shorter than min_size
        k = np.argmin(total, axis=1)
        best[ends] = total[np.arange(len(ends)), k] + penalty
        last[ends] = k
    cuts = []
    t = n
    while last[t] > 0:
        t = int(last[t])
        cuts.append(t)
    return cuts[::-1]


def _steps(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(log steps, standard errors) between sides given as sums (Σw, Σwx, Σwx², runs), element-wise; the
    error grows where the sides scatter more than their σ say."""
    (wa, sa, qa, na), (wb, sb, qb, nb) = a, b
    ma, mb = sa / wa, sb / wb
    chi2 = np.maximum(qa - sa * ma + qb - sb * mb, 0.0)
    scale = np.maximum(1.0, np.sqrt(chi2 / np.maximum(na + nb - 2, 1)))
    return mb - ma, scale * np.sqrt(1 / wa + 1 / wb)


def _sums(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(v, dtype=float) for v in (w.sum(), w @ x, w @ (x * x), len(x)))


def step(x: np.ndarray, w: np.ndarray, a: slice, b: slice) -> tuple[float, float]:
    """(log step, its standard error) between the weighted means of ``x[a]`` and ``x[b]``."""
    d, se = _steps(_sums(x[a], w[a]), _sums(x[b], w[b]))
    return float(d), float(se)


def _left_out(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, ...]:
    """A side's sums with nothing left out, then with each of its runs left out in turn."""
    whole = _sums(x, w)
    return tuple(np.concatenate([[t], t - p]) for t, p in zip(whole, (w, w * x, w * x * x, np.ones_like(x)),
                                                                   strict=True))


def _score(x: np.ndarray, w: np.ndarray, a: slice, b: slice, floor: float, z: float) -> float:
    """How well a step between ``x[a]`` and ``x[b]`` clears both bars (>= 1: it does), at its weakest when
    any one run of either side is left out (a step one run makes is no step)."""
    la, lb = _left_out(x[a], w[a]), _left_out(x[b], w[b])
    na, nb = len(la[0]), len(lb[0])
    side_a = tuple(np.concatenate([v, np.full(nb - 1, v[0])]) for v in la)
    side_b = tuple(np.concatenate([np.full(na, v[0]), v[1:]]) for v in lb)
    d, se = _steps(side_a, side_b)
    if np.any(d * d[0] <= 0):
        return 0.0
    bars = np.abs(d) / (z * se)
    if floor > 0:
        bars = np.minimum(bars, np.abs(d) / floor)
    return float(bars.min())


def kept_cuts(x: np.ndarray, w: np.ndarray, cuts: list[int], threshold: float, z: float) -> list[int]:
    """``cuts`` less those whose step is below ``threshold`` (relative) or within ``z`` standard errors of
    0 — with all runs of both sides or with any one of them left out —, the weakest dropped first and its
    neighbours' steps measured again on the merged segments."""
    cuts = list(cuts)
    floor = math.log1p(threshold)
    while cuts:
        bounds = [0, *cuts, len(x)]
        scores = [_score(x, w, slice(bounds[i], c), slice(c, bounds[i + 2]), floor, z)
                  for i, c in enumerate(cuts)]
        weakest = int(np.argmin(scores))
        if scores[weakest] >= 1.0:
            break
        del cuts[weakest]
    return cuts
