"""The behaviour behind each authoring verb, registered by its runtime's authoring module.

``workbench.authoring.<runtime>_support`` registers ``helper(op, ...)`` as verb ``name`` with
:func:`folder_helper` when it is imported (``import workbench`` imports them); the typed methods of
:mod:`workbench.catalog.verbs` and :meth:`KernelFolder.__getattr__` call it by name, so the catalog never
imports a runtime's module.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

#: Verb name -> ``helper(op, *args, **kwargs)``.
_helpers: dict[str, Callable[..., Any]] = {}


def folder_helper(name: str) -> Callable[[F], F]:
    """Register ``helper(op, ...)`` as ``op.<name>(...)`` on every kernel folder."""
    def deco(helper: F) -> F:
        _helpers[name] = helper
        return helper

    return deco


def helper_names() -> list[str]:
    """The verbs registered so far, sorted."""
    return sorted(_helpers)


def verb(name: str) -> Callable[..., Any] | None:
    """The behaviour registered as verb ``name``, or None."""
    return _helpers.get(name)


def registered(name: str) -> Callable[..., Any]:
    """The behaviour registered as verb ``name``; a RuntimeError naming the module to import when there is none."""
    helper = _helpers.get(name)
    if helper is None:
        raise RuntimeError(f"op.{name} has no behaviour registered: import workbench (which imports "
                           "workbench.authoring and its runtimes' authoring modules)")
    return helper
