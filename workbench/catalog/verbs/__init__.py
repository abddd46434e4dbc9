"""Authoring verbs (``op.numba``, ``op.torch_trio``, ``op.cupy``, ``op.wgsl`` ...) declared where editors and
type checkers find them: typed methods of :class:`~workbench.catalog.authoring.KernelFolder`, one mixin per
runtime.

The catalog imports no runtime's module, so a verb's method here only states its signature and hands the call
to the behaviour its runtime's authoring module registers (:func:`~workbench.catalog.verbs.helpers.folder_helper`,
``workbench.authoring.<runtime>_support``; ``import workbench`` registers them all). A verb a runtime defined
outside the package registers the same way still works as ``op.<name>``, untyped.
"""

from workbench.catalog.verbs.cupy_verbs import CupyVerbs
from workbench.catalog.verbs.numba_verbs import NumbaVerbs
from workbench.catalog.verbs.torch_verbs import TorchVerbs
from workbench.catalog.verbs.wgpu_verbs import WgpuVerbs


class RuntimeVerbs(NumbaVerbs, TorchVerbs, CupyVerbs, WgpuVerbs):
    """Every built-in runtime's authoring verbs."""


__all__ = ["RuntimeVerbs"]
