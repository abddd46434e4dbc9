"""``op.numba`` and ``op.numba_map``, typed; their behaviour is :mod:`workbench.authoring.numba_support`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from workbench.catalog.spec import Tunable
from workbench.catalog.verbs.helpers import registered


class NumbaVerbs:
    """The numba runtime's verbs."""

    def numba(self, name: str = "numba", *, description: str = "", mode: str = "eager",
              dtypes: Iterable[str] | None = None, tunables: Iterable[Tunable] = (),
              restrictions: Iterable[str] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorate a kernel factory ``(t) -> @njit function`` (``(t, config)`` with ``tunables``) to register it
        as this kernel's numba variant ``name``: :func:`workbench.authoring.numba_support.numba_variant`."""
        return registered("numba")(self, name, description=description, mode=mode, dtypes=dtypes,
                                   tunables=tunables, restrictions=restrictions)

    def numba_map(self, scalar: Callable[[Any], Callable] | None = None, *, name: str = "numba",
                  description: str = "") -> Any:
        """Register ``out[i] = f(a[i], b[i], ...)`` given ``scalar(t) -> f`` (or decorate ``scalar``):
        :func:`workbench.authoring.numba_support.numba_map`."""
        return registered("numba_map")(self, scalar, name=name, description=description)
