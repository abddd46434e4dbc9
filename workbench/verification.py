"""Check every variant against its float64 reference: kernel x variant x backend x dtype x size x seed.

Each (kernel, variant, backend, dtype) becomes one :class:`VerifyResult`
summarising its trials (every size in the chosen size list, every seed, fresh
seeded inputs each time). A variant that cannot run somewhere is reported as
``unsupported`` with the reason — never as a pass — and an exception becomes
``error`` with its message. Compiled variants (``torch.compile``, ~30 s per
shape on two cores) are skipped unless ``include_compiled`` is set; the skip is
recorded on the returned list (``results.skipped``) so callers can say so.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable

from .backends.base import Backend
from .backends.registry import all_backends, available_backends
from .catalog import get_kernel, kernels as all_kernels, variants as kernel_variants
from .catalog.spec import KernelSpec, Unsupported, Variant
from .dtypes import check_dtype
from .case import Case

STATUSES = ("pass", "fail", "unsupported", "error")


@dataclass
class VerifyResult:
    kernel: str
    variant: str
    backend: str
    dtype: str
    status: str  # pass | fail | unsupported | error
    max_error: float | None = None
    tolerance: float | None = None
    #: Parameters (and seed) of the worst trial: the first failing one, else the largest error.
    params: dict[str, int] | None = None
    seed: int | None = None
    message: str = ""
    seconds: float = 0.0
    trials: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Skipped:
    kernel: str
    variant: str
    reason: str


class VerifyResults(list):
    """The list of :class:`VerifyResult` plus what was deliberately skipped."""

    def __init__(self, rows: Iterable[VerifyResult] = (), skipped: Iterable[Skipped] = ()):
        super().__init__(rows)
        self.skipped: list[Skipped] = list(skipped)

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for r in self if r.status == s) for s in STATUSES}

    @property
    def ok(self) -> bool:
        return not any(r.status in ("fail", "error") for r in self)


def _as_list(x: str | Iterable[str] | None) -> list[str] | None:
    if x is None:
        return None
    return [x] if isinstance(x, str) else list(x)


def _select_backends(names: list[str] | None) -> tuple[list[Backend], list[tuple[Backend, str]]]:
    """(usable backends, [(named but unavailable backend, reason)]). Unknown names raise ValueError."""
    known = all_backends()
    if names is None:
        return [known[n] for n in available_backends()], []
    usable, down = [], []
    for n in names:
        if n not in known:
            raise ValueError(f"unknown backend {n!r}; valid backends: {', '.join(sorted(known))}")
        probe = known[n].probe()
        (usable.append(known[n]) if probe.available else down.append((known[n], probe.reason)))
    return usable, down


def _select_variants(kernel_names: list[str], names: list[str] | None) -> list[tuple[KernelSpec, Variant]]:
    chosen, seen = [], set()
    for k in kernel_names:
        spec = get_kernel(k)
        for v in sorted(kernel_variants(k).values(), key=lambda v: v.name):
            if names is None or v.name in names:
                chosen.append((spec, v))
                seen.add(v.name)
    if names:
        missing = [n for n in names if n not in seen]
        if missing:
            valid = sorted({v for k in kernel_names for v in kernel_variants(k)})
            raise ValueError(f"no variant named {', '.join(map(repr, missing))} in kernels "
                             f"{', '.join(kernel_names)}; valid variants: {', '.join(valid)}")
    return chosen


def verify(backends: str | Iterable[str] | None = None, kernels: str | Iterable[str] | None = None,
           variants: str | Iterable[str] | None = None, dtypes: str | Iterable[str] = ("float32",),
           seeds: Iterable[int] = (0, 1, 2), sizes: str | list[dict[str, int]] = "verify",
           include_compiled: bool = False,
           progress: Callable[[VerifyResult], None] | None = None) -> VerifyResults:
    """Verify variants on backends; returns one row per (kernel, variant, backend, dtype).

    ``backends`` defaults to every available backend; naming an unavailable one
    reports its variants as unsupported with the probe's reason. ``sizes`` is a
    size-list name from the specs ("verify", "quick", ...) or explicit params.
    Bad kernel, backend, variant or dtype names raise ValueError listing the valid ones.
    """
    dtype_list = [check_dtype(d) for d in _as_list(dtypes) or []]
    kernel_names = _as_list(kernels) or sorted(all_kernels())
    for k in kernel_names:
        _size_list(get_kernel(k), sizes)  # unknown kernels and size-list names fail before any work
    usable, down = _select_backends(_as_list(backends))
    runtimes_here = {b.runtime for b in usable} | {b.runtime for b, _ in down}
    seeds = list(seeds)

    results = VerifyResults()
    for spec, var in _select_variants(kernel_names, _as_list(variants)):
        if var.mode == "compiled" and not include_compiled:
            results.skipped.append(Skipped(spec.name, var.name, "compiled variant (use include_compiled)"))
            continue
        targets = [b for b in usable if b.runtime in var.runtimes]
        for b, reason in down:
            if b.runtime in var.runtimes:
                for d in dtype_list:
                    _emit(results, progress, VerifyResult(spec.name, var.name, b.name, d, "unsupported",
                                                          message=f"backend unavailable: {reason}"))
        if backends is None and not targets and not runtimes_here & set(var.runtimes):
            for d in dtype_list:
                _emit(results, progress, VerifyResult(
                    spec.name, var.name, "/".join(var.runtimes), d, "unsupported",
                    message=_no_backend_reason(var.runtimes)))
        for b in targets:
            for d in dtype_list:
                _emit(results, progress, _verify_one(spec, var, b, d, seeds, sizes))
    return results


def _no_backend_reason(runtimes: tuple[str, ...]) -> str:
    """Why no backend runs these runtimes, with each matching adapter's probe reason."""
    why = [f"{b.name}: {b.probe().reason}" for b in all_backends().values() if b.runtime in runtimes]
    return f"no available backend runs {' or '.join(runtimes)}" + (f" ({'; '.join(why)})" if why else "")


