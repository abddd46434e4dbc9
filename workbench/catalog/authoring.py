"""Authoring's core: each fact about a kernel is stated once, and ``op.variant`` registers a variant.

A file in a kernel folder starts with ``op = kernel_here(__file__)``. The kernel's name is the folder's
name, so no file types it, and a folder copied under another name registers under that name:

- ``op.register(factory, **fields)``: the spec, named after the folder;
- ``op.variant(name, runtimes, ...)``: :func:`~workbench.catalog.variant` for this kernel, the core every
  variant goes through;
- ``op.numpy(call, description)``: a numpy variant that is just ``run(inputs, outputs)`` (numpy is the
  reference runtime every install has, so it needs no helper module).

What a runtime repeats lives in that runtime's module, outside the catalog, and plugs into ``op`` by
name (:func:`folder_helper`): ``op.numba`` / ``op.numba_map`` (:mod:`workbench.authoring.numba_support`),
``op.torch`` / ``op.torch_compile`` / ``op.torch_trio`` (:mod:`workbench.authoring.torch_support`),
``op.cupy`` (:mod:`workbench.authoring.cupy_support`) and ``op.wgsl`` (:mod:`workbench.authoring.wgsl_support`);
``import workbench`` registers them. The catalog itself knows no runtime but numpy.

Variants registered here leave ``dtypes`` as None (every dtype the backend supports) unless the author
passes a real restriction.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from workbench.catalog.loader import current_folder
from workbench.catalog.registry import get_kernel, register_kernel, variant
from workbench.catalog.spec import BuildContext, KernelCall, KernelSpec

F = TypeVar("F", bound=Callable[..., Any])

#: ``op.<name>`` helpers registered by the runtime modules: name -> ``helper(op, *args, **kwargs)``.
_helpers: dict[str, Callable[..., Any]] = {}


def folder_helper(name: str) -> Callable[[F], F]:
    """Register ``helper(op, ...)`` as ``op.<name>(...)`` on every :class:`KernelFolder` (a runtime module
    plugs its variant helper into the core this way, so the catalog never imports a runtime's module)."""
    def deco(helper: F) -> F:
        _helpers[name] = helper
        return helper

    return deco


@dataclass(frozen=True)
class KernelFolder:
    """One kernel folder: its name (the kernel's) and path, with the registration core bound to it."""

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

    def numpy(self, call: KernelCall, description: str, name: str = "numpy", *, library: bool = True,
              mode: str = "eager") -> KernelCall:
        """A numpy variant whose ``run(inputs, outputs)`` is ``call`` itself (nothing to prepare)."""
        def build(ctx: BuildContext) -> KernelCall:
            return call

        build.__module__ = getattr(call, "__module__", __name__)
        self.variant(name, "numpy", mode=mode, library=library, description=description)(build)
        return call

    def __getattr__(self, name: str) -> Any:
        """A runtime's helper (``op.numba``, ``op.torch_trio``, ...), bound to this folder."""
        helper = _helpers.get(name)
        if helper is None or name.startswith("_"):
            raise AttributeError(f"KernelFolder has no attribute or helper {name!r}; helpers: "
                                 f"{', '.join(sorted(_helpers)) or '(none registered: import workbench)'}")
        return functools.partial(helper, self)


def kernel_here(file: str | None = None) -> KernelFolder:
    """The kernel folder ``file`` (a module's ``__file__``) sits in; without it, the folder being loaded.

    The name comes from the folder, not from a literal, so the files of a folder cannot disagree about it
    and a copy loaded under another name is another kernel.
    """
    if file is None:
        folder = current_folder()
        if folder is None:
            raise RuntimeError("kernel_here() without a file works only while the catalog loader runs a folder; "
                               "pass __file__")
    else:
        folder = Path(file).resolve().parent
    return KernelFolder(name=folder.name, folder=folder)
