"""The one source of status names: how a cell can end.

A ``str`` enum, so a member equals the name stored in rows (``Status.OK == "ok"``) and the stored schema
does not change; code compares and assigns members, never bare strings.
"""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    """Every way a cell can end. ``ok`` means verified (and, when measured, timed); ``crashed``: the kernel
    killed the process running it (a signal, an abort, an exit), or the run died while the cell was in flight;
    ``implausible``: verified, but timed faster than the device's top roof allows (never fastest, never
    "faster")."""

    OK = "ok"
    INCORRECT = "incorrect"
    UNSUPPORTED = "unsupported"
    OOM = "oom"
    ERROR = "error"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    IMPLAUSIBLE = "implausible"

    def __str__(self) -> str:
        return self.value

    @property
    def failed(self) -> bool:
        """The cell ran and did not pass (``unsupported`` is not a failure: the variant does not apply)."""
        return self in FAILED

    @property
    def final(self) -> bool:
        """No later round can change this outcome."""
        return self in FINAL


#: Cells that ran and did not pass, in the order a reader cares about them (not measured at all first).
FAILED_IN_ORDER: tuple[str, ...] = (Status.CRASHED.value, Status.TIMEOUT.value, Status.ERROR.value, Status.OOM.value,
                                    Status.INCORRECT.value)
#: Cells that ran and did not pass.
FAILED = frozenset(Status(s) for s in FAILED_IN_ORDER)
#: Failures that cost a timeout or a worker's restart: a caller trying larger sizes stops after one.
GAVE_UP: tuple[str, ...] = (Status.TIMEOUT.value, Status.CRASHED.value, Status.OOM.value)
#: Outcomes that end a cell's rounds.
FINAL = FAILED | {Status.UNSUPPORTED}
#: Every status name, in the order tables list them.
STATUS_NAMES: tuple[str, ...] = tuple(s.value for s in Status)
