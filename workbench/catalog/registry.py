"""The in-memory catalog: kernels and their variants, filled by the loader or inline."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from workbench.catalog.loader import current_folder, ensure_default_catalog, folders_under, forget_folder, load_errors
from workbench.catalog.spec import (
    MODES,
    BuildContext,
    DeviceArrays,
    KernelCall,
    KernelSpec,
    Tunable,
    TunableConfig,
    TunableValue,
    Variant,
    format_config,
)

_kernels: dict[str, KernelSpec] = {}
_variants: dict[str, dict[str, Variant]] = {}
#: The catalog folder each registration came from (None: registered inline, from a notebook or a test), so
#: a worker process can load the folder itself and only inline entries travel by value.
_origins: dict[tuple[str, str | None], str | None] = {}


def _refuse_takeover(key: tuple[str, str | None], what: str) -> None:
    """A catalog folder may not replace a kernel or variant another folder registered (a user catalog taking
    a built-in name would change results silently, and differently in worker and in-process modes); inline
    registration (notebooks, tests) still replaces."""
    folder = current_folder()
    if folder is None or key not in _origins:
        return
    owner = _origins[key]
    if owner is not None and owner != str(folder):
        raise ValueError(f"catalog folder {folder} registers {what}, which {owner} already defines; give it "
                         "another name (a catalog folder cannot replace another's kernels or variants)")


def register_kernel(spec: KernelSpec) -> KernelSpec:
    """Add (or replace) a kernel spec; notebooks call this to define kernels inline."""
    _refuse_takeover((spec.name, None), f"kernel {spec.name!r}")
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
    if v.tunables and not hasattr(v.build, "author_build"):
        v.default_config()  # a restriction the defaults break is the author's error, said now
        v.check_config({})
        v = dataclasses.replace(v, build=_configuring(v, v.build))
    _refuse_takeover((v.kernel, v.name), f"variant {v.kernel}/{v.name}")
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


#: How a tunable variant's build finds its configuration: ``(variant, spec, ctx) -> (config, label)``.
ConfigResolver = Callable[[Variant, KernelSpec, BuildContext], tuple[TunableConfig, str | None]]


def given_or_default(v: Variant, spec: KernelSpec, ctx: BuildContext) -> tuple[TunableConfig, str | None]:
    """The configuration given in ``ctx.config`` (completed with defaults; labelled), else the defaults (label
    None): all the catalog itself knows. :mod:`workbench.tuning.resolve` adds the tuned configurations."""
    if ctx.config:
        full = v.check_config(ctx.config)
        return full, format_config(full)
    return v.default_config(), None


_resolver: ConfigResolver = given_or_default


def set_config_resolver(resolver: ConfigResolver) -> None:
    """Install how tunable builds find their configuration. The tuner registers its resolver (given > tuned
    for this device, dtype and shape class > defaults) when ``workbench`` is imported, so the catalog, the
    bottom layer, never imports the tuner."""
    global _resolver
    _resolver = resolver


class _Labelled:
    """A kernel call carrying the configuration it was built with (functions and partials take an attribute;
    other callables are wrapped in this)."""

    def __init__(self, call: KernelCall, label: str | None) -> None:
        self._call, self.best_config = call, label

    def __call__(self, inputs: DeviceArrays, outputs: DeviceArrays) -> Any:
        return self._call(inputs, outputs)


def labelled(call: KernelCall, label: str | None) -> KernelCall:
    """``call`` with ``best_config = label`` (what the harness records as the row's ``tuned_config``)."""
    if label is None:
        return call
    try:
        call.best_config = label  # type: ignore[attr-defined]
        return call
    except (AttributeError, TypeError):
        return _Labelled(call, label)


def _configuring(v: Variant, author_build: Callable[[BuildContext], KernelCall]) -> Callable:
    """The build of a tunable variant: fills ``ctx.config`` through the installed resolver
    (:func:`set_config_resolver`) and labels the call with the configuration it was built with
    (``best_config``, which the harness records as ``tuned_config``)."""
    def build(ctx: BuildContext) -> KernelCall:
        config, label = _resolver(v, get_kernel(v.kernel), ctx)
        return labelled(author_build(dataclasses.replace(ctx, config=config)), label)

    build.author_build = author_build  # type: ignore[attr-defined]
    build.__module__, build.__doc__ = author_build.__module__, author_build.__doc__
    return build


#: ``numba-tiled[NB=128,KC=256]``: a tunable variant with a configuration.
_CONFIGURED = re.compile(r"^(?P<base>[^\[\]]+)\[(?P<config>[^\[\]]*)\]$")


def configured_name(name: str, config: Mapping[str, TunableValue]) -> str:
    return f"{name}[{format_config(config)}]"


def configured(kernel: str, name: str, config: Mapping[str, TunableValue]) -> Variant:
    """Variant ``name`` of ``kernel`` fixed to ``config`` (completed with defaults), registered as
    ``name[K=V,...]`` beside it so that sweeps, workers and rows address it by that name: the tuner measures
    each configuration this way, and a notebook puts a tuned and a default configuration in one run."""
    base = get_variant(kernel, name)
    if not base.tunables:
        raise ValueError(f"variant {name!r} of kernel {kernel!r} has no tunable parameters")
    full = base.check_config(dict(config))
    cname = configured_name(name, full)
    if cname in _variants.get(kernel, {}):
        return _variants[kernel][cname]
    author_build = base.build.author_build  # type: ignore[attr-defined]

    def build(ctx: BuildContext) -> KernelCall:
        return labelled(author_build(dataclasses.replace(ctx, config=dict(full))), format_config(full))

    build.author_build = author_build  # type: ignore[attr-defined]
    v = dataclasses.replace(base, name=cname, build=build, tunables=(), restrictions=(), library=False,
                            description=f"{base.description} [{format_config(full)}]")
    _variants[kernel][cname] = v
    _origins[kernel, cname] = _origins.get((kernel, name))  # a worker loads the base's folder, then resolves it
    return v


def origin(kernel: str, variant_name: str | None = None) -> str | None:
    """The catalog folder a kernel (``variant_name`` None) or one of its variants was registered from, or
    None when it was registered inline."""
    return _origins.get((kernel, variant_name))


def variant(kernel: str, name: str, runtimes: Iterable[str] | str, *, mode: str = "eager",
            dtypes: Iterable[str] | None = None, description: str = "", library: bool = False,
            source: str | None = None, tunables: Iterable[Tunable] = (), restrictions: Iterable[str] = ()
            ) -> Callable[[Callable[[BuildContext], KernelCall]], Callable]:
    """Decorator registering a builder ``(ctx) -> callable(inputs, outputs)`` as a variant. ``tunables`` and
    ``restrictions`` declare its tunable parameters; the builder reads their values in ``ctx.config``."""
    rts = (runtimes,) if isinstance(runtimes, str) else tuple(runtimes)

    def deco(build: Callable[[BuildContext], KernelCall]) -> Callable[[BuildContext], KernelCall]:
        register_variant(Variant(kernel=kernel, name=name, runtimes=rts, build=build, mode=mode,
                                 dtypes=tuple(dtypes) if dtypes else None,
                                 description=description or (build.__doc__ or "").strip(),
                                 library=library, source=source, tunables=tuple(tunables),
                                 restrictions=tuple(restrictions)))
        return build

    return deco


def variant_at(file: str, function: str) -> str | None:
    """``kernel/variant`` whose build is ``function`` (a ``co_qualname``) of ``file`` or encloses it (the call it
    returns), among the variants registered so far; None when no variant's code is there."""
    for kernel, vs in _variants.items():
        for name, v in vs.items():
            build = getattr(v.build, "author_build", v.build)
            code = getattr(build, "__code__", None)
            qual = getattr(build, "__qualname__", "")
            if code is not None and code.co_filename == file and (function == qual or function.startswith(qual + ".")):
                return f"{kernel}/{name}"
    return None


def _ensure_loaded() -> None:
    ensure_default_catalog()


def kernels() -> dict[str, KernelSpec]:
    _ensure_loaded()
    return dict(_kernels)


def get_kernel(name: str) -> KernelSpec:
    _ensure_loaded()
    if name not in _kernels:
        failed = [f"{where}: {err}" for where, err in load_errors.items() if where.split("/")[0] == name]
        if failed:  # its folder is there but did not load: that is the news, not the list of other kernels
            raise ValueError(f"kernel {name!r} did not load ({'; '.join(failed)}); fix the file and run again")
        raise ValueError(f"unknown kernel {name!r}; valid kernels: {', '.join(sorted(_kernels))}")
    return _kernels[name]


def variants(kernel: str) -> dict[str, Variant]:
    get_kernel(kernel)
    return dict(_variants.get(kernel, {}))


def get_variant(kernel: str, name: str) -> Variant:
    vs = variants(kernel)
    found = _CONFIGURED.match(name)
    if name not in vs and found and found["base"] in vs:  # e.g. in a worker process: made on first use
        return configured(kernel, found["base"], _parse_config(found["config"], vs[found["base"]]))
    if name not in vs:
        raise ValueError(f"kernel {kernel!r} has no variant {name!r}; valid variants: {', '.join(sorted(vs))}")
    return vs[name]


def _parse_config(text: str, base: Variant) -> TunableConfig:
    """``NB=128,KC=256`` -> ``{"NB": 128, "KC": 256}``, each value as typed in the tunable's choices."""
    choices = {t.name: {str(v): v for v in t.values} for t in base.tunables}
    out: TunableConfig = {}
    for item in filter(None, text.split(",")):
        key, _, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if key not in choices:
            raise ValueError(f"variant {base.name!r} has no tunable {key!r}; valid tunables: {', '.join(choices)}")
        if value not in choices[key]:
            raise ValueError(f"variant {base.name!r}: {key}={value!r} is not a valid choice; valid {key}: "
                             f"{', '.join(choices[key])}")
        out[key] = choices[key][value]
    return out
