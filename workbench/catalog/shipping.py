"""What a worker process needs to rebuild a cell's kernel and variant: catalog folders, and inline entries.

A kernel or variant registered while a catalog folder loaded (the built-in catalog, ``WORKBENCH_CATALOG``,
``load_catalog``) is rebuilt in the worker by loading the same folder: its modules, numba caches and device
sources are found there as in the parent. One registered inline (a notebook cell, a test, a script's
``__main__``) exists only in the parent, so it travels by value with cloudpickle, once per worker and again
only when the parent registers a new object under the same name.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from typing import Any

from workbench.catalog import registry
from workbench.catalog.loader import ensure_default_catalog, load_catalog

log = logging.getLogger(__name__)


class CannotShip(Exception):
    """An inline kernel or variant cannot be pickled (it holds a lock, a device context, a C object...)."""


@dataclass(frozen=True)
class Parcel:
    """One inline registration by value: the spec (``variant`` None) or one variant of ``kernel``."""

    kernel: str
    variant: str | None
    digest: str
    blob: bytes


@dataclass
class Shipment:
    folders: list[str] = field(default_factory=list)
    parcels: list[Parcel] = field(default_factory=list)


class Shipper:
    """Parent side: the shipment of a cell, with each inline object pickled once (kept while registered)."""

    def __init__(self) -> None:
        self._blobs: dict[tuple[str, str | None], tuple[Any, Parcel]] = {}

    def shipment(self, kernel: str, variant: str | None) -> Shipment:
        """Folders to load and parcels to install so that ``kernel`` (and ``variant``, unless None) resolve
        in a worker as they do here. Raises :class:`CannotShip` when an inline entry cannot be pickled."""
        out = Shipment()
        spec = registry.get_kernel(kernel)
        entries: list[tuple[str | None, Any]] = [(None, spec)]
        if variant is not None and variant in registry.variants(kernel):
            entries.append((variant, registry.get_variant(kernel, variant)))
        for name, obj in entries:
            folder = registry.origin(kernel, name)
            if folder is not None:
                if folder not in out.folders:
                    out.folders.append(folder)
            else:
                out.parcels.append(self._parcel(kernel, name, obj))
        return out

    def _parcel(self, kernel: str, name: str | None, obj: Any) -> Parcel:
        cached = self._blobs.get((kernel, name))
        if cached is not None and cached[0] is obj:
            return cached[1]
        import cloudpickle

        what = f"kernel {kernel!r}" if name is None else f"variant {name!r} of kernel {kernel!r}"
        try:
            blob = cloudpickle.dumps(obj)
        except Exception as exc:  # noqa: BLE001 - any pickling failure means "cannot travel"
            raise CannotShip(f"{what} is defined inline and cannot be sent to a worker process "
                             f"({type(exc).__name__}: {exc})") from exc
        parcel = Parcel(kernel, name, hashlib.sha1(blob).hexdigest(), blob)
        self._blobs[kernel, name] = (obj, parcel)
        return parcel


def install(shipment: Shipment, installed: dict[tuple[str, str | None], str]) -> None:
    """Worker side: load the shipment's folders and register its parcels not yet installed (``installed``
    maps (kernel, variant) to the digest in place, and is updated)."""
    import pickle


    for folder in shipment.folders:
        try:
            load_catalog(folder)
        except FileNotFoundError as exc:  # the cell itself will say that its kernel is unknown
            log.warning("catalog folder is gone: %s", exc)
    for p in shipment.parcels:
        if installed.get((p.kernel, p.variant)) == p.digest:
            continue
        try:
            obj = pickle.loads(p.blob)  # noqa: S301 - the parent process pickled it a moment ago
        except ModuleNotFoundError as exc:  # it names a catalog module of a folder no cell here has needed yet
            if not str(exc.name or "").startswith("workbench_catalog"):
                raise
            ensure_default_catalog()
            obj = pickle.loads(p.blob)  # noqa: S301
        if p.variant is None:
            registry.register_kernel(obj)
        else:
            registry.register_variant(obj)
        installed[p.kernel, p.variant] = p.digest
