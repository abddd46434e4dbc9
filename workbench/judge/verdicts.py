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
  in which drift common to both cancels. The effect is ``median(d)``; the pair's noise is its own spread
  of ``d`` (one disturbed round clipped), moderated (empirical Bayes, as limma's moderated t) by the
  typical paired spread of its kernel in the run (:func:`prior_noise`), which counts as :data:`PRIOR_DF`
  rounds of evidence (:func:`paired_noise`). A disturbed pair therefore widens only its own interval; a
  quiet pair is not blunted by a noisy one. The interval is a t interval on those degrees of freedom.
- **unpaired** (the same cell in two runs): the effect is ``median(log a) - median(log b)``; the noise
  adds both runs' round spreads (:func:`round_sigma`) to the run-to-run spread seen across all cells of
  the comparison (:func:`run_to_run_noise`), which a single cell cannot see. Between two runs
  (``workbench compare``) each side counts as the standard error of its median, and the run-to-run part is
  only what the rounds do not explain (:func:`workbench.judge.between_runs.between_run_noise`).

The decision (:func:`decide`) reads the interval, whose coverage is stated with it (:attr:`Verdict.coverage`):
"faster" / "slower" when it excludes no change and the effect exceeds :data:`MIN_EFFECT`; "same" only when
the whole interval lies within ±:data:`SAME_WITHIN` (a floor that is itself small); otherwise
"inconclusive", with the half-width of the interval (the smallest effect the comparison could have seen)
and what would settle it (:attr:`Verdict.settle`). ``docs/statistics.md`` explains the rules and the
figures measured with ``tests/perf/power.py``.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Any, TypedDict

import numpy as np

from workbench.judge.disturbed import (  # re-exported: callers read the disturbed edge and hints from verdicts
    BUSY_RERUN_HINT as BUSY_RERUN_HINT,
)
from workbench.judge.disturbed import DISTURBED_FLOOR as DISTURBED_FLOOR
from workbench.judge.disturbed import IDLE_RERUN_HINT as IDLE_RERUN_HINT
from workbench.judge.disturbed import RERUN_HINT as RERUN_HINT
from workbench.judge.disturbed import is_disturbed as is_disturbed
from workbench.judge.disturbed import pct as pct
from workbench.judge.disturbed import rerun_hint as rerun_hint
from workbench.judge.disturbed import rounds_could as rounds_could
from workbench.judge.disturbed import span_disturbed as span_disturbed
from workbench.judge.disturbed import spread_disturbed as spread_disturbed

# t quantiles (97.5% intervals) and medians of chi2(df) / df, df 1-40, without scipy
from workbench.judge.quantile_tables import CHI2_MEDIAN_RATIOS, T_QUANTILES
from workbench.judge.verdict_labels import verdict_label as verdict_label  # re-exported: callers import it here

VERDICTS = ("faster", "slower", "same", "inconclusive", "insufficient samples")

#: Differences below this are never called faster or slower (5%, also the CI gate's default).
MIN_EFFECT = 0.05
#: "same" only when the whole interval lies within ±this: a wider interval cannot say "same". As small as
#: MIN_EFFECT: with ±10%, a variant doing 10% more work whose interval read [0.91, 1.0] was called "same"
#: (tests/perf/power.py): "same" must rule out the smallest gap a verdict would name.
SAME_WITHIN = 0.05
#: The basis of a verdict on several runs a side (:mod:`workbench.judge.replicates`).
RUNS = "runs"
#: Rounds needed for a round-based verdict; fewer fall back to one stream per side.
MIN_ROUNDS = 3
#: Run-to-run noise (log sigma) assumed for a single stream, whose drift cannot be seen from inside it.
STREAM_NOISE = 0.15
#: The coverage every interval is made to have (t or normal quantiles on the noise it rests on).
CONFIDENCE = 0.975
#: A cell is flagged noisy when its spread across rounds (or within its stream) exceeds this.
NOISY_SPREAD = 0.10
#: Weight, in rounds (degrees of freedom), of the kernel's typical paired spread in a pair's noise.
PRIOR_DF = 4.0
#: A pair's most deviant round counts at most this many typical spreads (see :func:`paired_noise`).
CLIP = 3.0
#: Between runs and for one stream, the interval is ± this many noise sigmas: the noise there is a
#: rough sum of parts (round spread of 3 rounds, run-to-run spread across cells) with heavy tails, and
#: this width, measured on our machines, called 0.49% of identical cells faster or slower (round-based)
#: and 2.95% (one stream): the coverage it is labelled with (:data:`BETWEEN_COVERAGE`) is what it had.
K_BETWEEN = 3.0
BETWEEN_COVERAGE = 0.99
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
    #: "paired blocks" (each round's effect from blocks timed alternately in one visit), "paired rounds",
    #: "rounds" or "one stream" (fewer than MIN_ROUNDS rounds); where rounds taken while the host ran slow were set
    #: aside, "2 paired rounds (1 set aside by the slow host)" or "... too few to pair"
    #: (:mod:`workbench.judge.few_rounds`).
    basis: str
    #: The interval's coverage (0.95: a 95% interval).
    coverage: float = CONFIDENCE
    #: For "inconclusive" and "insufficient samples": what would settle it; else None.
    settle: str | None = None

    @property
    def label(self) -> str:
        """The verdict in words with its floor: "same (within ±4%)", "inconclusive (±38%)", "faster"."""
        return verdict_label(self.verdict, self.floor, self.basis)

    def to_dict(self) -> VerdictFields:
        # its fields are plain values: a shallow copy is asdict's answer, without its recursion (a report
        # turned 100,000 verdicts into rows)
        return VerdictFields(speedup=self.speedup, ci_low=self.ci_low, ci_high=self.ci_high, floor=self.floor,
                             noise=self.noise, verdict=self.verdict, n_a=self.n_a, n_b=self.n_b, basis=self.basis,
                             coverage=self.coverage, settle=self.settle)


class VerdictFields(TypedDict):
    """A :class:`Verdict` as the columns of a comparison table (:meth:`Verdict.to_dict`)."""

    speedup: float
    ci_low: float
    ci_high: float
    floor: float
    noise: float
    verdict: str
    n_a: int
    n_b: int
    basis: str
    coverage: float
    settle: str | None


def median(x: Any) -> float:
    """The median of a few values, as ``np.median`` gives it, without its per-call cost (~20 µs on an array of
    three: a report judging 100,000 rows called it several times a row)."""
    v = x.tolist() if isinstance(x, np.ndarray) else list(x)
    if not v or any(e != e for e in v):  # empty, or a NaN among them: NaN, as numpy says
        return float("nan")
    return float(statistics.median(v))


def clean(values: Iterable[float] | None) -> np.ndarray:
    """Finite positive times as an array (None, NaN, zero and negative values dropped)."""
    if values is None:
        return np.empty(0)
    # an array as it is (list() of one makes a numpy scalar per value: most of this function's time when a
    # report judged a million rows); any other iterable through a list
    arr = np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=float)
    keep = np.isfinite(arr) & (arr > 0)
    return arr if keep.all() and arr.ndim == 1 else arr[keep].ravel()


