"""numba variants: a kernel factory registered once, compiled per dtype, cached on disk, warmed before timing.

``@numba_variant(op, name)`` decorates a factory ``(t) -> @njit kernel`` (``t`` the numpy scalar type of
the run dtype); the kernel's parameters are named after the spec's inputs and outputs, so the variant passes
them by name. ``numba_map(op, scalar)`` does the same for an elementwise loop from its per-element function.
The building blocks (:func:`disk_cached`, :func:`per_config`, :func:`numba_call`, :func:`warmup_arrays`,
:func:`boundscheck`, :func:`line_buffers`) are public for hand-written numba variants.

numba itself (and :mod:`.numba_math`, which imports it) loads only when a variant is built, so loading the
catalog stays cheap and works without numba.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

import numpy as np

from workbench.catalog.authoring import KernelFolder
from workbench.catalog.spec import BuildContext, DeviceArrays, KernelCall, KernelSpec, Tunable, TunableValue
from workbench.catalog.verbs.helpers import folder_helper

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
Config = tuple[tuple[str, Any], ...]


@folder_helper("numba")
def numba_variant(op: KernelFolder, name: str = "numba", *, description: str = "", mode: str = "eager",
                  dtypes: Iterable[str] | None = None, tunables: Iterable[Tunable] = (),
                  restrictions: Iterable[str] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a kernel factory ``(t) -> @njit function`` to register it as ``op``'s numba variant ``name``.

    ``t`` is the numpy scalar type of the run dtype (``np.float32`` or ``np.float64``, the dtypes numba
    kernels implement); build the kernel's constants with it (``one = t(1.0)``) so arithmetic stays in the
    run dtype. The factory is cached per dtype (the decorator returns the cached factory, so other variants
    reuse the same compiled functions), the kernel is cached on disk where numba can, and the build compiles
    it on one-element arrays, never inside a timed call. ``description`` defaults to the factory's docstring.

    With ``tunables`` (and ``restrictions`` between them) the factory is ``(t, config) -> kernel``, ``config``
    a dict of the tunables' values, and the returned factory is ``(dtype, config=()) -> kernel`` (``config``
    as sorted ``(name, value)`` pairs; defaults where empty). The values are closure constants of the kernel,
    so numba's disk cache keys on them.
    """
    tunables, restrictions = tuple(tunables), tuple(restrictions)

    def deco(factory: Callable[..., Any]) -> Callable[..., Any]:
        def make(dtype: str, config: Config) -> Any:
            from workbench.authoring.numba_math import numpy_dtype

            t = numpy_dtype(dtype)
            if not tunables:
                return factory(t)
            return factory(t, {**{tu.name: tu.default for tu in tunables}, **dict(config)})

        @functools.cache
        def kernel_for(dtype: str, config: Config = ()) -> Any:
            return disk_cached(make(dtype, config), salt=dtype + repr(config))

        @functools.cache
        def checked_kernel_for(dtype: str, config: Config = ()) -> Any:
            return make(dtype, config)  # boundscheck builds: own dispatchers, no disk cache

        def build(ctx: BuildContext) -> KernelCall:
            pick = checked_kernel_for if numba_boundscheck() else kernel_for
            return numba_call(op.spec, pick(ctx.dtype, tuple(sorted(ctx.config.items()))), ctx.dtype)

        functools.update_wrapper(kernel_for, factory)
        build.__module__, build.__qualname__ = factory.__module__, f"{factory.__qualname__}.build"
        op.variant(name, "numba", mode=mode, dtypes=dtypes, tunables=tunables, restrictions=restrictions,
                   description=description or inspect.getdoc(factory) or "")(build)
        return kernel_for

    return deco


@folder_helper("numba_map")
def numba_map(op: KernelFolder, scalar: Callable[[Any], Callable] | None = None, *, name: str = "numba",
              description: str = "") -> Any:
    """Register ``out[i] = f(a[i], b[i], ...)`` as ``op``'s numba variant, given ``scalar(t) -> f``.

    Call it with ``scalar`` or use it as a decorator (``@numba_map(op)``); either way it returns the cached
    kernel factory ``(dtype name) -> dispatcher``. ``t`` is the numpy scalar type of the run dtype (build
    constants with it: ``zero = t(0)``); ``f`` takes one element of each input, in the spec's input order.
    The loop is the elementwise kernel every 1-D op shares (:func:`.numba_math.elementwise_kernel`).
    """
    def deco(scalar: Callable[[Any], Callable]) -> Callable[[str], Any]:
        def factory(t: type) -> Any:
            from workbench.authoring.numba_math import elementwise_kernel

            return elementwise_kernel(scalar(t), len(op.spec.make_inputs(
                {a: 1 for a in op.spec.axes}, np.random.default_rng(0))))

        factory.__module__, factory.__qualname__ = scalar.__module__, scalar.__qualname__
        factory.__doc__ = scalar.__doc__
        return numba_variant(op, name, description=description)(factory)

    return deco if scalar is None else deco(scalar)


def numba_boundscheck() -> bool:
    """numba compiles with bounds checks in this process (``NUMBA_BOUNDSCHECK=1``, or
    ``workbench verify --boundscheck``): an out-of-bounds index raises IndexError."""
    numba = sys.modules.get("numba")
    return bool(numba is not None and getattr(numba.config, "BOUNDSCHECK", None))


