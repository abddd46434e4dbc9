"""Verdicts that say what the evidence shows: faster, slower, same (within a small floor) or inconclusive.

Samples inside one stream are not independent draws: the machine drifts (load, clocks, other processes),
so two streams taken at different moments differ by far more than their within-stream spread suggests
(measured on our 2-core machines: ±10–60% run to run, against within-run IQRs of a few percent). A test
on one stream's samples (bootstrap over samples, Mann–Whitney) therefore calls identical code faster or
slower with p-values like 1e-150.

The unit of evidence here is the *round*: a sweep measures every cell once per round, the contenders of
a cell (one kernel, size and dtype) back to back in an order shuffled per round, so drift hits them alike.
Everything is on log times:

- **paired** (a variant against its baseline in the same run, round by round): ``d_i = log(a_i / b_i)``,
  in which drift common to both cancels. The effect is ``median(d)``; the pair's noise is its own robust
  spread of ``d``, moderated (empirical Bayes, as limma's moderated t) by the typical paired spread of
  its kernel in the run (:func:`typical_noise`), which counts as :data:`PRIOR_DF` rounds of evidence. A
  disturbed pair therefore widens only its own interval; a quiet pair is not blunted by a noisy one.
  The interval is a t interval on those degrees of freedom.
- **unpaired** (the same cell in two runs): the effect is ``median(log a) - median(log b)``; the noise
  adds both runs' round spreads (:func:`round_sigma`) to the run-to-run spread seen across all cells of
  the comparison (:func:`run_to_run_noise`), which a single cell cannot see.

The decision (:func:`decide`) reads the interval, whose coverage is stated with it (:attr:`Verdict.coverage`):
"faster" / "slower" when it excludes no change and the effect exceeds :data:`MIN_EFFECT`; "same" only when
the whole interval lies within ±:data:`SAME_WITHIN` (a floor that is itself small); otherwise
"inconclusive", with the half-width of the interval (the smallest effect the comparison could have seen)
and what would settle it (:attr:`Verdict.settle`). ``docs/statistics.md`` explains the rules and the
figures measured with ``tests/perf/power.py``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

VERDICTS = ("faster", "slower", "same", "inconclusive", "insufficient samples")

#: Differences below this are never called faster or slower (5%, also the CI gate's default).
MIN_EFFECT = 0.05
#: "same" only when the whole interval lies within ±this: a wider interval cannot say "same".
SAME_WITHIN = 0.10
#: Rounds needed for a round-based verdict; fewer fall back to one stream per side.
MIN_ROUNDS = 3
#: Run-to-run noise (log sigma) assumed for a single stream, whose drift cannot be seen from inside it.
STREAM_NOISE = 0.15
#: The coverage every interval is made to have (t or normal quantiles on the noise it rests on).
CONFIDENCE = 0.95
#: A cell is flagged noisy when its spread across rounds (or within its stream) exceeds this.
NOISY_SPREAD = 0.10
#: Weight, in rounds (degrees of freedom), of the kernel's typical paired spread in a pair's noise.
PRIOR_DF = 4.0
#: The standard error of a median of n values is about this many times that of their mean (normal data).
MEDIAN_EFFICIENCY = 1.2533


@dataclass(frozen=True)
class Verdict:
    """``speedup`` = time(A) / time(B): above 1 means B (the variant, or the newer run) is faster."""

    speedup: float
    #: The interval of the speed-up, with probability ``coverage`` of holding the true one.
    ci_low: float
    ci_high: float
    #: The smallest relative difference this comparison could have seen (e.g. 0.12 = 12%): the interval's
    #: half-width, at least MIN_EFFECT; for "same", the bound the whole interval lies within.
    floor: float
    #: The noise the interval came from (log sigma of one round's difference, or of one stream).
    noise: float
    verdict: str
    n_a: int
    n_b: int
    #: "paired rounds", "rounds" or "one stream" (fewer than MIN_ROUNDS rounds).
    basis: str
    #: The interval's coverage (0.95: a 95% interval).
    coverage: float = CONFIDENCE
    #: For "inconclusive" and "insufficient samples": what would settle it; else None.
    settle: str | None = None

    @property
    def label(self) -> str:
        """The verdict in words with its floor: "same (within ±4%)", "inconclusive (±38%)", "faster"."""
        return verdict_label(self.verdict, self.floor)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def verdict_label(verdict: str, floor: float) -> str:
    """"same (within ±X%)" / "inconclusive (±X%)" with the floor; other verdicts as they are."""
    if verdict in ("same", "inconclusive") and floor is not None and math.isfinite(floor):
        return f"same (within ±{pct(floor)})" if verdict == "same" else f"inconclusive (±{pct(floor)})"
    return verdict


def pct(x: float) -> str:
    """A relative difference as a percentage with sensible digits: 4.2%, 38%, 1,155%."""
    v = 100 * x
    return f"{v:.1f}%" if v < 10 else f"{v:,.0f}%"


def clean(values: Iterable[float] | None) -> np.ndarray:
    """Finite positive times as an array (None, NaN, zero and negative values dropped)."""
    if values is None:
        return np.empty(0)
    arr = np.asarray(list(values), dtype=float)
    return arr[np.isfinite(arr) & (arr > 0)]


#: From this many rounds on, a cell's spread is 1.4826 × MAD (robust to an outlier round); below, the
#: standard deviation (see :func:`round_sigma`).
ROBUST_FROM = 5
#: Fewer matched cells than this cannot show the run-to-run noise; :data:`STREAM_NOISE` stands in.
MIN_CELLS = 5


def robust_sigma(x: np.ndarray) -> float:
    """Scale of ``x`` robust to outliers: 1.4826 × MAD for ≥ 3 values, else the plain spread."""
    x = np.asarray(x, float)
    if len(x) < 2:
        return float("nan")
    if len(x) == 2:
        return float(abs(x[0] - x[1]) / math.sqrt(2))
    return float(1.4826 * np.median(np.abs(x - np.median(x))))


def round_sigma(x: np.ndarray) -> float:
    """Spread (sigma) of a few rounds: :func:`robust_sigma` from :data:`ROBUST_FROM` values on, else the
    sample standard deviation.

    Below five values no value can be told an outlier, and the MAD misleads: of 3 rounds, two that
    agree make it ~0 however far the third is (measured under load: rounds of 0.89, 2.91 and 2.92 ms
    gave 0.4%, and identical code was called 5x slower). The standard deviation lets every round count.
    """
    x = np.asarray(x, float)
    if len(x) < ROBUST_FROM:
        return float(np.std(x, ddof=1)) if len(x) >= 2 else float("nan")
    return robust_sigma(x)


def median_interval(x: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Order-statistic interval of the median: no assumption on the distribution of rounds.

    With n values the interval [x_(k), x_(n-k+1)] covers the median with probability
    1 - 2·P(Binomial(n, 1/2) < k); k is the largest index keeping that at least ``confidence``,
    and 1 when n is too small for it (n = 5 gives min..max, 94% coverage).
    """
    s = np.sort(x)
    n = len(s)

    def below(j: int) -> float:  # P(Binomial(n, 1/2) <= j)
        return sum(math.comb(n, i) for i in range(j + 1)) / 2 ** n

    k = 1
    while k + 1 <= (n + 1) // 2 and 1 - 2 * below(k) >= confidence:
        k += 1
    return float(s[k - 1]), float(s[n - k])


