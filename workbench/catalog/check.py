"""The correctness check every output of a kernel must pass, against its float64 reference.

Part of the catalog because it is a property of the spec (its tolerances, its output dtypes, its own
``compare`` where the default rules do not fit): a spec's custom ``compare`` reuses the basic rules
(shape, dtype, NaN/Inf, constant output) from here without reaching up to the harness.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.catalog.spec import KernelSpec
from workbench.core.dtypes import host_dtype
from workbench.core.record import JsonObject

#: A failure's errors look like rounding when at least this share of the elements are off (rounding touches
#: nearly every element; a dropped, shifted or unwritten element touches one, or a run of them) ...
ROUNDING_SHARE = 0.1
#: ... and the typical off element is off by at most this much of its own magnitude (float16 rounds to 5e-4,
#: bfloat16 to 4e-3, TF32 to 5e-4; a shifted or missing term is off by its whole size).
ROUNDING_RELATIVE = 1e-2


@dataclass
class CheckResult:
    passed: bool
    max_error: float  # max |out - ref| / max |ref| over outputs (nan where outputs hold NaN only; inf on Inf / shape)
    tolerance: float
    message: str = ""
    #: The failure's errors are spread like rounding (most elements off, each by a small part of itself), so
    #: "lower-precision arithmetic" is a fair guess; False for a wrong, missing or shifted element.
    rounding_like: bool = False

    def to_dict(self) -> JsonObject:
        return {"passed": self.passed, "max_error": self.max_error, "tolerance": self.tolerance,
                "message": self.message}


def index_text(name: str, shape: tuple[int, ...], flat: int) -> str:
    """``out[37, 412]``: a flat index in the output's own shape."""
    return f"{name}[{', '.join(str(int(i)) for i in np.unravel_index(flat, shape))}]" if shape else name


def mismatch(name: str, out: np.ndarray, ref: np.ndarray, diff: np.ndarray, tol: float, scale: float) -> CheckResult:
    """A failed output's check: its worst element (index in the output's shape, value, the reference there),
    how many elements are off by more than the tolerance, and whether that pattern looks like rounding.
    ``diff`` is ``|out - ref|`` in float64."""
    flat = int(np.argmax(diff))
    err = float(diff.flat[flat]) / scale
    off = diff > tol * scale
    n_off = int(np.count_nonzero(off))
    rel = diff[off] / np.maximum(np.abs(ref[off]), tol * scale)
    rounding = (n_off >= max(2, ROUNDING_SHARE * diff.size) and float(np.median(rel)) <= ROUNDING_RELATIVE
                and not shifted(out, ref, diff, off) and not stepped(out, ref, off))
    msg = (f"{name}: max error {err:.3g} > tolerance {tol:.3g} at {index_text(name, ref.shape, flat)}: "
           f"{float(out.flat[flat]):.6g}, reference {float(ref.flat[flat]):.6g}; {n_off:,} of {diff.size:,} "
           f"elements off")
    return CheckResult(False, err, tol, msg, rounding_like=rounding)


def shifted(out: np.ndarray, ref: np.ndarray, diff: np.ndarray, off: np.ndarray) -> bool:
    """Whether the off elements hold their neighbour's answer along the last axis (an exclusive scan where an
    inclusive one was asked, an off-by-one index): closer to the reference one place over than to their own."""
    if ref.ndim == 0 or ref.shape[-1] < 2:
        return False
    own = float(np.median(diff[off]))
    for step in (1, -1):
        moved = np.abs(out.astype(np.float64) - np.roll(ref, step, axis=-1))
        if float(np.median(moved[off])) < 0.5 * own:
            return True
    return False


def stepped(out: np.ndarray, ref: np.ndarray, off: np.ndarray) -> bool:
    """Whether most rows (along the last axis) with errors are off by one constant from some element on: what a
    dropped or doubled term of a scan or sum gives. Rounding errors of a row vary from element to element."""
    if ref.ndim == 0:
        return False
    err = (out.astype(np.float64) - ref).reshape(-1, ref.shape[-1])
    rows = off.reshape(-1, ref.shape[-1])
    steps = hit = 0
    for e, o in zip(err, rows, strict=True):
        if np.count_nonzero(o) < 2:
            continue
        hit += 1
        q1, q3 = np.percentile(e[o], [25, 75])
        steps += bool(q3 - q1 < 0.1 * float(np.median(np.abs(e[o]))))
    return hit > 0 and steps * 2 >= hit


