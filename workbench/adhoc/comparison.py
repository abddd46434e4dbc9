"""What a :func:`~workbench.adhoc.quick` call compared, and which of its callables gave up: the record that
both the run (:mod:`workbench.adhoc.quick`) and the promotion to a catalog kernel (:mod:`workbench.adhoc.promote`)
read, in a module of its own so that neither imports the other for it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.adhoc.inputs import AdhocSetup
from workbench.catalog.spec import Unsupported
from workbench.core.regular_files import read_regular_text
from workbench.core.status import GAVE_UP

#: Statuses after which a callable is not tried at larger sizes: each costs a timeout or a worker's restart,
#: and perfplot-style size lists are long (a hung callable would otherwise wait out the limit at every size).
GIVE_UP_STATUSES = GAVE_UP


@dataclass
class GiveUp:
    """Which callables ended as :data:`GIVE_UP_STATUSES`, and at what size: one file per callable in a folder
    both the notebook's process (which sees the rows) and the worker processes (which build the cells) read."""

    folder: str
    axis: str = "n"

    def _path(self, label: str) -> Path:
        return Path(self.folder) / hashlib.sha1(label.encode()).hexdigest()[:16]

    def record(self, row: Mapping[str, Any], index: int = 0, total: int = 0) -> None:
        """``run_sweep``'s ``on_cell``: remember the smallest size at which a callable gave up."""
        if row.get("status") not in GIVE_UP_STATUSES:
            return
        n, path = int(json.loads(row["params"])[self.axis]), self._path(str(row["variant"]))
        if not path.exists() or n < json.loads(read_regular_text(path))["n"]:
            path.write_text(json.dumps({"n": n, "status": row["status"]}))

    def check(self, label: str, n: int) -> None:
        """Unsupported (not run) when ``label`` gave up at a smaller size."""
        path = self._path(label)
        if path.exists():
            seen = json.loads(read_regular_text(path))
            if n > seen["n"]:
                raise Unsupported(f"not run: this callable ended as {seen['status']} at {self.axis}={seen['n']}, "
                                  "so larger sizes are skipped")


@dataclass
class Comparison:
    """What a :func:`quick` call compared: enough to run it again or promote it to a catalog kernel."""

    name: str
    callables: dict[str, Callable[..., Any]]
    setup: AdhocSetup
    sizes: list[int]
    check: bool
    reference: Callable[..., Any] | None
    reference_label: str | None
    flops: Callable[[int], float] | None
    bytes: Callable[[int], float] | None
    tolerances: dict[str, float] = field(default_factory=dict)
    #: Where the run notes callables that gave up (None: every callable runs at every size).
    give_up: GiveUp | None = None
    #: Callable name -> the runtime its code runs on (named by the caller or read from the callable).
    runtimes: dict[str, str] = field(default_factory=dict)
