"""Authoring's core: each fact about a kernel is stated once, and ``op.variant`` registers a variant.

A file in a kernel folder starts with ``op = kernel_here(__file__)``. The kernel's name is the folder's
name, so no file types it, and a folder copied under another name registers under that name:

- ``op.register(factory, **fields)``: the spec, named after the folder;
- ``op.variant(name, runtimes, ...)``: :func:`~workbench.catalog.variant` for this kernel, the core every
  variant goes through;
- ``op.numpy(call, description)``: a numpy variant that is just ``run(inputs, outputs)`` (numpy is the
  reference runtime every install has, so it needs no helper module).

What a runtime repeats is a verb of ``op`` (``op.numba``, ``op.torch_trio`` ...): declared, typed, in
:mod:`workbench.catalog.verbs` so editors and type checkers see it, and done by that runtime's authoring
module outside the catalog (``workbench.authoring.<runtime>_support``), which registers it by name
(:func:`folder_helper`) when ``import workbench`` imports it. The catalog itself runs no runtime but numpy.

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
from workbench.catalog.verbs import RuntimeVerbs
from workbench.catalog.verbs.helpers import folder_helper, helper_names, verb

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["KernelFolder", "folder_helper", "kernel_here"]


@dataclass(frozen=True)
class KernelFolder(RuntimeVerbs):
    """One kernel folder: its name (the kernel's) and path, with the registration core and every runtime's
    authoring verbs (:class:`~workbench.catalog.verbs.RuntimeVerbs`) bound to it."""

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
        """A verb registered by a runtime defined outside the package (:func:`folder_helper`), bound to this
        folder; the built-in runtimes' verbs are methods (:class:`~workbench.catalog.verbs.RuntimeVerbs`)."""
        helper = verb(name)
        if helper is None or name.startswith("_"):
            raise AttributeError(f"KernelFolder has no attribute or helper {name!r}; helpers: "
                                 f"{', '.join(helper_names()) or '(none registered: import workbench)'}")
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