def parse_samples(value: Any) -> np.ndarray:
    """Times from a row's ``samples_s`` or ``round_medians_s`` (JSON text or a list); empty on NaN/None."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return np.empty(0)
    if isinstance(value, (str, bytes)):
        value = json.loads(value) if value.strip() else []
    return clean(value)


def flag(value: Any) -> bool:
    """A stored yes/no field (``noisy``, ``library``): None and NaN read as no."""
    return value is not None and not (isinstance(value, float) and math.isnan(value)) and bool(value)


#: From this many rounds on, a cell's spread is 1.4826 × MAD (robust to an outlier round); below, the
#: standard deviation (see :func:`round_sigma`).
ROBUST_FROM = 5
#: Fewer matched cells than this cannot show the run-to-run noise; :data:`STREAM_NOISE` stands in.
MIN_CELLS = 5


#: Fields a sweep adds to a row (kept in its ``extra``): the sweep round each round median was measured in
#: (rows that took part in different rounds pair on the rounds they share: a sweep gives undecided pairs
#: extra rounds), and a reference's A/A twin: the reference measured a second time in each round, at
#: another place in its group's order (:class:`workbench.sweep.plan.SweepPlan`), and those rounds' ids.
ROUND_IDS, TWIN_MEDIANS, TWIN_IDS = "round_ids", "aa_round_medians_s", "aa_round_ids"
#: Fields of a row timed beside its default baseline in the same visits (:class:`workbench.measure.timer.Partner`):
#: the baseline's cell key, each visit's effect (the median over the visit's block pairs of log(baseline's
#: block median / the row's)) and that visit's round id; a reference's A/A twin timed beside the reference
#: itself keeps its visits' effects likewise.
PAIR_WITH, PAIR_D, PAIR_IDS = "pair_with", "pair_d", "pair_ids"
TWIN_PAIR_D, TWIN_PAIR_IDS = "aa_pair_d", "aa_pair_ids"
#: The basis of a verdict on such effects.
BLOCKS = "paired blocks"


def effects(value: Any) -> np.ndarray:
    """Per-round log effects (a list or its JSON text; signed, unlike times), finite ones only."""
    if isinstance(value, (str, bytes)):
        try:
            value = json.loads(value)
        except ValueError:
            return np.empty(0)
    if not isinstance(value, (list, tuple)):
        return np.empty(0)
    arr = np.asarray([x for x in value if isinstance(x, (int, float))], dtype=float)
    return arr[np.isfinite(arr)]


def round_ids(value: Any) -> list[str] | None:
    """The sweep rounds a row's round medians were measured in (a list, or its JSON text), as strings;
    None when there are none (rows stored before they existed, or built by hand)."""
    if isinstance(value, (str, bytes)):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return [str(x) for x in value] if isinstance(value, (list, tuple)) else None


def aligned(a: np.ndarray, ids_a: list[str] | None, b: np.ndarray, ids_b: list[str] | None,
            min_rounds: int = MIN_ROUNDS) -> tuple[np.ndarray, np.ndarray] | None:
    """``a`` and ``b`` restricted to the rounds both were measured in (same id), in order: a pair measured
    side by side in those rounds. None when either side's values are not labelled one id each, or they
    share fewer than ``min_rounds`` rounds."""
    if not ids_a or not ids_b or len(ids_a) != len(a) or len(ids_b) != len(b):
        return None
    in_b = dict(zip(ids_b, b, strict=True))
    common = [(x, in_b[k]) for k, x in zip(ids_a, a, strict=True) if k in in_b]
    if len(common) < min_rounds:
        return None
    return np.array([x for x, _ in common]), np.array([y for _, y in common])


def robust_sigma(x: np.ndarray) -> float:
    """Scale of ``x`` robust to outliers: 1.4826 × MAD for ≥ 3 values, else the plain spread."""
    x = np.asarray(x, float)
    if len(x) < 2:
        return float("nan")
    if len(x) == 2:
        return float(abs(x[0] - x[1]) / math.sqrt(2))
    return float(1.4826 * median(np.abs(x - median(x))))


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


def median_interval(x: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
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


def median_interval_coverage(n: int, confidence: float = 0.95) -> float:
    """The real coverage of :func:`median_interval` over ``n`` values (0.75 for 3: min..max)."""
    if n < 1:
        return float("nan")

    def below(j: int) -> float:
        return sum(math.comb(n, i) for i in range(j + 1)) / 2 ** n

    k = 1
    while k + 1 <= (n + 1) // 2 and 1 - 2 * below(k) >= confidence:
        k += 1
    return 1 - 2 * below(k - 1)




@lru_cache(maxsize=1024)
def _quantile(coverage: float, df: float | None) -> float:
    """Two-sided critical value of a ``coverage`` interval: Student's t on ``df``, normal for None."""
    if df is None:
        return NormalDist().inv_cdf(0.5 + coverage / 2)
    if coverage == CONFIDENCE and float(df).is_integer() and int(df) in T_QUANTILES:
        return T_QUANTILES[int(df)]
    from scipy.stats import t

    return float(t.ppf(0.5 + coverage / 2, df))


