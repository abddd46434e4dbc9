"""The correctness check every output of a kernel must pass, against its float64 reference.

Part of the catalog because it is a property of the spec (its tolerances, its output dtypes, its own
``compare`` where the default rules do not fit): a spec's custom ``compare`` reuses the basic rules
(shape, dtype, NaN/Inf, constant output) from here without reaching up to the harness.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from workbench.catalog.spec import KernelSpec
from workbench.core.dtypes import host_dtype
from workbench.core.record import JsonObject


@dataclass
class CheckResult:
    passed: bool
    max_error: float  # max |out - ref| / max |ref| over outputs (inf on NaN / shape mismatch)
    tolerance: float
    message: str = ""

    def to_dict(self) -> JsonObject:
        return {"passed": self.passed, "max_error": self.max_error, "tolerance": self.tolerance,
                "message": self.message}


def output_dtype(spec: KernelSpec, name: str, dtype: str) -> str:
    return spec.output_dtypes.get(name, dtype)


def check(spec: KernelSpec, outputs: dict[str, np.ndarray], reference: dict[str, np.ndarray], dtype: str,
          inputs: dict[str, np.ndarray] | None = None, params: dict[str, int] | None = None) -> CheckResult:
    """Compare outputs with the float64 reference.

    Error is max |out - ref| normalised by the reference's magnitude, so it
    means the same for tiny and huge values. NaN/Inf, wrong shapes, wrong
    dtypes (a float32 run that returns float64 computed something else),
    missing outputs and constant outputs where the reference varies all fail.
    """
    tol = spec.tolerance(dtype)
    if spec.compare is not None:
        err, msg = spec.compare(outputs, reference, inputs, params, dtype)
        return CheckResult(bool(err <= tol), float(err), tol, msg)
    worst, messages = 0.0, []
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
        finite = np.isfinite(x)
        if not finite.all():
            bad = int(np.size(x) - np.count_nonzero(finite))
            return CheckResult(False, float("inf"), tol, f"{name}: {bad} non-finite values (NaN/Inf)")
        del finite
        rmax, rmin = (float(ref.max()), float(ref.min())) if ref.size else (0.0, 0.0)
        if ref.size > 1 and rmax > rmin and x.max() == x.min():
            return CheckResult(False, float("inf"), tol,
                               f"{name}: constant output {float(x.flat[0])!r} where the reference varies")
        scale = max(abs(rmax), abs(rmin)) or 1.0
        err = 0.0
        if ref.size:
            diff = np.subtract(x, ref, dtype=np.float64)
            np.abs(diff, out=diff)
            err = float(diff.max()) / scale
        if err > tol:
            messages.append(f"{name}: max error {err:.3g} > tolerance {tol:.3g}")
        worst = max(worst, err)
    return CheckResult(worst <= tol and not messages, worst, tol, "; ".join(messages))
