"""Check every variant against its float64 reference: the check-only mode of the benchmark's cell pipeline.

The request means what it means for ``bench`` (:func:`workbench.sweep.selection.select`:
an unavailable named backend is refused before anything runs), and each
(kernel, variant, backend, dtype, size) is one cell run by the harness in
:class:`~workbench.measure.cell.CheckOnly` mode on the same worker, under the
same per-cell time limit — a variant that never returns becomes ``timeout``
instead of hanging the verifier. Statuses are the record's
(:data:`workbench.core.record.STATUSES`).

Each (kernel, variant, backend, dtype) becomes one :class:`VerifyResult`
summarising its cells (every size of the chosen size list, every seed, fresh
seeded inputs each time); it stops at the first cell that is not ``ok``.
Compiled variants (``torch.compile``, ~30 s per shape on two cores) are skipped
unless ``include_compiled`` is set or they are named; the skip is recorded on
the returned list (``results.skipped``) so callers can say so.
"""

from __future__ import annotations

import json
import math
import numbers
import re
import time
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from workbench.authoring.numba_support import boundscheck as numba_boundscheck
from workbench.catalog.spec import MODES, KernelSpec
from workbench.core.record import STATUSES, Row
from workbench.core.status import FAILED_IN_ORDER, Status
from workbench.measure.cell import BUILD_TIMEOUT_S, Cell, CheckOnly
from workbench.measure.isolation import CellExecutor, make_executor
from workbench.measure.request import NO_VARIANT
from workbench.sweep.selection import Target, select
from workbench.sweep.spec import SweepSpec, _match_sizes

#: Statuses that make verification fail (``unsupported`` says why something could not run; it is not a pass).
FAILED = tuple(reversed(FAILED_IN_ORDER))
#: In the message of every numba row of ``verify(boundscheck=True)``.
BOUNDSCHECK_NOTE = "numba boundscheck on"
#: Per cell (one size, every seed, building included: a torch.compile compiles once per shape).
DEFAULT_TIMEOUT_S = 120.0


@dataclass
class VerifyResult:
    kernel: str
    variant: str
    backend: str
    dtype: str
    status: str  # one of workbench.core.record.STATUSES
    max_error: float | None = None
    tolerance: float | None = None
    #: Parameters (and seed) of the worst trial: the first failing one, else the largest error.
    params: dict[str, int] | None = None
    seed: int | None = None
    message: str = ""
    seconds: float = 0.0
    trials: int = 0

    @property
    def passed(self) -> bool:
        """Every trial matched the reference (``status == "ok"``)."""
        return self.status == Status.OK

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "passed": self.passed}


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
        return not any(r.status in FAILED for r in self)


def _as_list(x: str | Iterable[str] | None) -> list[str] | None:
    if x is None:
        return None
    return [x] if isinstance(x, str) else list(x)


