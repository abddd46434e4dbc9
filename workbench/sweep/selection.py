"""What a request means — which kernels, variants, backends, dtypes and modes — decided once for bench and verify.

``workbench bench`` and ``workbench verify`` used to read the same words
differently (verify reported an unavailable backend's variants as unsupported
and exited 0, bench refused it). Both now ask :func:`select`:

- ``None`` means everything: every kernel, every available backend, every
  variant of the chosen modes. Named variants run whatever their mode.
- Unknown names raise ValueError listing the valid ones; a named backend that
  is unavailable here raises :class:`BackendUnavailable` (a ValueError) with the
  probe's reason and the available backends, before anything runs.
- Variants meet backends by runtime. What cannot run is kept as an unsupported
  :class:`Target` with its reason — for the selected backends only, never for
  every backend known.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from workbench.backends import registry as backend_registry
from workbench.backends.base import Backend, BackendUnavailable
from workbench.catalog import registry as catalog
from workbench.catalog.spec import MODES, KernelSpec, Variant
from workbench.core.dtypes import check_dtype

#: Modes run when none are named: ``compiled`` variants (torch.compile, ~30 s per shape) only on request.
DEFAULT_MODES = ("eager", "fused", "graph")


@dataclass(frozen=True)
class Target:
    """A variant on a backend in a dtype. ``variant`` None: the kernel has no (selected) variant for the backend."""

    spec: KernelSpec
    variant: Variant | None
    backend: Backend
    dtype: str
    #: Known before running (runtime or dtype mismatch, no variant): the reason it is unsupported.
    unsupported: str | None = None


@dataclass
class Selection:
    specs: list[KernelSpec]
    backends: list[Backend]
    dtypes: list[str]
    #: Chosen variants per kernel name, in catalog order.
    variants: dict[str, list[Variant]]
    #: (kernel, variant) left out because its mode was not chosen (and it was not named).
    excluded: list[tuple[KernelSpec, Variant]] = field(default_factory=list)
    backends_named: bool = False
    variants_named: bool = False

    def targets(self, spec: KernelSpec, dtype: str) -> list[Target]:
        """Per selected backend: its variants of ``spec``, or one placeholder when it has none and the
        backends were named (so the request's answer says why). Named variants meet every backend."""
        chosen = self.variants[spec.name]
        if self.variants_named and not chosen:
            return []  # none of the named variants belongs to this kernel
        out: list[Target] = []
        for backend in self.backends:
            matched = chosen if self.variants_named else [v for v in chosen if backend.runtime in v.runtimes]
            if not matched:
                if self.backends_named:
                    out.append(Target(spec, None, backend, dtype,
                                      f"kernel {spec.name!r} has no {'selected ' if self.variants_named else ''}"
                                      f"variant for runtime {backend.runtime!r}"))
                continue
            out += [Target(spec, v, backend, dtype, v.unsupported_reason(backend, dtype)) for v in matched]
        return out

    def stranded(self, spec: KernelSpec) -> list[tuple[Variant, str]]:
        """Chosen variants of ``spec`` that no backend here runs (when the backends were not named),
        each with the probe reasons of the adapters for its runtimes."""
        if self.backends_named:
            return []
        runtimes = {b.runtime for b in self.backends}
        return [(v, _no_backend_reason(v.runtimes)) for v in self.variants[spec.name]
                if not runtimes & set(v.runtimes)]


def select(kernels: Sequence[str] | None = None, variants: Sequence[str] | None = None,
           backends: Sequence[str] | None = None, dtypes: Iterable[str] = ("float32",),
           modes: Sequence[str] | None = None, timing: bool = False) -> Selection:
    """Resolve a request; raises ValueError (or :class:`BackendUnavailable`) before anything runs.
    ``timing``: the request measures time (``bench``), so backends that only stand in for a device
    (:attr:`Backend.timed_only_when_named`, e.g. Triton's interpreter) join only when named."""
    dtype_list = [check_dtype(d) for d in dtypes]
    mode_list = list(modes) if modes is not None else list(DEFAULT_MODES)
    for m in mode_list:
        if m not in MODES:
            raise ValueError(f"unknown mode {m!r}; valid modes: {', '.join(MODES)}")
    names = list(kernels) if kernels is not None else sorted(catalog.kernels())
    specs = [catalog.get_kernel(n) for n in names]
    sel = Selection(specs, select_backends(backends, timing), dtype_list, {}, backends_named=backends is not None,
                    variants_named=variants is not None)
    for spec in specs:
        vs = catalog.variants(spec.name)
        if variants is None:
            sel.variants[spec.name] = [v for v in vs.values() if v.mode in mode_list]
            sel.excluded += [(spec, v) for v in vs.values() if v.mode not in mode_list]
        else:
            sel.variants[spec.name] = [vs[n] for n in variants if n in vs]
    if variants is not None:
        known = {n for spec in specs for n in catalog.variants(spec.name)}
        unknown = [n for n in variants if n not in known]
        if unknown:
            raise ValueError(f"unknown variant(s) {', '.join(unknown)} for kernel(s) "
                             f"{', '.join(s.name for s in specs)}; valid variants: {', '.join(sorted(known))}")
    return sel


def select_backends(names: Sequence[str] | None, timing: bool = False) -> list[Backend]:
    """Every available backend (for timing, less those timed only when named; devices 1.. only when named),
    or the named ones, each of which must be available here. A pattern (``torch-cuda:*``, ``opencl-*``)
    names the available backends it matches, every device of a runtime counted; it must match at least one."""
    if names is None:  # device 0 of each runtime: a machine with 8 GPUs does not run every sweep 8 times
        found = [backend_registry.get(n) for n in backend_registry.available_backends()]
        return [b for b in found if not (timing and getattr(b, "timed_only_when_named", False))
                and not getattr(b, "device_index", 0)]
    out: list[Backend] = []
    for name in names:
        for b in _named_backends(name):
            if b not in out:
                out.append(b)
    return out


def _named_backends(name: str) -> list[Backend]:
    """The backend ``name`` names, or the available backends the pattern ``name`` matches; a ValueError
    (:class:`BackendUnavailable` where it names only unavailable ones) otherwise."""
    if backend_registry.is_pattern(name):
        matched = backend_registry.matching(name)
        if not matched:
            raise ValueError(f"backend pattern {name!r} matches no backend; valid backends: "
                             f"{', '.join(sorted(backend_registry.all_backends()))}")
    else:
        matched = [backend_registry.get(name)]
    usable = [b for b in matched if b.probe().available]
    if not usable:  # one line per backend it names (a machine without the device lists one, not N)
        why = "; ".join(f"backend {b.name!r} is unavailable here: {b.probe().reason}" for b in matched)
        raise BackendUnavailable(f"{why}; available backends: "
                                 f"{', '.join(backend_registry.available_backends()) or '(none)'}")
    return usable


def _no_backend_reason(runtimes: tuple[str, ...]) -> str:
    """Why no backend runs these runtimes, with each matching adapter's probe reason."""
    why = [f"{b.name}: {b.probe().reason}" for b in backend_registry.all_backends().values() if b.runtime in runtimes]
    return f"no available backend runs {' or '.join(runtimes)}" + (f" ({'; '.join(why)})" if why else "")