def decide(effect: float, lo: float, hi: float, min_effect: float = MIN_EFFECT,
           same_within: float = SAME_WITHIN) -> tuple[str, float]:
    """(verdict, floor) from a log effect and its interval [lo, hi].

    faster / slower: the interval excludes no change and the effect exceeds ``min_effect``; same: the whole
    interval lies within ±``same_within`` (floor: the bound it lies within); else inconclusive (floor:
    the interval's half-width, the smallest effect this comparison could have seen).
    """
    margin = math.log1p(min_effect)
    half = max(effect - lo, hi - effect, margin)
    if lo > 0 and effect > margin:
        return "faster", math.expm1(half)
    if hi < 0 and effect < -margin:
        return "slower", math.expm1(half)
    bound = max(-lo, hi, margin)
    if bound <= math.log1p(same_within):
        return "same", math.expm1(bound)
    return "inconclusive", math.expm1(half)


def settle_advice(effect: float, noise: float, n: int, basis: str, coverage: float = CONFIDENCE,
                  run_noise: float = 0.0, min_effect: float = MIN_EFFECT) -> str:
    """What would settle an inconclusive comparison: how many rounds the noise seen needs to show the
    effect measured (its direction, or "same" within SAME_WITHIN), and a quieter machine when even that is
    out of reach."""
    if basis == "one stream":
        return "measure both in rounds (--rounds 3 or more) so their drift can be seen"
    # the half-width that would settle it: below the effect (a direction) or within SAME_WITHIN of it (same)
    target = max(abs(effect) if abs(effect) > math.log1p(min_effect) else 0.0,
                 math.log1p(SAME_WITHIN) - abs(effect), math.log1p(min_effect) / 2)
    paired = basis in ("paired rounds", BLOCKS)
    # unpaired intervals are K_BETWEEN sigmas wide at BETWEEN_COVERAGE (see unpaired_verdict)
    z = _quantile(coverage, None) * (1.0 if paired else K_BETWEEN / _quantile(BETWEEN_COVERAGE, None))
    if basis == RUNS:  # noise: of the runs' mean levels, each side's shrinking with its runs (judge.replicates)
        need = math.ceil(n * (z * noise / target) ** 2)
        return f"more runs of each side: about {max(need, n + 1)} in all"
    per_round = noise if paired else math.sqrt(max(noise ** 2 - run_noise ** 2, 0.0))
    reachable = run_noise * z < target  # the run-to-run part does not shrink with rounds
    need = math.ceil((MEDIAN_EFFICIENCY * z * per_round / math.sqrt(max(target ** 2 - (run_noise * z) ** 2,
                                                                         1e-12))) ** 2) if reachable else 0
    advice = []
    if reachable and need <= 50:
        advice.append(f"more rounds: about {max(need, n + 1)} (--rounds {max(need, n + 1)})")
    if not paired:
        advice.append("several runs of each side (the run-to-run drift does not shrink with rounds)")
    if noise > NOISY_SPREAD or not advice:
        advice.append(f"a quieter machine (each round varied by ±{pct(math.expm1(noise))})")
    return "; or ".join(advice)


