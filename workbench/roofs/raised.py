"""A probed FLOP roof that a correct row of the run went past is raised to that row's rate.

The automatic probe times BLAS GEMM for a few hundred milliseconds; on a busy machine it can read a few percent
below what the run's own GEMM rows then reach (CI: a 116 GFLOP/s probe, numpy GEMM rows at 101-102% of it). A
roof is the most the device was seen to deliver, so a short probe that a correct result beat is a lower bound,
not a roof: when the run ends, each such roof is raised to the best rate a row reached (within
:func:`~workbench.roofs.model.flops_margin` of the probe: further above it a row is implausible, and never
raises anything), the stored roof says so in its method, and the run's rows scored against the old value are
scored again (their % of peak and the note that explains it). Roofs measured by ``workbench peaks`` or published
are not touched: a row above those keeps its note, which names the roof as the suspect.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from workbench.core.record import RowDict, number_or_none
from workbench.core.status import Status
from workbench.roofs.ceilings import is_compute_bound, refresh_peak_note
from workbench.roofs.model import AUTO_METHOD_PREFIX, AUTO_PROBE, flops_margin, split_source
from workbench.roofs.throughput import FLOPS


@dataclass(frozen=True)
class RaisedRoof:
    """One probed FLOP roof raised: where, from what to what, by which row."""

    env_id: str
    dtype: str
    old: float
    new: float
    by: str

    def text(self) -> str:
        return (f"{self.dtype} GFLOP/s roof raised from {self.old:.4g} (automatic probe) to {self.new:.4g}, "
                f"the rate {self.by} reached in this run")


def _evidence(row: RowDict) -> float | None:
    """The row's GFLOP/s when it may raise its roof: a correct, compute-bound row above a probed roof, but
    within the margin that separates a low probe from an implausible result."""
    probed = split_source(row.get("ceiling_source"))[1] == AUTO_PROBE
    if row.get("status") != Status.OK or not is_compute_bound(row) or not probed:
        return None
    gflops, roof = number_or_none(row.get("gflops")), number_or_none(row.get("ceiling_gflops"))
    if gflops is None or roof is None or not roof < gflops <= roof * flops_margin(AUTO_PROBE):
        return None
    return gflops


def _name(row: RowDict) -> str:
    return f"{row.get('kernel')}/{row.get('variant')} @ {row.get('backend')} {row.get('size_label') or ''}".strip()


def raise_probed_roofs(store: object, run_id: str) -> list[RaisedRoof]:
    """Raise the probed FLOP roofs ``run_id``'s correct rows went past, and score those rows again; returns
    what was raised (nothing when no row went past a probed roof)."""
    if not store.has_rows_above(run_id, "pct_peak_flops", 100.0):  # type: ignore[attr-defined]
        return []
    rows: list[RowDict] = store.rows([run_id])  # type: ignore[attr-defined]
    best: dict[tuple[str, str, float], tuple[float, str]] = {}  # (env, dtype, old roof) -> (rate, row)
    for r in rows:
        rate = _evidence(r)
        if rate is None:
            continue
        key = (str(r.get("env_id") or ""), str(r.get("dtype")), float(r["ceiling_gflops"]))
        if key not in best or rate > best[key][0]:
            best[key] = (rate, _name(r))
    raised = [RaisedRoof(env, dtype, old, rate, by) for (env, dtype, old), (rate, by) in best.items()]
    for roof in raised:
        _store_roof(store, roof)
        for r in _scored_against(rows, roof):
            _rescore(r, roof)
            store.record(r)  # type: ignore[attr-defined]
    return raised


def _same(a: float | None, b: float) -> bool:
    return a is not None and math.isclose(a, b, rel_tol=1e-9)


def _store_roof(store: object, roof: RaisedRoof) -> None:
    """Every backend of the environment holding the old probed value gets the new one (one roof set per
    device: every CPU runtime holds the same copy, whether or not it ran in this run)."""
    table = store.peaks(env_id=roof.env_id)  # type: ignore[attr-defined]
    for p in table.to_dict("records"):
        if p.get("metric") != FLOPS or p.get("dtype") != roof.dtype or not _same(number_or_none(p.get("value")),
                                                                                    roof.old):
            continue
        method = str(p.get("method") or AUTO_METHOD_PREFIX)
        store.set_peak(roof.env_id, str(p["backend"]), FLOPS, roof.dtype, roof.new,  # type: ignore[attr-defined]
                       str(p.get("unit") or "GFLOP/s"), f"{method}; {roof.text()}",
                       {"probed": roof.old, "raised_by": roof.by})


def _scored_against(rows: Iterable[RowDict], roof: RaisedRoof) -> list[RowDict]:
    return [r for r in rows if str(r.get("env_id") or "") == roof.env_id and str(r.get("dtype")) == roof.dtype
            and _same(number_or_none(r.get("ceiling_gflops")), roof.old)]


def _rescore(row: RowDict, roof: RaisedRoof) -> None:
    row["ceiling_gflops"] = roof.new
    pct = number_or_none(row.get("pct_peak_flops"))
    if pct is not None:
        row["pct_peak_flops"] = pct * roof.old / roof.new
    refresh_peak_note(row)
