"""``op.cupy``, typed; its behaviour is :mod:`workbench.authoring.cupy_support`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from workbench.catalog.verbs.helpers import registered

F = TypeVar("F", bound=Callable[..., Any])


class CupyVerbs:
    """The CuPy runtime's verb."""

    def cupy(self, description: str, *, name: str = "cupy", special: bool = False, library: bool = True,
             mode: str = "eager") -> Callable[[F], F]:
        """Decorate ``make_run(xp, special)`` to register ``make_run(cupy, cupyx.scipy.special)`` as variant
        ``name``: :func:`workbench.authoring.cupy_support.cupy_variant`."""
        return registered("cupy")(self, description, name=name, special=special, library=library, mode=mode)
