"""WGSL compute shaders as variants on the ``wgpu`` runtime (the ``vulkan`` backend).

The dispatch itself (buffers, bindings, uniforms, limits) is the vulkan backend's ``wgsl_call``; this module
only registers a folder's shader as a variant. The adapter module (and wgpu) load when the variant is built:
backend adapters load only when their backend is used (``bench --backends numpy`` imports numpy's alone).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from workbench.catalog.authoring import KernelFolder
from workbench.catalog.spec import BuildContext, KernelCall
from workbench.catalog.verbs.helpers import folder_helper


@folder_helper("wgsl")
def wgsl_variant(op: KernelFolder, name: str, source: str, bindings: Iterable[str],
                 groups: Callable[[dict, int], tuple], uniforms: Callable[[dict], Any] | None = None, *,
                 description: str, dtypes: Iterable[str] | None = ("float32",)) -> None:
    """A WGSL compute shader (``source``, a file in ``op``'s folder) on the ``wgpu`` runtime: binding ``i``
    is spec array ``bindings[i]``, then a uniform buffer of ``uniforms(params)`` (``(format, value)``
    pairs); dispatched over ``groups(params, max_groups_per_dim)``."""
    path, names = op.path(source), tuple(bindings)

    def build(ctx: BuildContext) -> KernelCall:
        from workbench.backends.vulkan_backend import wgsl_call

        return wgsl_call(ctx, op.spec, path, names, groups, uniforms)

    build.__module__ = getattr(groups, "__module__", __name__)
    op.variant(name, "wgpu", dtypes=dtypes, description=description, source=str(path))(build)
