"""Issue 22's roof targets, checked over stored rows: every timed row names its roof (or says which one is
missing and why), no row is above 100% of its roof without the implausible mark, and each physical device
has one roof set whatever runtime ran on it.

One function for the benchmark script (``tests/perf/roofs_quick.py``, over a quick-suite sweep) and the
tests, so both count the same way a report reads the rows (:func:`~workbench.report.row_notes.row_notes`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from workbench.core.record import JsonObject, number_or_none
from workbench.core.status import Status
from workbench.report.row_notes import row_notes
from workbench.roofs.ceilings import headline_pct, is_compute_bound
from workbench.roofs.model import RoofSet, resolve_roofs, roofs_of_row

#: Statuses whose rows carry a rate and so a % of a roof.
TIMED = (Status.OK, Status.IMPLAUSIBLE)


@dataclass
class RoofCheck:
    """What :func:`check_roofs` found; each list holds one line per offending row or device."""

    timed_rows: int = 0
    unnamed: list[str] = field(default_factory=list)
    above_unmarked: list[str] = field(default_factory=list)
    #: Rows scored against a value that is none of their device's roofs (another runtime's own roof).
    foreign_roof: list[str] = field(default_factory=list)
    implausible: list[str] = field(default_factory=list)
    #: Physical device -> its distinct roof sets (more than one breaks "one roof set per device").
    roof_sets: dict[str, list[str]] = field(default_factory=dict)

    @property
    def devices_with_several_sets(self) -> list[str]:
        return [d for d, sets in self.roof_sets.items() if len(sets) > 1]

    @property
    def passed(self) -> bool:
        return not (self.unnamed or self.above_unmarked or self.foreign_roof or self.devices_with_several_sets)

    def lines(self) -> list[str]:
        """The counts, then every offender."""
        out = [f"timed rows: {self.timed_rows}",
               f"rows naming no roof: {len(self.unnamed)}",
               f"rows above 100% of their roof without the implausible mark: {len(self.above_unmarked)}",
               f"rows scored against a value none of their device's roofs has: {len(self.foreign_roof)}",
               f"rows marked implausible: {len(self.implausible)}",
               f"physical devices: {len(self.roof_sets)}; with more than one roof set: "
               f"{len(self.devices_with_several_sets)}"]
        out += [f"  no roof: {s}" for s in self.unnamed]
        out += [f"  above, unmarked: {s}" for s in self.above_unmarked]
        out += [f"  foreign roof: {s}" for s in self.foreign_roof]
        out += [f"  implausible: {s}" for s in self.implausible]
        out += [f"  roof sets of {d}: " + " | ".join(sets) for d, sets in self.roof_sets.items()]
        return out


def _name(r: Mapping[str, Any]) -> str:
    return f"{r.get('kernel')}/{r.get('variant')} @ {r.get('backend')} {r.get('dtype')} {r.get('size_label') or ''}"


def _set_text(rs: RoofSet) -> str:
    return ", ".join(sorted(r.text() for r in rs.roofs)) or "no roofs"


def check_roofs(df: pd.DataFrame, peaks: pd.DataFrame | None = None,
                environments: Mapping[str, JsonObject] | None = None) -> RoofCheck:
    """Check ``df`` (stored rows) against the roof targets, reading each row as a report does."""
    out = RoofCheck()
    if df is None or df.empty:
        return out
    timed = df[df["status"].isin(list(TIMED))] if "status" in df else df.iloc[0:0]
    out.timed_rows = len(timed)
    roofs = resolve_roofs(timed, peaks)
    notes = row_notes(timed, dict(environments or {}), roofs)
    for (_, r), (_, n) in zip(timed.iterrows(), notes.iterrows(), strict=True):
        marked = r.get("status") == Status.IMPLAUSIBLE or str(n["peak_note"]).startswith("implausible")
        if marked:
            out.implausible.append(f"{_name(r)}: {n['peak_note'] or r.get('message')}")
        if r.get("status") == Status.OK and not str(n["ceiling"]).strip():
            out.unnamed.append(_name(r))
        pct = headline_pct(r)
        if pct is not None and pct > 100.0 and not marked:
            out.above_unmarked.append(f"{_name(r)}: {pct:.0f}% of {n['ceiling']}: {n['peak_note']}")
        value = number_or_none(r.get("ceiling_gflops" if is_compute_bound(r) else "ceiling_gbps"))
        rs = roofs_of_row(roofs, r)
        if value is not None and rs is not None and rs.roofs and not any(
                x.known and math.isclose(value, x.value, rel_tol=1e-6) for x in rs.roofs):  # type: ignore[arg-type]
            out.foreign_roof.append(f"{_name(r)}: scored against {value:.4g}; {rs.device} has {_set_text(rs)}")
    by_device: dict[str, dict[str, None]] = {}
    for rs in roofs.values():
        if rs.roofs:
            by_device.setdefault(rs.device, {})[_set_text(rs)] = None
    out.roof_sets = {d: list(sets) for d, sets in by_device.items()}
    return out
