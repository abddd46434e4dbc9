"""CuPy variants written against the numpy-compatible array API, so tests run the same code with numpy.

``@cupy_variant(op, description)`` decorates ``make_run(xp, special)`` and registers
``make_run(cupy[, cupyx.scipy.special])``; cupy is imported only when the variant is built. Array-API
helpers such compositions share (``accumulate``) are in :mod:`workbench.catalog.xp`, which imports nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from workbench.catalog.authoring import KernelFolder
from workbench.catalog.spec import BuildContext, KernelCall
from workbench.catalog.verbs.helpers import folder_helper

F = TypeVar("F", bound=Callable[..., Any])


@folder_helper("cupy")
def cupy_variant(op: KernelFolder, description: str, *, name: str = "cupy", special: bool = False,
                 library: bool = True, mode: str = "eager") -> Callable[[F], F]:
    """Decorate ``make_run(xp, special)`` to register ``make_run(cupy, cupyx.scipy.special)`` as ``op``'s
    variant ``name`` (``special`` only when asked: importing ``cupyx.scipy`` costs time)."""
    def deco(make_run: F) -> F:
        def build(ctx: BuildContext) -> KernelCall:
            import cupy

            if special:
                import cupyx.scipy.special

                return make_run(cupy, cupyx.scipy.special)
            return make_run(cupy)

        build.__module__, build.__qualname__ = make_run.__module__, f"{make_run.__qualname__}.build"
        op.variant(name, "cupy", mode=mode, library=library, description=description)(build)
        return make_run

    return deco
