"""What an executor is asked to do with one cell: the :class:`CellRequest` every executor takes.

One frozen value carries the cell, what to do with it (measure with a :class:`TimingConfig`, or only
check with :class:`CheckOnly`), the round's role, the seed, the two time limits and the ceilings behind
``% of peak``. It crosses the process boundary whole (pickled to a worker process or a Dask worker), so
the parameters of a cell travel together instead of as loose keyword arguments.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from workbench.core.record import cell_key, size_label
from workbench.measure.timer import TimingConfig
from workbench.roofs.throughput import Peaks

#: Variant name of the placeholder cell that says a kernel has no variant for a backend.
NO_VARIANT = "-"

#: Limit on building a cell (inputs, reference, the variant's build: JIT compilation, torch.compile), apart
#: from the run limit: a compile must not eat the run's time, nor be abandoned mid-way by a short run limit
#: (measured: with --timeout 1, 195 µs numba cells timed out while compiling and the abandoned compile
#: made the next cell time out too).
BUILD_TIMEOUT_S = 600.0

#: A timed cell's first call (in its first round: lazy set-up, a JIT compile the factory left to it) must
#: return within the longest of this floor, :data:`FIRST_CALL_SHARE` of the run limit and
#: :data:`FIRST_CALL_FACTOR` times the round's warm-up and budget; only then does the rest of the run limit
#: apply. A kernel that never returns is thus stopped after seconds sized by what the cell was asked to spend,
#: rather than after the whole run limit (60 s in a sweep: two hung cells of a 12-cell user catalog cost 128 s
#: of a 157 s run). A first call that legitimately takes longer gets more time with a larger --timeout.
FIRST_CALL_FLOOR_S = 5.0
FIRST_CALL_SHARE = 0.1
FIRST_CALL_FACTOR = 10.0


@dataclass(frozen=True)
class Cell:
    """One point of a sweep: (kernel, variant, backend, dtype, params, mode, cache)."""

    kernel: str
    variant: str
    backend: str
    dtype: str
    params: tuple[tuple[str, int], ...]
    mode: str = "eager"
    cache: str = "hot"
    #: Known before running (runtime or dtype mismatch): the cell is recorded as unsupported.
    unsupported: str | None = None

    @classmethod
    def make(cls, kernel: str, variant: str, backend: str, dtype: str, params: Mapping[str, int],
             mode: str = "eager", cache: str = "hot", unsupported: str | None = None) -> Cell:
        return cls(kernel, variant, backend, dtype, tuple((k, int(v)) for k, v in params.items()), mode, cache,
                   unsupported)

    @property
    def params_dict(self) -> dict[str, int]:
        return dict(self.params)

    @property
    def key(self) -> str:
        return cell_key(self.kernel, self.variant, self.backend, self.dtype, self.params_dict, self.mode,
                        self.cache)

    @property
    def label(self) -> str:
        return f"{self.kernel}/{self.variant} on {self.backend} {self.dtype} {size_label(self.params_dict)}"


@dataclass(frozen=True)
class CheckOnly:
    """The check-only mode of a cell (``workbench verify``): build, then verify once per seed; no timing.

    An ``ok`` result then means every seed passed; ``seed`` and ``max_error`` are those
    of the worst check, or of the failing one.
    """

    seeds: tuple[int, ...] = (0,)


class RoundRole(Enum):
    """What a round does with a cell. The first round calls it once, verifies it before timing, times it,
    checks it after timing and measures its peak memory; a later round warms up and times only, and the
    cell's last round also checks the output after timing (:func:`workbench.measure.rounds.merge_rounds`
    keeps the first round's once-only fields)."""

    FIRST = "first"
    LATER = "later"
    LAST = "last"

    @property
    def later(self) -> bool:
        return self is not RoundRole.FIRST

    @property
    def check_after(self) -> bool:
        """The output is checked after timing (every round but a middle one)."""
        return self is not RoundRole.LATER

    @classmethod
    def of_flags(cls, later_round: bool, check_after: bool) -> RoundRole:
        """The role named by the two flags of the row-returning entry points (``run_cell``)."""
        if not later_round:
            return cls.FIRST
        return cls.LAST if check_after else cls.LATER

    @classmethod
    def of(cls, rounds_done: int, rounds: int) -> RoundRole:
        """The role of a cell's next round, when it has ``rounds_done`` of ``rounds``."""
        if rounds_done == 0:
            return cls.FIRST
        return cls.LAST if rounds_done + 1 >= rounds else cls.LATER


@dataclass(frozen=True)
class CellRequest:
    """One cell to run, and how: the same value for the in-process, worker-process and Dask executors."""

    cell: Cell
    #: Measure with a timing config, or only verify (:class:`CheckOnly`).
    what: TimingConfig | CheckOnly = field(default_factory=TimingConfig)
    role: RoundRole = RoundRole.FIRST
    seed: int = 0
    #: Limit on running the cell once it is built (seconds).
    timeout_s: float = math.inf
    #: Limit on building it (inputs, reference, compilation), apart from ``timeout_s``.
    build_timeout_s: float = BUILD_TIMEOUT_S
    #: Ceilings behind ``% of peak`` (measured for the backend where the cell runs); None: published only.
    ceilings: Peaks | None = field(default=None, compare=False)
    #: Which round of the cell this is (1 = the first), for the in-flight marker and messages.
    round: int = 1
    #: The cell's default baseline on the same backend and inputs (or the cell itself, for an A/A twin), timed
    #: in blocks alternating with the cell's in the same loop (:class:`workbench.measure.timer.Partner`).
    partner: Cell | None = None

    @property
    def check_only(self) -> bool:
        return isinstance(self.what, CheckOnly)

    @property
    def first_seed(self) -> int:
        """The seed the cell is built with: a check-only request's first seed, else :attr:`seed`."""
        return self.what.seeds[0] if isinstance(self.what, CheckOnly) else self.seed

    @property
    def first_call_limit_s(self) -> float:
        """Seconds the cell's first call may take before it counts as hung (:data:`FIRST_CALL_FLOOR_S`); the
        whole run limit where there is no separate first call (a later round, a check-only request)."""
        if self.role.later or not isinstance(self.what, TimingConfig):
            return self.timeout_s
        expected = self.what.warmup_s + self.what.budget_s
        return min(self.timeout_s, max(FIRST_CALL_FLOOR_S, FIRST_CALL_SHARE * self.timeout_s,
                                       FIRST_CALL_FACTOR * expected))

    def with_ceilings(self, ceilings: Peaks | None) -> CellRequest:
        return dataclasses.replace(self, ceilings=ceilings)
