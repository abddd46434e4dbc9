"""``workbench.quick``: several callables compared over sizes, perfplot's shape, on the workbench's harness.

The callables become an in-memory kernel (a :class:`~workbench.catalog.spec.KernelSpec` whose inputs come
from ``setup`` and whose reference is the first callable, or ``reference=``) with one variant each, and
run through :func:`workbench.sweep.driver.run_sweep` like any catalog kernel. So they get everything a spec
gets: interleaved rounds, worker processes (a callable that crashes, hangs or raises becomes a row with
its status; the others go on), outputs checked before timing and after it on rotated input sets, every
row stored under ``name``, and the same :class:`~workbench.api.Results`.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from workbench.adhoc.check import AdhocCompare, AdhocReference, tolerances
from workbench.adhoc.comparison import GIVE_UP_STATUSES, Comparison, GiveUp  # noqa: F401  (names users import from here)
from workbench.adhoc.devices import backend_for, callable_runtime
from workbench.adhoc.inputs import AdhocSetup, Layout, axis_of, layout_of, outputs_of, run_dtype
from workbench.adhoc.promote import promote
from workbench.api import Results
from workbench.catalog.spec import BuildContext, DeviceArrays, KernelCall, KernelSpec, Variant
from workbench.store.database import open_store
from workbench.sweep.driver import SweepSpec, run_sweep

#: Run name (and kernel name) of a comparison when none is given.
DEFAULT_NAME = "quick"
#: SweepSpec fields that quick() sets itself.
FIXED_FIELDS = ("kernels", "variants", "backends", "dtypes", "sizes", "modes", "suite", "llm_shapes")


def _no_outputs(params: Mapping[str, int]) -> dict[str, tuple[int, ...]]:
    """Callables return their outputs: the harness allocates no output buffers for them."""
    return {}


@dataclass
class PerSize:
    """``flops=`` / ``bytes=`` of a comparison: a callable of the size (NaN when not given: no rate shown)."""

    fn: Callable[[int], float] | None
    axis: str = "n"

    def __call__(self, params: Mapping[str, int], itemsize: int | None = None) -> float:
        return math.nan if self.fn is None else float(self.fn(int(params[self.axis])))


@dataclass
class AdhocVariant:
    """A variant's builder: ``fn`` called on the arguments of the input set it is given.

    ``code_runtime`` is what the callable's own code runs on (numba for a dispatcher given numpy arrays): the
    harness stores it as the row's runtime, so the row does not say numpy for numba code."""

    fn: Callable[..., Any]
    setup: AdhocSetup
    label: str = ""
    give_up: GiveUp | None = None
    code_runtime: str | None = None

    def __call__(self, ctx: BuildContext) -> KernelCall:
        if self.give_up is not None:
            self.give_up.check(self.label, self.setup.size(ctx.params))
        layout: Layout = self.setup.layouts[self.setup.size(ctx.params)]
        fn = self.fn
        bound: dict[int, tuple[Any, tuple[Any, ...], dict[str, Any]]] = {}

        def run(inputs: DeviceArrays, outputs: DeviceArrays) -> DeviceArrays:
            hit = bound.get(id(inputs))
            if hit is None or hit[0] is not inputs:  # arguments bound once per input set, not per call
                hit = bound[id(inputs)] = (inputs, *layout.bind(inputs))
            return outputs_of(fn(*hit[1], **hit[2]))

        return run


