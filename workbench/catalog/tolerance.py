"""Tolerances that depend on the size: the accumulation error of sums, scans and dot products.

Why: a float32 sum of ``n`` terms accumulated one after another has a rounding error that grows with ``n``
(the error of each partial sum is a random walk: about ``0.4 * u * sqrt(n)`` of the largest partial sum,
``u`` the dtype's unit roundoff, measured for ``np.cumsum`` of N(0, 1) rows), so one number per dtype either
fails a correct scan at 2^20 columns or passes a wrong one at 1000. :class:`Accumulation` is a spec's
tolerance for one dtype as a function of the size parameters: ``factor * u * sqrt(length)``, never below
the dtype's default (:data:`~workbench.catalog.spec.DEFAULT_TOLERANCES`).

A tolerance that grows with the size stops seeing a wrong element at some size: a dropped or shifted term
moves a scan's output by about one term, ``1 / sqrt(length)`` of the largest partial sum for N(0, 1) terms.
:meth:`Accumulation.largest_length` says up to which length an error of a given size still fails; keep the
spec's sizes below it (``tests/unit/test_tolerance.py`` checks that a dropped and a shifted element fail at
the largest size each catalog spec using it admits).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: Params of a cell (``{"rows": 8, "cols": 1000}``).
Params = Mapping[str, int]
#: A spec's tolerance for one dtype: a number, or a function of the cell's size parameters.
Tolerance = float | Callable[[Params], float]

#: Default tolerances (error relative to the reference's magnitude) per dtype; ``workbench.catalog.spec`` names
#: them too, as it always has.
DEFAULT_TOLERANCES: dict[str, float] = {
    "float64": 1e-10,
    "float32": 1e-5,
    "float16": 5e-3,
    "bfloat16": 4e-2,
}

#: Unit roundoff (half the distance from 1 to the next number) of each floating dtype.
UNIT_ROUNDOFF: dict[str, float] = {"float64": 2.0**-53, "float32": 2.0**-24, "float16": 2.0**-11,
                                   "bfloat16": 2.0**-8}

#: Headroom over the measured ``0.4 * u * sqrt(n)`` of sequential accumulation of N(0, 1) terms: a bound a
#: correct kernel passes at every seed (a pairwise or blocked sum is far below it).
DEFAULT_FACTOR = 2.0


@dataclass(frozen=True)
class Accumulation:
    """The tolerance of a ``dtype`` output that sums ``length`` terms (the product of the size ``axes``):
    ``max(floor, factor * u(dtype) * sqrt(length))``. Called with a cell's params, as a spec's tolerance."""

    dtype: str
    axes: tuple[str, ...]
    floor: float
    factor: float = DEFAULT_FACTOR

    def length(self, params: Params) -> int:
        return math.prod(int(params[a]) for a in self.axes)

    def at_length(self, n: int) -> float:
        return max(self.floor, self.factor * UNIT_ROUNDOFF[self.dtype] * math.sqrt(n))

    def __call__(self, params: Params) -> float:
        return self.at_length(self.length(params))

    def largest_length(self, detect: Callable[[int], float]) -> int:
        """The largest length whose tolerance stays below ``detect(length)``, the error one wrong element makes
        at that length (e.g. ``lambda n: 1 / sqrt(n)`` for a scan of N(0, 1) terms); 0 when none does."""
        def admits(n: int) -> bool:
            return self.at_length(n) < detect(n)

        lo, hi = 0, 1
        while hi < 2**40 and admits(hi):
            lo, hi = hi, hi * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if admits(mid) else (lo, mid)
        return lo

    def __repr__(self) -> str:  # shown in messages and spec listings
        return f"max({self.floor:g}, {self.factor:g}*u*sqrt({'*'.join(self.axes)}))"


def accumulation_tolerances(axes: str | Sequence[str], *, factor: float = DEFAULT_FACTOR,
                            floors: Mapping[str, float] | None = None) -> dict[str, Tolerance]:
    """A spec's ``tolerances`` for outputs that accumulate over ``axes`` (``"cols"`` for a row-wise scan,
    ``"k"`` for a GEMM's dot products): one :class:`Accumulation` per dtype, above ``floors`` (default the
    catalog's per-dtype defaults)."""
    names = (axes,) if isinstance(axes, str) else tuple(axes)
    base = dict(DEFAULT_TOLERANCES if floors is None else floors)
    return {d: Accumulation(d, names, float(base.get(d, DEFAULT_TOLERANCES[d])), factor) for d in UNIT_ROUNDOFF}


def evaluate(tolerance: Tolerance, params: Params | None, where: str) -> float:
    """The number a tolerance gives for ``params`` (a number stays itself); a size-dependent tolerance needs
    the params, and must give a number >= 0."""
    if not callable(tolerance):
        return usable_tolerance(tolerance, where)
    if params is None:
        raise ValueError(f"{where}: the tolerance {tolerance!r} depends on the size; pass the params")
    return usable_tolerance(tolerance(params), where, f"the tolerance {tolerance!r} gave it for {dict(params)}")


#: A relative error this large passes an output of zeros (or of anything near the reference's size): no check.
MAX_TOLERANCE = 1.0


def usable_tolerance(value: object, where: str, how: str = "") -> float:
    """``value`` as a float when a comparison against it can fail: a number >= 0 and below
    :data:`MAX_TOLERANCE`. NaN, infinity or 1e9 verified a variant writing random numbers as ok (every error
    is below infinity), a negative one failed every variant; each is a ValueError naming ``where``."""
    x = float(value) if isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool) \
        else math.nan
    if not (0 <= x < MAX_TOLERANCE):
        said = f" ({how})" if how else ""
        raise ValueError(f"{where}: tolerance {value!r}{said} is not usable: give the allowed relative error as "
                         f"a number >= 0 and < {MAX_TOLERANCE:g} (e.g. 1e-5); a NaN, infinite or huge one "
                         "passes any output, a negative one fails every output")
    return x