def _verdict(effect: float, lo: float, hi: float, noise: float, n_a: int, n_b: int, basis: str,
             coverage: float, min_effect: float, run_noise: float = 0.0, settle_noise: float | None = None
             ) -> Verdict:
    """``settle_noise``: the noise :func:`settle_advice` reads, where ``noise`` is not of one round (a median's)."""
    verdict, floor = decide(effect, lo, hi, min_effect)
    settle = settle_advice(effect, noise if settle_noise is None else settle_noise, min(n_a, n_b), basis, coverage,
                           run_noise, min_effect) if verdict == "inconclusive" else None
    return Verdict(math.exp(effect), math.exp(lo), math.exp(hi), floor, noise, verdict, n_a, n_b, basis,
                   coverage, settle)


def _insufficient(a: np.ndarray, b: np.ndarray, basis: str, min_rounds: int) -> Verdict:
    ratio = float(median(a) / median(b)) if len(a) and len(b) else float("nan")
    nan = float("nan")
    settle = (f"at least {min_rounds} rounds of both, measured in the same sweep" if len(a) and len(b)
              else "times on both sides")
    return Verdict(ratio, nan, nan, nan, nan, "insufficient samples", len(a), len(b), basis, nan, settle)


def paired_noise(d: np.ndarray, typical: float | None) -> tuple[float, float | None]:
    """(noise, degrees of freedom) of one pair's per-round log differences ``d``.

    The pair's own spread is the standard deviation of ``d`` around its median, with its single most
    deviant round clipped to :data:`CLIP` × ``typical`` (or to the next round's deviation, if larger): one
    disturbed round cannot blow the spread up and hide a gap that every other round shows (the median
    effect ignores that round too), while a pair whose rounds all disagree keeps its wide spread. From
    :data:`ROBUST_FROM` rounds on, 1.4826 × MAD (several disturbed rounds are told apart).
    ``typical`` (the typical spread of its kernel's pairs in the run) then moderates it as
    :data:`PRIOR_DF` rounds of evidence (empirical Bayes, as limma's moderated t), so two rounds that agree
    by chance cannot make the noise ~0. Without ``typical``: the plain standard deviation, n - 1 df.
    """
    n = len(d)
    if typical is None or not math.isfinite(typical):
        return float(np.std(d, ddof=1)), n - 1
    if n >= ROBUST_FROM:  # enough rounds to tell outliers: 1.4826 x MAD, robust to several disturbed rounds
        own = robust_sigma(d)
    else:
        dev = np.sort(np.abs(d - median(d)))
        dev[-1] = min(dev[-1], max(CLIP * typical, dev[-2]))
        own = float(np.sqrt(np.sum(dev ** 2) / (n - 1)))
    var = (PRIOR_DF * typical ** 2 + (n - 1) * own ** 2) / (PRIOR_DF + n - 1)
    return math.sqrt(var), PRIOR_DF + n - 1