def _decide(effect: float, lo: float, hi: float, floor_log: float) -> str:
    if abs(effect) <= floor_log:
        return "same"
    if effect > 0 and lo > 0:
        return "faster"
    if effect < 0 and hi < 0:
        return "slower"
    return "ambiguous"


def _verdict(effect: float, lo: float, hi: float, noise: float, min_effect: float, k: float, n_a: int,
             n_b: int, basis: str) -> Verdict:
    floor_log = max(math.log1p(min_effect), k * noise)
    return Verdict(math.exp(effect), math.exp(lo), math.exp(hi), math.expm1(floor_log), noise,
                   _decide(effect, lo, hi, floor_log), n_a, n_b, basis)


def _insufficient(a: np.ndarray, b: np.ndarray, basis: str) -> Verdict:
    ratio = float(np.median(a) / np.median(b)) if len(a) and len(b) else float("nan")
    nan = float("nan")
    return Verdict(ratio, nan, nan, nan, nan, "insufficient samples", len(a), len(b), basis)


def paired_verdict(rounds_a: Iterable[float], rounds_b: Iterable[float], *, min_effect: float = MIN_EFFECT,
                   k: float = K_NOISE, typical: float | None = None, min_rounds: int = MIN_ROUNDS,
                   confidence: float = CONFIDENCE) -> Verdict:
    """A (baseline) against B (variant) measured in the same rounds; ``rounds_*[i]`` is round i's median.

    The noise is the spread of the per-round log differences. ``typical`` (log sigma) is that spread
    for a typical pair of the same run (:func:`typical_noise`). From :data:`ROBUST_FROM` rounds on it
    is a floor under the pair's own robust spread (a spread of a handful of rounds can come out small
    by chance). With fewer rounds the pair's own spread cannot be estimated — one disturbed round makes
    it huge (standard deviation) or two agreeing rounds make it ~0 (MAD) — and the typical spread is
    the noise; without one, the pair's standard deviation is used.
    """
    a, b = np.asarray(list(rounds_a), float), np.asarray(list(rounds_b), float)
    ok = np.isfinite(a) & np.isfinite(b) & (a > 0) & (b > 0)
    a, b = a[ok], b[ok]
    if len(a) < min_rounds:
        return _insufficient(a, b, "paired rounds")
    d = np.log(a) - np.log(b)
    effect = float(np.median(d))
    lo, hi = median_interval(d, confidence)
    if typical is None:
        noise = round_sigma(d)
    elif len(d) < ROBUST_FROM:
        noise = typical
    else:
        noise = max(robust_sigma(d), typical)
    return _verdict(effect, lo, hi, noise, min_effect, k, len(a), len(b), "paired rounds")


