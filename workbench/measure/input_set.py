"""One input set of a timing loop, on the device and on the host: what the loop, its audits and checks share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from workbench.catalog.spec import Arrays


class InputSet(NamedTuple):
    """The arrays a kernel's calls get (the backend's own, on its device: any runtime's array type), and the
    host arrays they were copied from (what the set's reference is computed from). A loop rotates through
    several, so a kernel cannot replay a cached answer."""

    device: dict[str, Any]
    host: Arrays


#: Rotated set ``s``'s audit version, from the sweep's input cache: ``(s, make)`` -> the version ``make()`` makes.
SharedVersion = Callable[[int, Callable[[], Arrays]], Arrays]