def paired_verdict(rounds_a: Iterable[float], rounds_b: Iterable[float], *, min_effect: float = MIN_EFFECT,
                   typical: float | None = None, min_rounds: int = MIN_ROUNDS,
                   confidence: float = CONFIDENCE) -> Verdict:
    """A (baseline) against B (variant) measured in the same rounds; ``rounds_*[i]`` is round i's median.

    ``d_i = log(a_i / b_i)``: drift common to both cancels. Effect: median of ``d``; noise: the pair's own
    spread moderated by ``typical`` (:func:`paired_noise`); interval: effect ± t × 1.25 × noise / √n.
    """
    a, b = np.asarray(list(rounds_a), float), np.asarray(list(rounds_b), float)
    ok = np.isfinite(a) & np.isfinite(b) & (a > 0) & (b > 0)
    a, b = a[ok], b[ok]
    if len(a) < min_rounds:
        return _insufficient(a, b, "paired rounds", min_rounds)
    return effects_verdict(np.log(a) - np.log(b), min_effect=min_effect, typical=typical, confidence=confidence)


def effects_verdict(d: Iterable[float], *, min_effect: float = MIN_EFFECT, typical: float | None = None,
                    min_rounds: int = MIN_ROUNDS, confidence: float = CONFIDENCE,
                    basis: str = "paired rounds") -> Verdict:
    """The verdict on per-round paired effects ``d_i = log(a_i / b_i)`` (A the baseline): rounds' medians
    measured back to back, or (``basis`` :data:`BLOCKS`) each visit's effect from blocks timed alternately
    in that visit. Effect: median of ``d``; noise: its own spread moderated by ``typical``
    (:func:`paired_noise`); interval: effect ± t × 1.25 × noise / √n."""
    d = np.asarray(list(d), float)
    d = d[np.isfinite(d)]
    if len(d) < min_rounds:
        nan = float("nan")
        return Verdict(math.exp(median(d)) if len(d) else nan, nan, nan, nan, nan,
                       "insufficient samples", len(d), len(d), basis, nan,
                       f"at least {min_rounds} rounds of both, measured in the same sweep")
    effect = median(d)
    noise, df = paired_noise(d, typical)
    half = _quantile(confidence, df) * MEDIAN_EFFICIENCY * noise / math.sqrt(len(d))
    return _verdict(effect, effect - half, effect + half, noise, len(d), len(d), basis, confidence, min_effect)