def verify(backends: str | Iterable[str] | None = None, kernels: str | Iterable[str] | None = None,
           variants: str | Iterable[str] | None = None, dtypes: str | Iterable[str] = ("float32",),
           seeds: Iterable[int] = (0, 1, 2), sizes: str | list[dict[str, int]] | list[tuple[int, ...]] = "verify",
           include_compiled: bool = False, timeout_s: float = DEFAULT_TIMEOUT_S,
           progress: Callable[[VerifyResult], None] | None = None, boundscheck: bool = False,
           build_timeout_s: float = BUILD_TIMEOUT_S, isolation: str | None = None,
           memory_cap: str | int | None = None,
           only: Container[tuple[str, str, str, str]] | None = None) -> VerifyResults:
    """Verify variants on backends; returns one row per (kernel, variant, backend, dtype).

    ``backends`` defaults to every available backend; naming an unavailable one
    raises :class:`~workbench.sweep.selection.BackendUnavailable` before anything runs.
    ``sizes`` is a size-list name from the specs ("verify", "quick", ...), explicit params (dicts), or
    tuples of one value per axis in the spec's order as ``bench --sizes 8x65536`` gives (a kernel none fits is
    skipped; a size that fits no kernel is a ValueError). ``timeout_s`` limits each cell (one size with every seed).
    Bad kernel, backend, variant or dtype names raise ValueError listing the valid ones.
    ``boundscheck``: numba variants are built with bounds checks (``NUMBA_BOUNDSCHECK=1``, without the
    disk cache) for this call, so an out-of-bounds index fails as an IndexError (``error``); their rows
    say "numba boundscheck on". A numba dispatcher keeps the code of its first compile, so variants that
    cache their own dispatchers (rather than build through ``KernelFolder.numba``) are checked only when
    this is the process's first build of them, as with ``workbench verify --boundscheck``. With process
    isolation (the default) the numba worker is a fresh process started with bounds checks, so every numba
    variant is checked.
    ``isolation`` and ``memory_cap``: where cells run and how much memory one may add
    (:mod:`workbench.measure.isolation`); a variant that crashes its worker is ``crashed``, the others go on.
    ``only``: (kernel, variant, backend, dtype) tuples; the selection's other pairs are left out (``verify
    --suite`` checks what a suite measures, whose variants differ from kernel to kernel).
    """
    seed_list = _check_seeds(seeds)
    timeout_s = _check_seconds("timeout_s", timeout_s)
    build_timeout_s = _check_seconds("build_timeout_s", build_timeout_s)
    sel = select(_as_list(kernels), _as_list(variants), _as_list(backends), _as_list(dtypes) or [],
                 MODES if include_compiled else None)
    size_lists = _size_lists(sel.specs, sizes)  # bad size-list names and sizes that fit no kernel fail first
    results = VerifyResults(skipped=[Skipped(spec.name, v.name, "compiled variant (use include_compiled)")
                                     for spec, v in sel.excluded]
                            + [Skipped(spec.name, "*", f"none of the sizes given fits its axes {spec.axes}")
                               for spec in sel.specs if not size_lists[spec.name]])
    worker = make_executor(isolation, memory_cap=memory_cap, boundscheck=boundscheck, name="workbench-verify")
    try:
        for spec in sel.specs:
            for v, reason in sel.stranded(spec):
                for d in sel.dtypes:
                    _emit(results, progress, VerifyResult(spec.name, v.name, "/".join(v.runtimes), d,
                                                          "unsupported", message=reason))
            for dtype in sel.dtypes if size_lists[spec.name] else ():
                for target in sel.targets(spec, dtype):
                    if only is not None and (spec.name, getattr(target.variant, "name", None), target.backend.name,
                                             dtype) not in only:
                        continue
                    with numba_boundscheck(boundscheck and worker.isolation == "in-process"):
                        result = _verify_target(target, size_lists[spec.name], seed_list, worker, timeout_s,
                                                build_timeout_s)
                    if boundscheck and target.backend.runtime == "numba":
                        result.message = "; ".join(filter(None, [result.message, BOUNDSCHECK_NOTE]))
                    _emit(results, progress, result)
    finally:
        worker.close()
    return results


#: Most seeds one call may ask for (each is a full check of every size), and the longest time limit.
MAX_SEEDS = 1000
MAX_SECONDS = 604800.0


def _check_seeds(seeds: Any) -> tuple[int, ...]:
    """``seeds`` as a tuple of non-negative integers; an empty list (which would pass after 0 checks), a
    string, a float or a bool is a ValueError naming it."""
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise ValueError(f"seeds must be a list of non-negative integers such as [0, 1, 2], got {seeds!r}")
    seed_list = tuple(seeds)
    if not seed_list:
        raise ValueError("seeds is empty: verify needs at least one seed (e.g. seeds=[0, 1, 2]); with none, "
                         "nothing would be checked")
    if len(seed_list) > MAX_SEEDS:
        raise ValueError(f"{len(seed_list)} seeds is more than the limit of {MAX_SEEDS}")
    for s in seed_list:
        if isinstance(s, bool) or not isinstance(s, numbers.Integral) or not 0 <= int(s) < 2**63:
            raise ValueError(f"seed {s!r} is not a non-negative integer; give seeds such as [0, 1, 2]")
    return tuple(int(s) for s in seed_list)