@contextlib.contextmanager
def boundscheck(on: bool = True) -> Iterator[None]:
    """numba builds inside the block compile with bounds checks, without the disk cache (its key does not
    include them); restored afterwards. A no-op without numba."""
    if not on:
        yield
        return
    try:
        import numba
    except ImportError:
        yield
        return
    old_cfg, old_env = numba.config.BOUNDSCHECK, os.environ.get("NUMBA_BOUNDSCHECK")
    numba.config.BOUNDSCHECK = 1
    os.environ["NUMBA_BOUNDSCHECK"] = "1"
    try:
        yield
    finally:
        numba.config.BOUNDSCHECK = old_cfg
        if old_env is None:
            os.environ.pop("NUMBA_BOUNDSCHECK", None)
        else:
            os.environ["NUMBA_BOUNDSCHECK"] = old_env


def disk_cached(kernel: Any, salt: str = "") -> Any:
    """Turn on numba's on-disk cache for ``kernel`` (an ``@njit`` dispatcher) before its first compile.

    numba stores the cache beside the source (``__pycache__``) or, where that is not writable, in the user's
    cache directory; where it can do neither the kernel still runs, compiled per process. Closure values are
    stamped so the cache key is the same in every process (see ``numba_math``).
    """
    from workbench.authoring import numba_math

    numba_math.stable_identities(kernel, salt)
    if numba_boundscheck():  # the disk cache's key ignores boundscheck: such builds neither read nor write it
        return kernel
    if hasattr(kernel, "enable_caching") and not kernel.overloads:
        try:
            kernel.enable_caching()
        except RuntimeError as exc:  # numba: "cannot cache function ...: no locator available"
            log.info("numba kernel %s is not cached on disk: %s", getattr(kernel, "__qualname__", kernel), exc)
    return kernel


def per_config(fn: F, config: Mapping[str, TunableValue]) -> F:
    """``fn`` renamed after ``config`` (``row_block`` -> ``row_block__NB128_KC256``), before ``@njit``.

    numba names compiled code after the function's qualified name and a per-process counter, and its disk
    cache keeps that name: two configurations of one closure, compiled in two processes, can come back
    from the cache under the same symbol, and one process loading both then links one configuration's
    helper into the other's kernel (measured: wrong results, then a heap corruption). One name per
    configuration keeps them apart, in memory and on disk."""
    fn.__qualname__ = f"{fn.__qualname__}__{'_'.join(f'{k}{v}' for k, v in config.items())}"
    return fn


#: Page slot of a variant's first scratch buffer: after a case's inputs and outputs (slots 0 .. 7 for up to 8).
SCRATCH_SLOT = 8


def line_buffers(shapes: Mapping[str, tuple[int, ...]], dtype: Any) -> dict[str, np.ndarray]:
    """Scratch arrays a variant makes once when it is built, each on a cache line at a fixed page offset
    (:mod:`workbench.core.placement`): ``np.empty``'s 16-byte alignment, at an address that follows the
    allocator's history, moved a kernel's time between rounds and runs as its inputs' did."""
    from workbench.core.placement import placed_empty

    return {name: placed_empty(tuple(shape), np.dtype(dtype), SCRATCH_SLOT + i)
            for i, (name, shape) in enumerate(shapes.items())}


def warmup_arrays(spec: KernelSpec, dtype: str) -> dict[str, np.ndarray]:
    """One-element-per-axis inputs and outputs of ``spec`` in ``dtype`` (C-contiguous, as runs pass them)."""
    from workbench.authoring.numba_math import numpy_dtype

    t = numpy_dtype(dtype)
    p1 = {a: 1 for a in spec.axes}
    arrays = {k: np.ascontiguousarray(np.asarray(v).astype(spec.input_dtypes.get(k, t)))
              for k, v in spec.make_inputs(p1, np.random.default_rng(0)).items()}
    for k, shape in spec.output_shapes(p1).items():
        arrays[k] = np.zeros(shape, spec.output_dtypes.get(k, t))
    return arrays


def numba_call(spec: KernelSpec, kernel: Any, dtype: str) -> KernelCall:
    """``run(inputs, outputs)`` calling ``kernel`` with the arrays its parameters name, compiled now."""
    names = tuple(inspect.signature(kernel.py_func).parameters)
    outputs = set(spec.output_shapes({a: 1 for a in spec.axes}))
    arrays = warmup_arrays(spec, dtype)  # inputs in make_inputs order, then outputs
    if any(n not in arrays for n in names) and len(names) == len(arrays):
        names = tuple(arrays)  # positional parameters (elementwise_kernel): inputs in spec order, then outputs
    unknown = [n for n in names if n not in arrays]
    if unknown:
        raise TypeError(f"{spec.name}: numba kernel {kernel.py_func.__qualname__} has parameters {unknown} that "
                        f"are not inputs or outputs of the spec ({', '.join(arrays)}); write the variant by hand")
    kernel(*[arrays[n] for n in names])  # compile (or load from the disk cache) now, not in a timed call
    picks = tuple((n in outputs, n) for n in names)

    def run(inp: DeviceArrays, out: DeviceArrays) -> None:
        kernel(*[(out if is_out else inp)[n] for is_out, n in picks])
    return run