def unpaired_verdict(rounds_a: Iterable[float], rounds_b: Iterable[float], *, run_noise: float = 0.0,
                     min_effect: float = MIN_EFFECT, noise_floor: float = 0.0, min_rounds: int = MIN_ROUNDS,
                     rounds: bool = True, confidence: float = BETWEEN_COVERAGE,
                     median_errors: bool = False) -> Verdict:
    """The same cell in two runs (A earlier, B later): per-round medians of each.

    ``run_noise`` (log sigma) is the run-to-run spread measured across the cells of the two runs
    (:func:`run_to_run_noise`); it is added because no single cell can see it. With fewer than
    ``min_rounds`` rounds on a side, or ``rounds=False`` (a side's values are the samples of one stream,
    not round medians), the values only place each side's median and the noise is :data:`STREAM_NOISE`.
    The interval is ± :data:`K_BETWEEN` noise sigmas (coverage :data:`BETWEEN_COVERAGE`, as measured); another
    ``confidence`` scales that width by the ratio of normal quantiles.

    ``median_errors``: each side's rounds count as the standard error of their median, not as the spread of one
    round; ``run_noise`` is then only what the cells' own rounds do not explain
    (:func:`workbench.judge.between_runs.between_run_noise`), so no part of the noise is counted twice.
    """
    a, b = clean(rounds_a), clean(rounds_b)
    if len(a) == 0 or len(b) == 0:
        return _insufficient(a, b, "rounds" if rounds else "one stream", min_rounds)
    la, lb = np.log(a), np.log(b)
    effect = median(la) - median(lb)
    if not rounds or len(a) < min_rounds or len(b) < min_rounds:
        noise, basis = math.hypot(STREAM_NOISE, run_noise), "one stream"
    else:
        sa, sb = max(round_sigma(la), noise_floor), max(round_sigma(lb), noise_floor)
        per_round = math.hypot(math.hypot(sa, sb), run_noise)  # what more rounds divide (settle_advice)
        if median_errors:
            sa, sb = median_error(la, noise_floor), median_error(lb, noise_floor)
        noise, basis = math.hypot(math.hypot(sa, sb), run_noise), "rounds"
    half = K_BETWEEN * noise * _quantile(confidence, None) / _quantile(BETWEEN_COVERAGE, None)
    return _verdict(effect, effect - half, effect + half, noise, len(a), len(b), basis, confidence,
                    min_effect, run_noise, per_round if basis == "rounds" else None)


def median_error(log_rounds: np.ndarray, floor: float = 0.0) -> float:
    """Standard error of the median of a cell's log round medians (:func:`round_sigma`, at least ``floor``, x
    :data:`MEDIAN_EFFICIENCY` / sqrt(n)); nan below two rounds."""
    x = np.asarray(log_rounds, float)
    return max(round_sigma(x), floor) * MEDIAN_EFFICIENCY / math.sqrt(len(x)) if len(x) >= 2 else float("nan")


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
    """The typical spread of several pairs' per-round log differences: the median over the pairs of each
    one's standard deviation, for :func:`paired_verdict` (a disturbed pair moves a median little).
    0 if there are none."""
    sig = [float(np.std(x, ddof=1)) for x in (np.asarray(list(d), float) for d in diffs) if len(x) >= 2]
    sig = [x for x in sig if math.isfinite(x)]
    return float(np.median(sig)) if sig else 0.0


@lru_cache(maxsize=256)
def _variance_median_ratio(df: int) -> float:
    """Median of a sample variance on ``df`` degrees of freedom over the true variance (scipy's chi2 is slow:
    a report asks for the same few ``df`` thousands of times)."""
    if df in CHI2_MEDIAN_RATIOS:
        return CHI2_MEDIAN_RATIOS[df]
    from scipy.stats import chi2

    return float(chi2.median(df)) / df


def prior_noise(diffs: Iterable[Iterable[float]]) -> float | None:
    """The typical paired spread as the prior of :func:`paired_noise`: the median over the pairs of each
    one's variance, made consistent (a sample variance on k df has median chi2.median(k) / k of the true
    one: 0.69 at 3 rounds, so a plain median of spreads runs ~17% low and intervals too narrow).
    None if there are none."""
    v = [float(np.var(x, ddof=1)) / _variance_median_ratio(len(x) - 1)
         for x in (np.asarray(list(d), float) for d in diffs) if len(x) >= 2]
    v = [x for x in v if math.isfinite(x)]
    return math.sqrt(float(np.median(v))) if v else None


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


def noisy_mask(flags: Any, spreads: Any, threshold: float = NOISY_SPREAD) -> np.ndarray:
    """:func:`is_noisy` of many rows at once: ``flags`` (their ``noisy`` values, or None when the rows have no
    such column) and ``spreads`` (their ``rel_spread`` values, or None) as sequences (counting a million rows'
    noisy cells through a dict per row took 230 MB)."""
    import pandas as pd

    n = len(flags) if flags is not None else len(spreads) if spreads is not None else 0
    out = np.zeros(n, dtype=bool)
    known = np.zeros(n, dtype=bool)
    if flags is not None:
        f = np.asarray(flags, dtype=object)
        known = pd.notna(f)
        out[known] = [bool(v) for v in f[known]]
    if spreads is not None:
        spread = pd.to_numeric(pd.Series(np.asarray(spreads, dtype=object)), errors="coerce").to_numpy(float)
        with np.errstate(invalid="ignore"):
            out[~known] = (np.isfinite(spread) & (spread > threshold))[~known]
    return out
