"""The reference and comparison of an ad-hoc comparison: outputs against the first callable's (or
``reference=``'s), within a tolerance for the dtype.

The reference callable runs inside the harness as a spec's float64 reference would, but on exactly the
arguments the callables get (the run dtype, on their device), and its outputs are read back as float64.
The comparison is the catalog's rule — ``max |out - ref| / max |ref|`` — plus the checks a reference
that is itself rounded needs: same outputs, same shapes, finite where the reference is.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.adhoc.inputs import AdhocSetup, host_array, outputs_of
from workbench.catalog.check import mismatch

#: Tolerances of an ad-hoc check, per dtype. Both sides are rounded to the dtype (neither is the float64
#: truth), so they are looser than the catalog's defaults against float64 (float32 1e-5): two correct
#: float32 softmaxes or sums in different orders differ by a few 1e-7 of the largest value, and sums over
#: millions of elements by up to ~1e-5.
TOLERANCES = {"float64": 1e-9, "float32": 1e-4, "float16": 1e-2, "bfloat16": 6e-2}


def tolerances(tolerance: float | Mapping[str, float] | None) -> dict[str, float]:
    """:data:`TOLERANCES` with ``tolerance`` (one number for every dtype, or a dict by dtype) applied."""
    out = dict(TOLERANCES)
    if tolerance is None:
        return out
    given = tolerance if isinstance(tolerance, Mapping) else {k: tolerance for k in out}
    for k, v in given.items():
        if k not in out:
            raise ValueError(f"tolerance for unknown dtype {k!r}; valid dtypes: {', '.join(out)}")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v >= 0:
            raise ValueError(f"tolerance {v!r} for {k} must be a number >= 0")
        out[k] = float(v)
    return out


@dataclass
class AdhocReference:
    """The spec's ``reference``: ``fn`` on the native arguments, its outputs as float64 host arrays.
    ``fn`` None (``check=False``): no reference, nothing compared."""

    fn: Callable[..., Any] | None
    label: str
    setup: AdhocSetup

    def __call__(self, inputs: Mapping[str, np.ndarray], params: Mapping[str, int]) -> dict[str, np.ndarray]:
        if self.fn is None:
            return {}
        args, kwargs = self.setup.native(inputs, self.setup.size(params))
        try:
            result = self.fn(*args, **kwargs)
        except Exception as exc:
            raise RuntimeError(f"the reference {self.label!r} raised {type(exc).__name__}: {exc}; every output "
                               "is checked against it (pass reference=... or put a working callable first)") from exc
        return {k: _float64(v, k, self.label) for k, v in outputs_of(result).items()}


def _float64(x: Any, name: str, label: str) -> np.ndarray:
    a = host_array(x)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"output {name!r} of {label!r} is not numeric ({a.dtype}); only numeric outputs can be "
                        "checked (pass check=False to time without checking)")
    return a.astype(np.float64)


@dataclass
class AdhocCompare:
    """The spec's ``compare``: ``(error, message)`` of outputs against the reference's."""

    label: str
    tolerances: Mapping[str, float]
    enabled: bool = True

    def __call__(self, outputs: Mapping[str, Any], reference: Mapping[str, np.ndarray], inputs: Any,
                 params: Any, dtype: str) -> tuple[float, str]:
        if not self.enabled:  # check=False: passes, and the row's max_error stays empty (nothing compared)
            return -math.inf, ""
        missing = [k for k in reference if k not in outputs]
        extra = [k for k in outputs if k not in reference]
        if missing or extra:
            return float("inf"), (f"returned outputs {sorted(outputs)}, {self.label!r} returned "
                                  f"{sorted(reference)}")
        worst, where = 0.0, ""
        for k, ref in reference.items():
            out = np.asarray(outputs[k])
            if out.shape != ref.shape:
                return float("inf"), f"{k}: shape {out.shape}, {self.label!r} gave {ref.shape}"
            if out.dtype.kind not in "biuf":
                return float("inf"), f"{k}: not numeric ({out.dtype})"
            out64 = out.astype(np.float64)
            bad = np.isfinite(ref) & ~np.isfinite(out64)
            if bad.any():
                return float("inf"), f"{k}: {int(bad.sum())} non-finite values where {self.label!r} has numbers"
            both = np.isfinite(ref) & np.isfinite(out64)
            if not np.array_equal(np.isfinite(ref), np.isfinite(out64)):
                return float("inf"), f"{k}: finite where {self.label!r} is not"
            scale = float(np.max(np.abs(ref[both]))) if both.any() else 0.0
            diff = np.where(both, np.abs(out64 - ref), 0.0)
            err = float(np.max(diff)) / (scale or 1.0) if both.any() else 0.0
            if err > worst:
                worst, where = err, _where(k, out64, ref, diff, self.tolerances.get(dtype, 0.0), scale or 1.0)
        return worst, (f"max error {worst:.3g} against {self.label!r} (tolerance {self.tolerances.get(dtype, 0):g} "
                       f"for {dtype}; set tolerance=... to change it){where}")


def _where(name: str, out: np.ndarray, ref: np.ndarray, diff: np.ndarray, tol: float, scale: float) -> str:
    """``; at out[3, 7]: 1.5, reference 1.25; 1 of 64 elements off``: the worst element of a failing output
    (:func:`workbench.catalog.check.mismatch`), or ``""`` where it passes."""
    if float(diff.max()) <= tol * scale:
        return ""
    text = mismatch(name, out, ref, diff, tol, scale).message
    return "; " + text[text.index(" at ") + 1:]
