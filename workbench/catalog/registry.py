"""The in-memory catalog: kernels and their variants, filled by the loader or inline."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .loader import current_folder, folders_under, forget_folder
from .spec import MODES, BuildContext, KernelCall, KernelSpec, Variant

_kernels: dict[str, KernelSpec] = {}
_variants: dict[str, dict[str, Variant]] = {}
#: The catalog folder each registration came from (None: registered inline, from a notebook or a test), so
#: a worker process can load the folder itself and only inline entries travel by value.
_origins: dict[tuple[str, str | None], str | None] = {}


def register_kernel(spec: KernelSpec) -> KernelSpec:
    """Add (or replace) a kernel spec; notebooks call this to define kernels inline."""
    _kernels[spec.name] = spec
    _variants.setdefault(spec.name, {})
    folder = current_folder()
    _origins[spec.name, None] = str(folder) if folder is not None else None
    return spec


def unregister_kernel(name: str) -> None:
    """Remove a kernel and its variants (notebooks redefining a kernel, tests cleaning up)."""
    _kernels.pop(name, None)
    for v in _variants.pop(name, {}):
        _origins.pop((name, v), None)
    _origins.pop((name, None), None)


def unregister_variant(kernel: str, name: str) -> None:
    """Remove one variant of a kernel (a notebook dropping an experiment, tests cleaning up)."""
    _variants.get(kernel, {}).pop(name, None)
    _origins.pop((kernel, name), None)


def register_variant(v: Variant) -> Variant:
    if v.mode not in MODES:
        raise ValueError(f"variant {v.name!r}: mode {v.mode!r} is not one of {MODES}")
    _variants.setdefault(v.kernel, {})[v.name] = v
    folder = current_folder()
    _origins[v.kernel, v.name] = str(folder) if folder is not None else None
    return v


def unregister_folder(folder: str) -> list[str]:
    """Remove every kernel and variant registered from catalog ``folder``; returns the kernels removed."""
    kernels = [k for (k, v), f in _origins.items() if f == folder and v is None]
    for k in kernels:
        unregister_kernel(k)
    for (k, v), f in list(_origins.items()):
        if f == folder and v is not None:
            unregister_variant(k, v)
    return kernels


def unload_catalog(path: str) -> list[str]:
    """Unregister every kernel and variant loaded from the catalog folders under ``path`` (or ``path``
    itself), and forget those folders so that ``load_catalog`` loads them afresh. Returns the kernels
    removed."""
    removed: list[str] = []
    for folder in folders_under(path):
        removed += unregister_folder(str(folder))
        forget_folder(folder)
    return removed


def origin(kernel: str, variant_name: str | None = None) -> str | None:
    """The catalog folder a kernel (``variant_name`` None) or one of its variants was registered from, or
    None when it was registered inline."""
    return _origins.get((kernel, variant_name))


def variant(kernel: str, name: str, runtimes: Iterable[str] | str, *, mode: str = "eager",
            dtypes: Iterable[str] | None = None, description: str = "", library: bool = False,
            source: str | None = None) -> Callable[[Callable[[BuildContext], KernelCall]], Callable]:
    """Decorator registering a builder ``(ctx) -> callable(inputs, outputs)`` as a variant."""
    rts = (runtimes,) if isinstance(runtimes, str) else tuple(runtimes)

    def deco(build: Callable[[BuildContext], KernelCall]) -> Callable[[BuildContext], KernelCall]:
        register_variant(Variant(kernel=kernel, name=name, runtimes=rts, build=build, mode=mode,
                                 dtypes=tuple(dtypes) if dtypes else None,
                                 description=description or (build.__doc__ or "").strip(),
                                 library=library, source=source))
        return build

    return deco


def _ensure_loaded() -> None:
    from .loader import ensure_default_catalog

    ensure_default_catalog()


def kernels() -> dict[str, KernelSpec]:
    _ensure_loaded()
    return dict(_kernels)


def get_kernel(name: str) -> KernelSpec:
    _ensure_loaded()
    if name not in _kernels:
        raise ValueError(f"unknown kernel {name!r}; valid kernels: {', '.join(sorted(_kernels))}")
    return _kernels[name]


def variants(kernel: str) -> dict[str, Variant]:
    get_kernel(kernel)
    return dict(_variants.get(kernel, {}))


def get_variant(kernel: str, name: str) -> Variant:
    vs = variants(kernel)
    if name not in vs:
        raise ValueError(f"kernel {kernel!r} has no variant {name!r}; valid variants: {', '.join(sorted(vs))}")
    return vs[name]