def _check_seconds(name: str, value: Any) -> float:
    """A time limit: a finite number of seconds > 0 (NaN would switch the limit off)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number of seconds > 0, got {value!r}")
    x = float(value)
    if not (math.isfinite(x) and 0 < x <= MAX_SECONDS):
        raise ValueError(f"{name} {x:g} is out of range: it must be a finite number of seconds > 0 and <= "
                         f"{MAX_SECONDS:g}")
    return x


def _emit(results: VerifyResults, progress: Callable[[VerifyResult], None] | None, row: VerifyResult) -> None:
    results.append(row)
    if progress is not None:
        progress(row)


def _size_lists(specs: list[KernelSpec], sizes: Any) -> dict[str, list[dict[str, int]]]:
    """Each kernel's sizes; explicit tuples (``8x65536``) must each fit some kernel, as ``bench`` asks."""
    if isinstance(sizes, (list, tuple)) and sizes and any(isinstance(p, (list, tuple)) for p in sizes):
        SweepSpec(sizes=list(sizes))._check_sizes_fit(specs)
    return {spec.name: _size_list(spec, sizes) for spec in specs}


def _size_list(spec: KernelSpec, sizes: str | list[dict[str, int]]) -> list[dict[str, int]]:
    if isinstance(sizes, str):
        if sizes not in spec.sizes:
            raise ValueError(f"kernel {spec.name!r} has no size list {sizes!r}; "
                             f"valid: {', '.join(spec.sizes)}")
        return list(spec.sizes[sizes])
    if isinstance(sizes, Mapping):
        sizes = [sizes]
    if isinstance(sizes, (list, tuple)) and sizes and any(isinstance(p, (list, tuple)) for p in sizes):
        return _match_sizes(spec, list(sizes), explicit_kernel=False)  # 8x65536: one value per axis, in order
    if not isinstance(sizes, (list, tuple)) or not sizes:
        raise ValueError(f"sizes must be a size-list name ({', '.join(spec.sizes)}) or a non-empty list of "
                         f"dicts such as {{{', '.join(repr(a) + ': 64' for a in spec.axes)}}}, got {sizes!r}")
    out = []
    for p in sizes:
        if not isinstance(p, Mapping) or any(isinstance(v, bool) or not isinstance(v, numbers.Integral)
                                             for v in p.values()):
            raise ValueError(f"size {p!r} is not understood: kernel {spec.name!r} takes a dict of positive "
                             f"integers with axes {', '.join(spec.axes)}")
        out.append(spec.validate_params(p))
    return out


def _verify_target(t: Target, sizes: list[dict[str, int]], seeds: tuple[int, ...], worker: CellExecutor,
                   timeout_s: float, build_timeout_s: float = BUILD_TIMEOUT_S) -> VerifyResult:
    """One cell per size through the harness, folded into one result; stops at the first cell not ok."""
    name, mode = (t.variant.name, t.variant.mode) if t.variant else (NO_VARIANT, "eager")
    tol = t.spec.tolerance(t.dtype, sizes[0]) if sizes else None
    result = VerifyResult(t.spec.name, name, t.backend.name, t.dtype, "ok", tolerance=tol)
    t0 = time.perf_counter()
    worst = -1.0
    for params in sizes if t.unsupported is None else sizes[:1]:
        cell = Cell.make(t.spec.name, name, t.backend.name, t.dtype, params, mode, "hot", t.unsupported)
        row = Row.from_mapping(worker.execute(cell, CheckOnly(seeds), timeout_s=timeout_s,
                                              build_timeout_s=build_timeout_s))
        checked = seeds.index(row.seed) + (row.status in (Status.OK, Status.INCORRECT)) if row.seed in seeds else 0
        result.trials += len(seeds) if row.status == Status.OK else checked
        if row.status != Status.OK or (row.max_error is not None and row.max_error > worst):
            worst = row.max_error if row.max_error is not None else worst
            result.max_error, result.params, result.seed = row.max_error, json.loads(row.params), row.seed
            result.tolerance = row.tolerance if row.tolerance is not None else result.tolerance
        if row.status != Status.OK:
            result.status, result.message = str(row.status), (row.message or "") + _where(row.traceback)
            if row.status == Status.UNSUPPORTED:
                result.params = result.seed = None
            break
    result.seconds = time.perf_counter() - t0
    return result


def _where(traceback: str | None) -> str:
    """`` (at file:line)`` of the innermost frame of an error's traceback, where the variant failed."""
    frames = re.findall(r'File "([^"]+)", line (\d+)', traceback or "")
    return f" (at {frames[-1][0]}:{frames[-1][1]})" if frames else ""
