"""Is B really faster than A? Speed-ups from raw timing samples, with their uncertainty.

A ratio of two medians says nothing about noise, so every speed-up here comes
with a seeded percentile-bootstrap confidence interval and a Mann–Whitney U
p-value on the raw samples. The verdict is "faster" or "slower" only when both
agree that the difference is real; otherwise "ambiguous". Speed-up is always
``median(A) / median(B)``: above 1 means B (the variant) beats A (the baseline).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

#: Columns that identify a measured cell (the contract's cell_key, spelled out).
CELL_COLUMNS = ("kernel", "variant", "backend", "dtype", "params", "mode", "cache")
VERDICTS = ("faster", "slower", "ambiguous", "insufficient samples")

MIN_SAMPLES = 5
RESAMPLES = 2000
CONFIDENCE = 0.95
ALPHA = 0.05
SEED = 0


@dataclass(frozen=True)
class SpeedupResult:
    speedup: float  # median(a) / median(b)
    ci_low: float
    ci_high: float
    p_value: float
    verdict: str
    n_a: int
    n_b: int
    median_a: float
    median_b: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_samples(value: Any) -> np.ndarray:
    """Samples from a row's ``samples_s`` (JSON text per the contract, or a list); empty on NaN/None."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return np.empty(0)
    if isinstance(value, (str, bytes)):
        value = json.loads(value) if value.strip() else []
    arr = np.asarray(list(value), dtype=float)
    return arr[np.isfinite(arr) & (arr > 0)]


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided Mann–Whitney U p-value (scipy when installed, else a tie-corrected normal approximation)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) == 0 or len(b) == 0:
        return float("nan")
    try:
        from scipy.stats import mannwhitneyu
    except ImportError:  # scipy is a dev extra, not a runtime dependency
        return _mann_whitney_normal(a, b)
    if np.all(a == a[0]) and np.all(b == a[0]):
        return 1.0
    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


def _mann_whitney_normal(a: np.ndarray, b: np.ndarray) -> float:
    n1, n2 = len(a), len(b)
    both = np.concatenate([a, b])
    ranks = _rankdata(both)
    u1 = ranks[:n1].sum() - n1 * (n1 + 1) / 2
    mu = n1 * n2 / 2
    _, counts = np.unique(both, return_counts=True)
    n = n1 + n2
    tie = (counts ** 3 - counts).sum() / (n * (n - 1)) if n > 1 else 0.0
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie))
    if sigma == 0:
        return 1.0
    z = (abs(u1 - mu) - 0.5) / sigma  # continuity correction, as scipy's asymptotic method
    return float(min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2))))


