"""Roofs: the limits a measurement is judged against (model, published peaks, ceilings), and the probes that
measure them.

``from workbench.roofs import ...`` keeps the names of the
former module ``workbench.roofs`` (now ``workbench.roofs.model``).
"""

from __future__ import annotations

from workbench.roofs.model import (  # noqa: F401
    AUTO_METHOD_PREFIX,
    AUTO_PROBE,
    BANDWIDTH_MARGIN,
    CACHE_LEVELS,
    FLOPS_MARGIN,
    KIND_OF_METRIC,
    MEASURED,
    PUBLISHED,
    SHORT_SOURCE,
    Roof,
    RoofKey,
    RoofKind,
    RoofSet,
    above_top_roof,
    flops_roof_of,
    resolve_roofs,
    roof_set_from_table,
    roofs_of_row,
    source_of_method,
)

__all__ = [
    'MEASURED', 'AUTO_PROBE', 'PUBLISHED', 'AUTO_METHOD_PREFIX', 'BANDWIDTH_MARGIN', 'FLOPS_MARGIN',
    'RoofKind', 'KIND_OF_METRIC', 'CACHE_LEVELS', 'Roof', 'SHORT_SOURCE', 'RoofSet', 'flops_roof_of',
    'above_top_roof', 'source_of_method', 'roof_set_from_table', 'RoofKey', 'resolve_roofs', 'roofs_of_row',
]
