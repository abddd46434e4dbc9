"""Authoring helpers: each fact about a kernel is stated once.

A file in a kernel folder starts with ``op = kernel_here(__file__)``. The
kernel's name is the folder's name, so no file types it, and a folder copied
under another name registers under that name. ``op``'s methods register the
variant shapes that every operation repeats:

- ``op.register(factory, **fields)``: the spec, named after the folder;
- ``op.variant(name, runtimes, ...)``: :func:`~workbench.catalog.variant` for this kernel;
- ``op.numba(name)``: a numba variant from its kernel factory ``(dtype) -> dispatcher``
  (cached per dtype, cached on disk, compiled before any timing);
- ``op.numba_map(scalar)``: the same for an elementwise loop, from its per-element function;
- ``op.numpy(call, description)``: a numpy variant that is just ``run(inputs, outputs)``;
- ``op.torch_trio(...)``: the library call, its ``out=`` form and ``torch.compile`` in one call;
- ``op.cupy(description)``: the CuPy variant from a ``make_run(xp, special)`` function;
- ``op.wgsl(name, source, bindings, groups)``: a WGSL compute shader on the ``wgpu`` runtime.

Variants registered here leave ``dtypes`` as None (every dtype the backend
supports) unless the author passes a real restriction. Nothing here imports a
runtime (numba, torch, cupy) until a variant is built.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from .registry import get_kernel, register_kernel, variant
from .spec import BuildContext, KernelCall, KernelSpec, Tunable

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
#: An eager torch call: ``(torch, inputs, outputs) -> None | tensor | dict`` (what ``run`` may return).
TorchCall = Callable[[Any, dict[str, Any], dict[str, Any]], Any]


@dataclass(frozen=True)
class KernelFolder:
    """One kernel folder: its name (the kernel's) and path, with the registration helpers bound to it."""

    name: str
    folder: Path

    def path(self, filename: str) -> Path:
        """A file beside the folder's modules (device sources, data)."""
        return self.folder / filename

    @property
    def spec(self) -> KernelSpec:
        """The registered spec (``spec.py`` runs first, so variant builders can rely on it)."""
        return get_kernel(self.name)

    def register(self, factory: Callable[..., KernelSpec] = KernelSpec, /, *args: Any, **fields: Any) -> KernelSpec:
        """``register_kernel(factory(<folder name>, *args, **fields))``; ``factory`` is KernelSpec or a spec helper."""
        return register_kernel(factory(self.name, *args, **fields))

    def variant(self, name: str, runtimes: Iterable[str] | str, **kwargs: Any) -> Callable[[F], F]:
        """:func:`workbench.catalog.variant` with this folder's kernel name filled in."""
        return variant(self.name, name, runtimes, **kwargs)

    # --- numba -------------------------------------------------------------------------------------------------

    def numba(self, name: str = "numba", *, description: str = "", mode: str = "eager",
              dtypes: Iterable[str] | None = None, tunables: Iterable[Tunable] = (),
              restrictions: Iterable[str] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorate a kernel factory ``(t) -> @njit function`` to register it as a numba variant.

        ``t`` is the numpy scalar type of the run dtype (``np.float32`` or
        ``np.float64``, the dtypes numba kernels implement); build the kernel's
        constants with it (``one = t(1.0)``) so arithmetic stays in the run dtype.

        The kernel's parameters are named after the spec's inputs and outputs
        (``def relu(x, out)``), so the variant passes them by name. The factory
        is cached per dtype (the decorator returns the cached factory, so other
        variants reuse the same compiled functions), the kernel is cached on
        disk where numba can (``cache=True``: a second process loads instead of
        compiling), and the build compiles it on one-element arrays, never inside
        a timed call. ``description`` defaults to the factory's docstring.

        With ``tunables`` (and ``restrictions`` between them) the factory is
        ``(t, config) -> kernel``, ``config`` a dict of the tunables' values,
        and the returned factory is ``(dtype, config=()) -> kernel`` (``config``
        as sorted ``(name, value)`` pairs; defaults where empty). The values are
        closure constants of the kernel, so numba's disk cache keys on them.
        """
        tunables, restrictions = tuple(tunables), tuple(restrictions)

        def deco(factory: Callable[..., Any]) -> Callable[..., Any]:
            def make(dtype: str, config: tuple[tuple[str, Any], ...]) -> Any:
                from .numba_math import numpy_dtype

                t = numpy_dtype(dtype)
                if not tunables:
                    return factory(t)
                return factory(t, {**{tu.name: tu.default for tu in tunables}, **dict(config)})

            @functools.cache
            def kernel_for(dtype: str, config: tuple[tuple[str, Any], ...] = ()) -> Any:
                return disk_cached(make(dtype, config), salt=dtype + repr(config))

            @functools.cache
            def checked_kernel_for(dtype: str, config: tuple[tuple[str, Any], ...] = ()) -> Any:
                return make(dtype, config)  # boundscheck builds: own dispatchers, no disk cache

            def build(ctx: BuildContext) -> KernelCall:
                pick = checked_kernel_for if numba_boundscheck() else kernel_for
                return numba_call(self.spec, pick(ctx.dtype, tuple(sorted(ctx.config.items()))), ctx.dtype)

            functools.update_wrapper(kernel_for, factory)
            build.__module__, build.__qualname__ = factory.__module__, f"{factory.__qualname__}.build"
            self.variant(name, "numba", mode=mode, dtypes=dtypes, tunables=tunables, restrictions=restrictions,
                         description=description or inspect.getdoc(factory) or "")(build)
            return kernel_for

        return deco

    def numba_map(self, scalar: Callable[[Any], Callable] | None = None, *, name: str = "numba",
                  description: str = "") -> Any:
        """Register ``out[i] = f(a[i], b[i], ...)`` as a numba variant, given ``scalar(t) -> f``.

        Call it with ``scalar`` or use it as a decorator (``@op.numba_map()``);
        either way it returns the cached kernel factory ``(dtype name) -> dispatcher``.

        ``t`` is the numpy scalar type of the run dtype (build constants with
        it: ``zero = t(0)``); ``f`` takes one element of each input, in the
        spec's input order. The loop is the elementwise kernel every 1-D op
        shares: ``prange`` over the cores, ``ELEMENTWISE_FASTMATH`` (vectorizes,
        keeps the exp range reduction), ``f`` inlined into it.
        """
        def deco(scalar: Callable[[Any], Callable]) -> Callable[[str], Any]:
            def factory(t: type) -> Any:
                from .numba_math import elementwise_kernel

                return elementwise_kernel(scalar(t), len(self.spec.make_inputs(
                    {a: 1 for a in self.spec.axes}, np.random.default_rng(0))))

            factory.__module__, factory.__qualname__ = scalar.__module__, scalar.__qualname__
            factory.__doc__ = scalar.__doc__
            return self.numba(name, description=description)(factory)

        return deco if scalar is None else deco(scalar)

    def numpy(self, call: KernelCall, description: str, name: str = "numpy", *, library: bool = True,
              mode: str = "eager") -> KernelCall:
        """A numpy variant whose ``run(inputs, outputs)`` is ``call`` itself (nothing to prepare)."""
        def build(ctx: BuildContext) -> KernelCall:
            return call

        build.__module__ = getattr(call, "__module__", __name__)
        self.variant(name, "numpy", mode=mode, library=library, description=description)(build)
        return call

    # --- torch -------------------------------------------------------------------------------------------------

    def torch(self, name: str, call: TorchCall, description: str, *, library: bool = False,
              mode: str = "eager") -> TorchCall:
        """An eager torch variant running ``call(torch, inputs, outputs)``; torch is imported at build time."""
        def build(ctx: BuildContext) -> KernelCall:
            import torch

            return functools.partial(call, torch)

        build.__module__ = getattr(call, "__module__", __name__)
        self.variant(name, "torch", mode=mode, library=library, description=description)(build)
        return call

    def torch_compile(self, fn: Callable[..., Any], description: str, name: str = "torch-compile") -> Callable:
        """``torch.compile(fn)``, compiled at build time for the run's shapes (see ``torch_support``).

        ``fn``'s parameters are spec input names; what it returns follows the
        rules for ``run()`` (a tensor, a tuple in output order, or a dict).
        """
        arg_names = tuple(inspect.signature(fn).parameters)
        kernel = self.name

        def build(ctx: BuildContext) -> KernelCall:
            from .torch_support import compile_for

            compiled = compile_for(ctx, kernel, fn, arg_names)

            def run(inp: dict[str, Any], out: dict[str, Any]) -> Any:
                return compiled(*[inp[n] for n in arg_names])
            return run

        build.__module__ = fn.__module__
        self.variant(name, "torch", mode="compiled", description=description)(build)
        return fn

    def torch_trio(self, library: TorchCall, library_doc: str, *, out: TorchCall | None = None, out_doc: str = "",
                   compiled: Callable[..., Any] | None = None, compile_doc: str = "",
                   library_name: str = "torch") -> None:
        """The three torch variants most operations have, in one call.

        ``library`` (variant ``torch``, the library baseline): the call a user
        writes, e.g. ``lambda torch, i, o: torch.softmax(i["x"], dim=1)``.
        ``out`` (variant ``torch-out``): the same kernel writing into the
        preallocated output, where torch has such a form and ``library`` does
        not already use it. ``compiled`` (variant ``torch-compile``): a tensor
        function of the inputs for ``torch.compile``.
        """
        self.torch(library_name, library, library_doc, library=True)
        if out is not None:
            self.torch("torch-out", out, out_doc)
        if compiled is not None:
            self.torch_compile(compiled, compile_doc)

    # --- cupy --------------------------------------------------------------------------------------------------

    def cupy(self, description: str, *, name: str = "cupy", special: bool = False, library: bool = True,
             mode: str = "eager") -> Callable[[F], F]:
        """Decorate ``make_run(xp, special)`` to register ``make_run(cupy, cupyx.scipy.special)`` as a variant.

        ``make_run`` is written against the numpy-compatible array API, so tests
        run the same code with numpy standing in for cupy; cupy (and
        ``cupyx.scipy.special`` when ``special``) is imported only at build time.
        """
        def deco(make_run: F) -> F:
            def build(ctx: BuildContext) -> KernelCall:
                import cupy

                if special:
                    import cupyx.scipy.special

                    return make_run(cupy, cupyx.scipy.special)
                return make_run(cupy)

            build.__module__, build.__qualname__ = make_run.__module__, f"{make_run.__qualname__}.build"
            self.variant(name, "cupy", mode=mode, library=library, description=description)(build)
            return make_run

        return deco

    # --- wgpu (WGSL) -------------------------------------------------------------------------------------------

    def wgsl(self, name: str, source: str, bindings: Iterable[str], groups: Callable[[dict, int], tuple],
             uniforms: Callable[[dict], Any] | None = None, *, description: str,
             dtypes: Iterable[str] | None = ("float32",)) -> None:
        """A WGSL compute shader (``source``, a file in the folder) on the ``wgpu`` runtime: binding ``i``
        is spec array ``bindings[i]``, then a uniform buffer of ``uniforms(params)`` (``(format, value)``
        pairs); dispatched over ``groups(params, max_groups_per_dim)``. See ``vulkan_backend.wgsl_call``."""
        path, names = self.path(source), tuple(bindings)

        def build(ctx: BuildContext) -> KernelCall:
            from ..backends.vulkan_backend import wgsl_call

            return wgsl_call(ctx, self.spec, path, names, groups, uniforms)

        build.__module__ = getattr(groups, "__module__", __name__)
        self.variant(name, "wgpu", dtypes=dtypes, description=description, source=str(path))(build)


def kernel_here(file: str | None = None) -> KernelFolder:
    """The kernel folder ``file`` (a module's ``__file__``) sits in; without it, the folder being loaded.

    The name comes from the folder, not from a literal, so the files of a
    folder cannot disagree about it and a copy loaded under another name is
    another kernel.
    """
    if file is None:
        from .loader import current_folder

        folder = current_folder()
        if folder is None:
            raise RuntimeError("kernel_here() without a file works only while the catalog loader runs a folder; "
                               "pass __file__")
    else:
        folder = Path(file).resolve().parent
    return KernelFolder(name=folder.name, folder=folder)


# --- numba building blocks (used by KernelFolder.numba; public for hand-written numba variants) --------------------

def numba_boundscheck() -> bool:
    """numba compiles with bounds checks in this process (``NUMBA_BOUNDSCHECK=1``, or
    ``workbench verify --boundscheck``): an out-of-bounds index raises IndexError."""
    import sys

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

    numba stores the cache beside the source (``__pycache__``) or, where that
    is not writable, in the user's cache directory; where it can do neither the
    kernel still runs, compiled per process. Closure values are stamped so the
    cache key is the same in every process (see ``numba_math``).
    """
    from . import numba_math

    numba_math.stable_identities(kernel, salt)
    if numba_boundscheck():  # the disk cache's key ignores boundscheck: such builds neither read nor write it
        return kernel
    if hasattr(kernel, "enable_caching") and not kernel.overloads:
        try:
            kernel.enable_caching()
        except RuntimeError as exc:  # numba: "cannot cache function ...: no locator available"
            log.info("numba kernel %s is not cached on disk: %s", getattr(kernel, "__qualname__", kernel), exc)
    return kernel


def per_config(fn: F, config: dict[str, Any]) -> F:
    """``fn`` renamed after ``config`` (``row_block`` -> ``row_block__NB128_KC256``), before ``@njit``.

    numba names compiled code after the function's qualified name and a per-process counter, and its disk
    cache keeps that name: two configurations of one closure, compiled in two processes, can come back
    from the cache under the same symbol, and one process loading both then links one configuration's
    helper into the other's kernel (measured: wrong results, then a heap corruption). One name per
    configuration keeps them apart, in memory and on disk."""
    fn.__qualname__ = f"{fn.__qualname__}__{'_'.join(f'{k}{v}' for k, v in config.items())}"
    return fn


def warmup_arrays(spec: KernelSpec, dtype: str) -> dict[str, np.ndarray]:
    """One-element-per-axis inputs and outputs of ``spec`` in ``dtype`` (C-contiguous, as runs pass them)."""
    from .numba_math import numpy_dtype

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

    def run(inp: dict[str, Any], out: dict[str, Any]) -> None:
        kernel(*[(out if is_out else inp)[n] for is_out, n in picks])
    return run