def _emit(results: VerifyResults, progress, row: VerifyResult) -> None:
    results.append(row)
    if progress is not None:
        progress(row)


def _size_list(spec: KernelSpec, sizes: str | list[dict[str, int]]) -> list[dict[str, int]]:
    if isinstance(sizes, str):
        if sizes not in spec.sizes:
            raise ValueError(f"kernel {spec.name!r} has no size list {sizes!r}; "
                             f"valid: {', '.join(spec.sizes)}")
        return list(spec.sizes[sizes])
    return list(sizes)


def _verify_one(spec: KernelSpec, var: Variant, backend: Backend, dtype: str, seeds: list[int],
                sizes: str | list[dict[str, int]]) -> VerifyResult:
    row = VerifyResult(spec.name, var.name, backend.name, dtype, "pass", tolerance=spec.tolerance(dtype))
    t0 = time.perf_counter()
    current: dict[str, int] | None = None
    try:
        reason = var.unsupported_reason(backend, dtype)
        if reason:
            row.status, row.message = "unsupported", reason
            return row
        worst = -1.0
        for params in _size_list(spec, sizes):
            current, case = dict(params), None
            for seed in seeds:
                if case is None:
                    case = Case(spec, var, backend, params, dtype, seed)
                else:
                    case.reseed(seed)
                res = case.run_and_check()
                row.trials += 1
                if not res.passed or res.max_error > worst:
                    worst = res.max_error
                    row.max_error, row.params, row.seed = res.max_error, dict(case.params), seed
                if not res.passed:
                    row.status = "fail"
                    row.message = res.message or f"max error {res.max_error:.3g} > tolerance {res.tolerance:.3g}"
                    return row
    except Unsupported as exc:
        row.status, row.message = "unsupported", str(exc) or type(exc).__name__
    except Exception as exc:  # a crashing variant is a result, not a crash of the verifier
        row.status = "error"
        where = traceback.extract_tb(exc.__traceback__)[-1]
        row.message = f"{type(exc).__name__}: {exc} (at {where.filename}:{where.lineno})"
        row.params = current
    finally:
        row.seconds = time.perf_counter() - t0
    return row
