"""The runtimes that run portable sources, and how, as each declares it.

A runtime runs the rendered sources where its declaration says how
(:class:`~workbench.backends.runtime.DeviceCode`: the prelude target its device takes, a cached compile of one
rendered text on one device, a launcher taking a grid in blocks plus a block in threads, a device graph where
it records them), so nothing here names one. Runtime packages are imported by those declarations, lazily,
never at ``import workbench``.
"""

from __future__ import annotations

from typing import Any

from workbench.backends import registry
from workbench.backends.runtime import DeviceCode
from workbench.catalog.spec import Unsupported


def device_runtimes() -> tuple[str, ...]:
    """Every runtime that runs portable device sources, by rank: a portable variant's runtimes."""
    return tuple(rt.name for rt in registry.runtimes() if rt.device_code is not None)


def runtimes_compiling_for(target: str) -> set[str]:
    """The runtimes that may compile portable sources for prelude ``target`` (``cuda``)."""
    return {rt.name for rt in registry.runtimes() if rt.device_code is not None and target in rt.device_code.targets}


def declared_device_code(backend: Any) -> DeviceCode | None:
    """How the backend's runtime runs portable sources; None where it runs none."""
    declared = registry.runtime(backend.runtime)
    return declared.device_code if declared is not None else None


def device_code(backend: Any) -> DeviceCode:
    """How the backend's runtime runs portable sources; Unsupported where it runs none."""
    code = declared_device_code(backend)
    if code is None:
        raise Unsupported(f"portable kernels run on the {' and '.join(device_runtimes())} runtimes, "
                          f"not {backend.runtime}")
    return code