def _rankdata(x: np.ndarray) -> np.ndarray:
    """Average ranks (1-based), ties sharing the mean of their ranks."""
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(len(x))
    sx = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and sx[j + 1] == sx[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def bootstrap_ratio_ci(a: np.ndarray, b: np.ndarray, resamples: int = RESAMPLES, confidence: float = CONFIDENCE,
                       seed: int = SEED) -> tuple[float, float]:
    """Percentile bootstrap interval of median(a) / median(b), resampling each side independently."""
    rng = np.random.default_rng(seed)
    ma = np.median(a[rng.integers(0, len(a), size=(resamples, len(a)))], axis=1)
    mb = np.median(b[rng.integers(0, len(b), size=(resamples, len(b)))], axis=1)
    ratios = ma / mb
    tail = (1 - confidence) / 2 * 100
    lo, hi = np.percentile(ratios, [tail, 100 - tail])
    return float(lo), float(hi)


def speedup(samples_a: Iterable[float] | str, samples_b: Iterable[float] | str, *, resamples: int = RESAMPLES,
            confidence: float = CONFIDENCE, alpha: float = ALPHA, min_samples: int = MIN_SAMPLES,
            seed: int = SEED) -> SpeedupResult:
    """How many times faster B is than A, with a confidence interval, p-value and verdict."""
    a, b = parse_samples(samples_a), parse_samples(samples_b)
    med_a = float(np.median(a)) if len(a) else float("nan")
    med_b = float(np.median(b)) if len(b) else float("nan")
    ratio = med_a / med_b if len(a) and len(b) else float("nan")
    if len(a) < min_samples or len(b) < min_samples:
        return SpeedupResult(ratio, float("nan"), float("nan"), float("nan"), "insufficient samples",
                             len(a), len(b), med_a, med_b)
    lo, hi = bootstrap_ratio_ci(a, b, resamples, confidence, seed)
    p = mann_whitney_p(a, b)
    if lo > 1 and p <= alpha:
        verdict = "faster"
    elif hi < 1 and p <= alpha:
        verdict = "slower"
    else:
        verdict = "ambiguous"
    return SpeedupResult(ratio, lo, hi, p, verdict, len(a), len(b), med_a, med_b)


# -- tables -----------------------------------------------------------------------------------

def _check_runs(df: pd.DataFrame, run_ids: Iterable[str]) -> None:
    known = list(dict.fromkeys(df["run_id"])) if "run_id" in df else []
    missing = [r for r in run_ids if r not in known]
    if missing:
        raise ValueError(f"unknown run id(s) {missing}; valid run ids: {', '.join(map(str, known)) or '(none)'}")


def compare_runs(df: pd.DataFrame, run_a: str, run_b: str, **kw: Any) -> pd.DataFrame:
    """Per matched cell of two runs: speed-up of run B over run A with CI, p-value and verdict.

    Cells match on kernel, variant, backend, dtype, params, mode and cache.
    When a run holds the same cell from several machines (merged imports), the
    environment (machine) joins the key so machines are compared like for like.
    """
    _check_runs(df, [run_a, run_b])
    a, b = df[df["run_id"] == run_a], df[df["run_id"] == run_b]
    key = list(CELL_COLUMNS)
    if any(x.duplicated(key).any() for x in (a, b)):
        key += [c for c in ("env_id", "device") if c in df][:1]
    merged = a.merge(b, on=key, suffixes=("_a", "_b"))
    rows = []
    for _, r in merged.iterrows():
        rec = {k: r[k] for k in key}
        if r["status_a"] == "ok" and r["status_b"] == "ok":
            rec.update(speedup(r["samples_s_a"], r["samples_s_b"], **kw).to_dict())
        else:
            rec.update({c: float("nan") for c in _RESULT_COLUMNS}, n_a=0, n_b=0,
                       verdict=f"not comparable ({r['status_a']} / {r['status_b']})")
        for side in ("a", "b"):
            rec[f"status_{side}"] = r[f"status_{side}"]
            rec[f"device_{side}"] = r.get(f"device_{side}", r.get("device"))
            rec[f"env_{side}"] = r.get(f"env_id_{side}", r.get("env_id"))
        rec["size"], rec["size_label"] = r.get("size_a"), r.get("size_label_a")
        rows.append(rec)
    extra = ["status_a", "status_b", "device_a", "device_b", "env_a", "env_b", "size", "size_label"]
    return pd.DataFrame(rows, columns=key + _RESULT_COLUMNS + extra)


_RESULT_COLUMNS = ["speedup", "ci_low", "ci_high", "p_value", "verdict", "n_a", "n_b", "median_a", "median_b"]


def library_variants(df: pd.DataFrame, kernel: str) -> list[str]:
    """Variants of ``kernel`` that its rows mark as the library baseline (column ``library``).

    Judged from the rows alone, never from this machine's catalog, so an imported
    run is judged by what it recorded. Rows stored before the column existed say
    nothing (None); then, as for a kernel without a library variant, the kernel's
    first variant in the rows stands in.
    """
    rows = df[df["kernel"] == kernel]
    if rows.empty:
        return []
    flags = pd.to_numeric(rows["library"], errors="coerce") if "library" in rows else None
    libs = sorted(set(rows.loc[flags == 1, "variant"])) if flags is not None else []
    return libs or [str(rows["variant"].iloc[0])]


def speedup_vs_baseline(df: pd.DataFrame, baseline_variant: str | None = None, baseline_backend: str | None = None,
                        **kw: Any) -> pd.DataFrame:
    """Speed-up of every ok row against a baseline cell of the same run, kernel, dtype, size and cache.

    The baseline is ``baseline_variant`` (on ``baseline_backend`` if given); with
    only a backend, the same variant on that backend; with neither, the kernel's
    library variant as its rows say (see :func:`library_variants`). Among several candidate
    baseline rows the one on the row's own backend wins, so numpy variants compare with the numpy library call and
    torch ones with torch. Rows without a baseline get NaN and verdict "no baseline".
    """
    cols = ["run_id", "kernel", "variant", "backend", "dtype", "params", "size", "size_label", "mode", "cache",
            "baseline_variant", "baseline_backend"] + _RESULT_COLUMNS
    if df.empty:
        return pd.DataFrame(columns=cols)
    ok = df[df["status"] == "ok"]
    group = [c for c in ("run_id", "env_id", "kernel", "dtype", "params", "cache") if c in df]
    libs = {k: library_variants(df, k) for k in ok["kernel"].unique()}
    out = []
    for _, g in ok.groupby(group, sort=False, dropna=False):
        kernel = g["kernel"].iloc[0]
        for _, row in g.iterrows():
            base = _pick_baseline(g, row, baseline_variant, baseline_backend, libs[kernel])
            rec = {c: row.get(c) for c in cols[:10]}
            if base is None:
                rec.update({c: float("nan") for c in _RESULT_COLUMNS}, verdict="no baseline",
                           baseline_variant=None, baseline_backend=None)
            else:
                rec.update(speedup(base["samples_s"], row["samples_s"], **kw).to_dict(),
                           baseline_variant=base["variant"], baseline_backend=base["backend"])
                if base.name == row.name:
                    rec["verdict"] = "baseline"
            out.append(rec)
    return pd.DataFrame(out, columns=cols)


def _pick_baseline(g: pd.DataFrame, row: pd.Series, variant: str | None, backend: str | None,
                   libs: list[str]) -> pd.Series | None:
    if variant is not None:
        cand = g[g["variant"] == variant]
    elif backend is not None:
        cand = g[g["variant"] == row["variant"]]
        if not (cand["backend"] == backend).any():
            cand = g[g["variant"].isin(libs)]
    else:
        cand = g[g["variant"].isin(libs)]
    if backend is not None:
        cand = cand[cand["backend"] == backend]
    if cand.empty:
        return None
    same = cand[cand["backend"] == row["backend"]]
    return (same if not same.empty else cand.sort_values("backend")).iloc[0]
