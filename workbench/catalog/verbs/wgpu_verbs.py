"""``op.wgsl``, typed; its behaviour is :mod:`workbench.authoring.wgsl_support`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from workbench.catalog.verbs.helpers import registered


class WgpuVerbs:
    """The wgpu runtime's verb."""

    def wgsl(self, name: str, source: str, bindings: Iterable[str], groups: Callable[[dict, int], tuple],
             uniforms: Callable[[dict], Any] | None = None, *, description: str,
             dtypes: Iterable[str] | None = ("float32",)) -> None:
        """A WGSL compute shader (``source``, a file in the folder) as a variant on the ``wgpu`` runtime:
        :func:`workbench.authoring.wgsl_support.wgsl_variant`."""
        registered("wgsl")(self, name, source, bindings, groups, uniforms, description=description, dtypes=dtypes)