def non_finite(name: str, x: np.ndarray, ref: np.ndarray, tol: float) -> CheckResult:
    """An output holding NaN/Inf: where the first one is, and when every one is NaN, that NaN is what the
    harness fills an output with before a checked call (an element the kernel never wrote)."""
    bad = ~np.isfinite(x)
    n_bad, flat = int(np.count_nonzero(bad)), int(np.argmax(bad))
    nan_only = bool(np.isnan(x[bad]).all())
    # the error of an output holding only NaN is NaN, not inf: 03 printed "inf" beside "still the NaN"
    err = float("nan") if nan_only else float("inf")
    if nan_only and n_bad == x.size:
        # how many of how many, and which: 03 printed "its one element is non-finite" beside a spec whose sizes
        # run to 100,003 elements, which left the reader to guess which size and which element
        what = (f"its only element, {index_text(name, x.shape, 0)} (1 of 1), is" if x.size == 1 else
                f"all {x.size:,} of its {x.size:,} elements ({index_text(name, x.shape, 0)} to "
                f"{index_text(name, x.shape, x.size - 1)}) are")
        return CheckResult(False, err, tol, f"{name}: never written: {what} non-finite, still the NaN "
                                            "the harness fills outputs with before a checked call")
    where = (f"first at {index_text(name, ref.shape, flat)} (reference {float(ref.flat[flat]):.6g})"
             if ref.shape == x.shape else "")
    why = ("NaN: never written (the harness fills outputs with NaN before a checked call), or computed as NaN"
           if nan_only else "NaN/Inf")
    return CheckResult(False, err, tol,
                       f"{name}: {n_bad:,} of {x.size:,} elements non-finite ({why}); {where}".rstrip("; "))


def output_dtype(spec: KernelSpec, name: str, dtype: str) -> str:
    return spec.output_dtypes.get(name, dtype)


def check(spec: KernelSpec, outputs: dict[str, np.ndarray], reference: dict[str, np.ndarray], dtype: str,
          inputs: dict[str, np.ndarray] | None = None, params: dict[str, int] | None = None,
          structure_only: bool = False) -> CheckResult:
    """Compare outputs with the float64 reference.

    Error is max |out - ref| normalised by the reference's magnitude, so it
    means the same for tiny and huge values. NaN/Inf, wrong shapes, wrong
    dtypes (a float32 run that returns float64 computed something else),
    missing outputs and constant outputs where the reference varies all fail.
    ``structure_only``: those checks alone, no error against the tolerance (a spec's own ``compare`` measures
    the error its own way, as the quantized GEMMs do against the dot products' mass).
    """
    tol = spec.tolerance(dtype, params)
    if spec.compare is not None:
        err, msg = spec.compare(outputs, reference, inputs, params, dtype)
        return CheckResult(bool(err <= tol), float(err), tol, msg,
                           rounding_like=err > tol and rounding_pattern(outputs, reference, tol))
    worst, failed = 0.0, []
    for name, ref in reference.items():
        if name not in outputs:
            return CheckResult(False, float("inf"), tol, f"output {name!r} missing")
        out = np.asarray(outputs[name])
        if out.shape != ref.shape:
            return CheckResult(False, float("inf"), tol, f"{name}: shape {out.shape}, expected {ref.shape}")
        expected = host_dtype(output_dtype(spec, name, dtype))
        if out.dtype != expected:
            return CheckResult(False, float("inf"), tol,
                               f"{name}: dtype {out.dtype}, expected {expected} for a {dtype} run")
        # on the output's own dtype where numpy computes with it (no float64 copy of a large output: a check
        # was a third of a small quick-suite cell's time); bfloat16 and the like through float64
        x = out if out.dtype.kind in "fiu" else out.astype(np.float64)
        if not np.isfinite(x).all():
            return non_finite(name, x, ref, tol)
        rmax, rmin = (float(ref.max()), float(ref.min())) if ref.size else (0.0, 0.0)
        if ref.size > 1 and rmax > rmin and x.max() == x.min():
            return CheckResult(False, float("inf"), tol,
                               f"{name}: constant output {float(x.flat[0])!r} where the reference varies")
        if structure_only:
            continue
        scale = max(abs(rmax), abs(rmin)) or 1.0
        err = 0.0
        if ref.size:
            diff = np.subtract(x, ref, dtype=np.float64)
            np.abs(diff, out=diff)
            err = float(diff.max()) / scale
            if err > tol:
                failed.append(mismatch(name, x, ref, diff, tol, scale))
        worst = max(worst, err)
    if not failed:
        return CheckResult(worst <= tol, worst, tol)
    return CheckResult(False, worst, tol, "; ".join(f.message for f in failed),
                       rounding_like=all(f.rounding_like for f in failed))


def rounding_pattern(outputs: Mapping[str, Any], reference: Mapping[str, np.ndarray], tol: float) -> bool:
    """Whether a custom ``compare``'s failure looks like rounding in every output it can read as the reference's
    shape (:func:`mismatch`'s rule); False where an output is missing, of another shape, or not finite."""
    found = False
    for name, ref in reference.items():
        out = outputs.get(name)
        if out is None or np.shape(out) != ref.shape or not ref.size:
            return False
        x = np.asarray(out, dtype=np.float64)
        if not np.isfinite(x).all():
            return False
        scale = float(np.max(np.abs(ref))) or 1.0
        diff = np.abs(x - ref)
        if float(diff.max()) / scale > tol:
            if not mismatch(name, x, ref, diff, tol, scale).rounding_like:
                return False
            found = True
    return found
