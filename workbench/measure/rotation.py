"""Rotated input sets: a timing loop cycles through several, so a kernel cannot replay a cached answer.

Each set is checked against its own reference after timing, and the audits of the loop change them in place
(:class:`~workbench.measure.audit.Auditor`); the references and audit versions come from the sweep's
:class:`~workbench.measure.input_cache.InputCache` where it holds them already.
"""

from __future__ import annotations

import numpy as np

from workbench.catalog.spec import Arrays
from workbench.measure.audit import Auditor
from workbench.measure.backend_facts import device_info
from workbench.measure.case import Case, CheckResult, make_host_inputs, reference_outputs
from workbench.measure.input_cache import InputCache
from workbench.measure.input_set import InputSet, SharedVersion
from workbench.measure.timer import TimingConfig

#: Rotation input sets are dropped to one when they would take more than this share of device memory.
ROTATION_MEMORY_SHARE = 0.25


def rotation_sets(case: Case, n: int, seed: int, cache: InputCache | None) -> list[InputSet]:
    """``n`` input sets: the case's own, then those of seeds ``seed + 1 ..`` (from ``cache`` when a sweep
    shares them between cells)."""
    sets = [InputSet(case.inputs, case.host_inputs)]
    for i in range(1, n):
        host = (make_host_inputs(case.spec, case.params, case.dtype, seed + i) if cache is None
                else cache.host_inputs(case.spec, case.params, case.dtype, seed + i))
        sets.append(InputSet(case.device_inputs(host), host))
    return sets


def rotation_count(case: Case, wanted: int) -> tuple[int, str]:
    """How many input sets to rotate through (``wanted``, or one when they would crowd device memory:
    :data:`ROTATION_MEMORY_SHARE`), and a note saying why not when fewer."""
    if wanted <= 1:
        return 1, ""
    total = device_info(case.backend).total_memory_bytes
    nbytes = sum(v.nbytes for v in case.host_inputs.values())
    if total and wanted * nbytes > ROTATION_MEMORY_SHARE * total:
        return 1, f"inputs not rotated: {wanted} sets of {nbytes / 2**20:.0f} MiB would crowd device memory"
    return wanted, ""


def set_reference(case: Case, i: int, seed: int, cache: InputCache | None) -> Arrays | None:
    """Rotated input set ``i``'s float64 reference where it is made already: the case's own for set 0, the
    input cache's for the others (None without a cache: the caller computes it)."""
    if i == 0:
        return case.reference
    return None if cache is None else cache.reference(case.spec, case.params, case.dtype, seed + i)


def identical_sets(hosts: list[Arrays]) -> list[tuple[int, int]]:
    """Pairs of rotated input sets with the same contents (a replayed answer would pass on them). Compared
    byte for byte, which stops at the first difference: hashing every set with blake2b was 5% of a quick
    suite's cell time (two 32 MiB sets a first visit)."""
    def same(a: Arrays, b: Arrays) -> bool:
        return a.keys() == b.keys() and all(_same_contents(a[k], b[k]) for k in a)

    return [(i, j) for i in range(len(hosts)) for j in range(i + 1, len(hosts)) if same(hosts[i], hosts[j])]


def _same_contents(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.size == 0:
        return True
    x, y = np.ascontiguousarray(a).reshape(-1).view(np.uint8), np.ascontiguousarray(b).reshape(-1).view(np.uint8)
    step = 1 << 20  # chunks, so that sets that differ (all real ones) stop after the first
    return all(np.array_equal(x[i:i + step], y[i:i + step]) for i in range(0, len(x), step))


def check_rotations(case: Case, sets: list[InputSet], seed: int, cache: InputCache | None
                    ) -> tuple[CheckResult, int]:
    """Check the output of every rotated input set against its own reference (a kernel that replays the
    answer of one set fails on the others); returns the first failure, else the worst result, and the
    index of that set."""
    worst, worst_i = None, 0
    for i, (device, host) in enumerate(sets):
        ref = set_reference(case, i, seed, cache)
        ref = reference_outputs(case.spec, host, case.params) if ref is None else ref
        res = case.run_and_check(device, host, ref)
        if not res.passed:
            return res, i
        if worst is None or res.max_error > worst.max_error:
            worst, worst_i = res, i
    assert worst is not None
    return worst, worst_i


def shared_versions(case: Case, seed: int, inputs: InputCache | None) -> SharedVersion | None:
    """Rotated set ``s``'s audit version from the input cache (None without one: each auditor draws its own)."""
    if inputs is None:
        return None
    return lambda s, make: inputs.version(case.spec, case.params, case.dtype, seed + s, make)


def auditor(case: Case, sets: list[InputSet], seed: int, inputs: InputCache | None, config: TimingConfig
            ) -> Auditor:
    """The audit of a timing loop over ``sets``, with the references the input cache holds already and the
    sweep's shared versions of each set (:meth:`InputCache.version`)."""
    return Auditor(case, sets, case.outputs, min_samples=config.min_samples,
                   reference_of=lambda s: set_reference(case, s, seed, inputs),
                   shared_version=shared_versions(case, seed, inputs))