def unpaired_verdict(rounds_a: Iterable[float], rounds_b: Iterable[float], *, run_noise: float = 0.0,
                     min_effect: float = MIN_EFFECT, k: float = K_NOISE, noise_floor: float = 0.0,
                     min_rounds: int = MIN_ROUNDS, confidence: float = CONFIDENCE, rounds: bool = True) -> Verdict:
    """The same cell in two runs (A earlier, B later): per-round medians of each.

    ``run_noise`` (log sigma) is the run-to-run spread measured across the cells of the two runs
    (:func:`run_to_run_noise`); it is added because no single cell can see it. With fewer than
    ``min_rounds`` rounds on a side, or ``rounds=False`` (a side's values are the samples of one stream,
    not round medians), the values only place each side's median and the noise is :data:`STREAM_NOISE`.
    """
    a, b = clean(rounds_a), clean(rounds_b)
    if len(a) == 0 or len(b) == 0:
        return _insufficient(a, b, "rounds" if rounds else "one stream")
    la, lb = np.log(a), np.log(b)
    effect = float(np.median(la) - np.median(lb))
    if not rounds or len(a) < min_rounds or len(b) < min_rounds:
        noise = math.hypot(STREAM_NOISE, run_noise)
        basis = "one stream"
        se = noise
    else:
        sa, sb = max(round_sigma(la), noise_floor), max(round_sigma(lb), noise_floor)
        # the median of n values is ~1.25× noisier than their mean
        se = 1.2533 * math.sqrt(sa ** 2 / len(a) + sb ** 2 / len(b))
        noise = math.hypot(math.hypot(sa, sb), run_noise)
        se = math.hypot(se, run_noise)
        basis = "rounds"
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    return _verdict(effect, effect - z * se, effect + z * se, noise, min_effect, k, len(a), len(b), basis)


def run_to_run_noise(log_ratios: Iterable[float]) -> float:
    """Spread of per-cell log(time A / time B) across the cells of two runs, around their common shift.

    In two runs of the same code every cell's ratio would be the same shift (the machine's state) if
    timings had no cell-specific drift; their scatter is the run-to-run noise one cell cannot see.
    A real change moves some cells far from the rest: the robust spread ignores them as outliers.
    With fewer than :data:`MIN_CELLS` cells the scatter cannot be told from the change, and
    :data:`STREAM_NOISE` (the drift assumed for one stream) stands in.
    """
    x = clean(np.exp(list(log_ratios)))
    return robust_sigma(np.log(x)) if len(x) >= MIN_CELLS else STREAM_NOISE


def typical_noise(diffs: Iterable[Iterable[float]]) -> float:
    """The typical spread of several pairs' per-round log differences (median of :func:`round_sigma`
    over the pairs), for :func:`paired_verdict`. 0 if there are none."""
    sig = [round_sigma(np.asarray(list(d), float)) for d in diffs]
    sig = [x for x in sig if math.isfinite(x)]
    return float(np.median(sig)) if sig else 0.0


def rel_spread(values: Iterable[float]) -> float:
    """Relative spread (log sigma ~ fraction, :func:`round_sigma`) of a cell's round medians or samples;
    NaN with fewer than 2."""
    x = clean(values)
    return round_sigma(np.log(x)) if len(x) >= 2 else float("nan")


def is_noisy(noise: Mapping[str, Any] | float | None, threshold: float = NOISY_SPREAD) -> bool:
    """The noise flag. Of a spread: above ``threshold`` (an unreadable spread is not flagged). Of a stored
    row: its ``noisy`` column, or for rows stored before that column existed, its ``rel_spread``."""
    if isinstance(noise, Mapping):
        flag = noise.get("noisy")
        if flag is not None and not (isinstance(flag, float) and math.isnan(flag)):
            return bool(flag)
        noise = noise.get("rel_spread")
    try:
        spread = float(noise)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return math.isfinite(spread) and spread > threshold