class QuickResults(Results):
    """:class:`~workbench.api.Results` of :func:`quick`, which also remembers the comparison to promote it."""

    def __init__(self, *args: Any, comparison: Comparison | None = None, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.comparison = comparison

    def promote(self, path: Any = None, name: str | None = None) -> Any:
        """This comparison as a catalog kernel: with ``path``, a folder ``path/<name>/`` (spec and
        variants files) that ``load_catalog(path)`` loads, returned as a Path; without, the files' text
        (printed in a notebook). The float64 reference and the tolerances are left marked TODO."""
        if self.comparison is None:
            raise ValueError("these results do not come from workbench.quick(): nothing to promote")
        return promote(self.comparison, path, name=name)


def _callables(callables: Any) -> dict[str, Callable[..., Any]]:
    if callable(callables):
        callables = [callables]
    if isinstance(callables, Mapping):
        items = list(callables.items())
    elif isinstance(callables, Iterable) and not isinstance(callables, (str, bytes)):
        items = [(getattr(f, "__name__", None) or f"f{i}", f) for i, f in enumerate(callables)]
    else:
        raise TypeError(f"quick() needs a dict of name -> callable (or a list of callables), got {callables!r}")
    if not items:
        raise ValueError("quick() needs at least one callable")
    out: dict[str, Callable[..., Any]] = {}
    for k, f in items:
        if not isinstance(k, str) or not k.strip() or " @ " in k:
            raise ValueError(f"callable name {k!r} must be a non-empty string without ' @ '")
        if not callable(f):
            raise TypeError(f"{k!r} is not callable: {f!r}")
        if k in out:
            raise ValueError(f"two callables are named {k!r} (lambdas are all named '<lambda>': pass a dict)")
        out[k] = f
    return out


def _sizes(sizes: Any) -> list[int]:
    if isinstance(sizes, numbers.Integral) and not isinstance(sizes, bool):
        sizes = [sizes]
    if hasattr(sizes, "tolist"):
        sizes = sizes.tolist()
    if not isinstance(sizes, (list, tuple)) or not sizes:
        raise ValueError(f"sizes must be a non-empty list of positive integers (setup's n), got {sizes!r}")
    bad = [s for s in sizes if isinstance(s, bool) or not isinstance(s, numbers.Integral) or s < 1]
    if bad:
        raise ValueError(f"sizes must be positive integers (setup's n); not understood: {bad!r}")
    return list(dict.fromkeys(int(s) for s in sizes))


def _runtimes(fns: Mapping[str, Callable[..., Any]], named: Any, default: str) -> dict[str, str]:
    """Each callable's runtime: as ``runtimes=`` names it, else read from the callable
    (:func:`~workbench.adhoc.devices.callable_runtime`), else ``default`` (the comparison backend's)."""
    if named is None:
        named = {}
    if not isinstance(named, Mapping):
        raise TypeError(f"runtimes= must be a dict of callable name -> runtime (e.g. {{'f': 'numba'}}), got {named!r}")
    unknown = sorted(set(named) - set(fns))
    if unknown:
        raise ValueError(f"runtimes= names {', '.join(map(repr, unknown))}, which are not callables here; "
                         f"valid: {', '.join(map(repr, fns))}")
    bad = {k: v for k, v in named.items() if not isinstance(v, str) or not v.strip() or " @ " in v}
    if bad:
        raise ValueError(f"runtimes= values must be non-empty names (e.g. 'numba', 'torch'); not understood: {bad!r}")
    return {k: named.get(k) or callable_runtime(f) or default for k, f in fns.items()}


def _per_size(fn: Any, what: str) -> Callable[[int], float] | None:
    if fn is None or callable(fn):
        return fn
    raise TypeError(f"{what}= must be a callable of the size n (e.g. lambda n: 2 * n), got {fn!r}")


def _check_name(name: str) -> str:
    from workbench.catalog import registry

    if not isinstance(name, str) or not name.strip() or "/" in name:
        raise ValueError(f"name must be a non-empty string without '/', got {name!r}")
    if name in registry.kernels() and registry.origin(name) is not None:
        raise ValueError(f"name {name!r} is a catalog kernel ({registry.origin(name)}); choose another name")
    return name


def _setup_of(setup: Callable[..., Any], sizes: list[int], backend: str | None) -> AdhocSetup:
    """``setup`` called once per size here: it picks the backend and dtype and fixes each size's constants."""
    import numpy as np

    from workbench.backends import registry

    if not callable(setup):
        raise TypeError(f"setup must be a callable of the size n returning the arguments, got {setup!r}")
    made: AdhocSetup | None = None
    for i, n in enumerate(sizes):
        rng = np.random.default_rng(n)
        probe = AdhocSetup(setup, "", "", "")
        try:
            value = probe.call(n, rng)
        except Exception as exc:
            raise ValueError(f"setup({n}) raised {type(exc).__name__}: {exc}") from exc
        if made is None:
            args = list(value.values()) if isinstance(value, Mapping) else (
                list(value) if isinstance(value, tuple) else [value])
            be = registry.get(backend_for(args, None, backend))
            made = AdhocSetup(setup, be.name, be.runtime, run_dtype(value, be.name, be.runtime), axis=axis_of(setup))
        made.layouts[n] = layout_of(value, made.backend, made.runtime, made.dtype)
        if i == 0 and not made.layouts[n].names:
            import logging

            logging.getLogger(__name__).info("setup(%d) gives no %s array on %s: arguments are not rotated",
                                             n, made.dtype, made.backend)
    assert made is not None
    return made


def register(comparison: Comparison) -> KernelSpec:
    """The comparison as an inline kernel with one variant per callable (replacing an earlier one of the same
    name); the first callable is the library baseline that speed-ups are measured against."""
    from workbench.catalog import registry

    setup = comparison.setup
    ref = AdhocReference(comparison.reference if comparison.check else None, comparison.reference_label or "",
                         setup)
    spec = KernelSpec(
        name=comparison.name, description=f"ad-hoc comparison of {', '.join(comparison.callables)}", axes=(setup.axis,),
        make_inputs=setup.make_inputs, reference=ref, output_shapes=_no_outputs,
        flops=PerSize(comparison.flops, setup.axis), bytes_moved=PerSize(comparison.bytes, setup.axis),
        sizes={"quick": [{setup.axis: n} for n in comparison.sizes]}, tolerances=dict(comparison.tolerances),
        compare=AdhocCompare(comparison.reference_label or "", comparison.tolerances, comparison.check))
    registry.unregister_kernel(comparison.name)
    registry.register_kernel(spec)
    for i, (label, fn) in enumerate(comparison.callables.items()):
        registry.register_variant(Variant(kernel=comparison.name, name=label, runtimes=(setup.runtime,),
                                          build=AdhocVariant(fn, setup, label, comparison.give_up,
                                                             comparison.runtimes.get(label)),
                                          library=i == 0,
                                          description=f"workbench.quick callable {label!r}"))
    return spec


def quick(callables: Any, setup: Callable[..., Any], sizes: Any, *, check: bool = True,
          reference: Callable[..., Any] | None = None, flops: Callable[[int], float] | None = None,
          bytes: Callable[[int], float] | None = None, name: str | None = None,  # noqa: A002 - the issue's name
          backend: str | None = None, tolerance: float | Mapping[str, float] | None = None, store: Any = None,
          progress: bool = True, runtimes: Mapping[str, str] | None = None, **sweep_kw: Any) -> QuickResults:
    """Compare ``callables`` (``{"name": f, ...}``) over ``sizes``; returns :class:`QuickResults`.

    ``setup(n)`` (or ``setup(n, rng)``) returns the arguments: one value, a tuple (positional) or a dict
    (keywords); it is called again, under a seeded random state, for every input set. With ``check``,
    each output is compared with the first callable's (or ``reference``'s) within ``tolerance`` (default
    per dtype: :data:`workbench.adhoc.check.TOLERANCES`); a mismatch makes the row ``incorrect``, untimed.
    ``flops`` and ``bytes`` (callables of n) give GFLOP/s and GB/s. ``backend`` (default: from the
    arguments' arrays) picks synchronisation and timer; ``runtimes`` (``{"f": "numba"}``) names what a
    callable's own code runs on where reading it from the callable (a numba dispatcher, a function calling
    torch ...) would get it wrong: rows store it as their runtime and legends show it. The run is stored
    under ``name`` (``store``: a Store, a path or the default store). Other keywords are
    :class:`~workbench.sweep.driver.SweepSpec` options:
    ``budget_s`` (per cell, all rounds), ``rounds``, ``timeout_s`` (a callable that never returns ends as
    ``timeout``), ``isolation`` ("process", the default, or "in-process"), ``min_samples``, ``seed`` ...
    """
    fns = _callables(callables)
    if reference is not None and not callable(reference):
        raise TypeError(f"reference must be a callable taking the same arguments, got {reference!r}")
    allowed = [f.name for f in dataclasses.fields(SweepSpec) if f.name not in FIXED_FIELDS]
    unknown = sorted(set(sweep_kw) - set(allowed))
    if unknown:
        raise ValueError(f"quick() got unknown option(s) {', '.join(unknown)}; valid: check, reference, flops, "
                         f"bytes, name, backend, tolerance, store, progress, runtimes, {', '.join(allowed)}")
    n_list, tols = _sizes(sizes), tolerances(tolerance)
    flops_fn, bytes_fn, label = _per_size(flops, "flops"), _per_size(bytes, "bytes"), _check_name(name or DEFAULT_NAME)
    SweepSpec(sizes=n_list, **sweep_kw).check()  # bad options fail here, before setup runs or anything registers
    _runtimes(fns, runtimes, "numpy")  # a bad runtimes= fails before setup runs too
    made = _setup_of(setup, n_list, backend)
    comparison = Comparison(
        name=label, callables=fns, setup=made, sizes=n_list, check=bool(check),
        reference=reference or next(iter(fns.values())),
        reference_label="reference" if reference is not None else next(iter(fns)),
        flops=flops_fn, bytes=bytes_fn, tolerances=tols, runtimes=_runtimes(fns, runtimes, made.runtime))
    spec = SweepSpec(kernels=[comparison.name], variants=list(fns), backends=[comparison.setup.backend],
                     dtypes=[comparison.setup.dtype], sizes=comparison.sizes, modes=("eager",), **sweep_kw)
    folder = tempfile.mkdtemp(prefix="wb-quick-")
    try:
        comparison.give_up = GiveUp(folder, comparison.setup.axis)
        register(comparison)
        outcome = run_sweep(spec, store=open_store(store), name=comparison.name, progress=progress,
                            on_cell=comparison.give_up.record)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return QuickResults(outcome.results(), [outcome.run_id], outcome.store, interrupted=outcome.interrupted,
                        wall_s=outcome.wall_s, comparison=comparison)
