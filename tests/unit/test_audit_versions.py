"""The audits' changed versions of an input set are one per set for a whole sweep: made once, with their
float64 reference, and shared by every worker process (issue 25: the largest quick-suite groups made that
reference once per worker and round, 15 times)."""

from __future__ import annotations

import numpy as np

from workbench.backends import registry as backend_registry
from workbench.catalog import registry as catalog
from workbench.measure.audit import Auditor
from workbench.measure.cell import InputCache, SharedArrays, SharedInputCase, rotation_sets, shared_versions


def _case(cache: InputCache) -> SharedInputCase:
    spec = catalog.get_kernel("vector_add")
    return SharedInputCase(spec, catalog.get_variant("vector_add", "numpy"), backend_registry.get("numpy"),
                           {"n": 4099}, "float32", 0, cache)


def test_a_set_has_one_version_per_sweep_made_once_and_shared_between_workers(tmp_path):
    made = []

    def make():
        made.append(1)
        return {"pos__a": np.array([1, 2]), "val__a": np.array([5.0, 6.0], np.float32), "ref__out": np.ones(3)}

    first, second = (InputCache(shared=SharedArrays(tmp_path)) for _ in range(2))  # two workers of one sweep
    case = _case(first)
    a = first.version(case.spec, case.params, case.dtype, 7, make)
    assert first.version(case.spec, case.params, case.dtype, 7, make) is a and len(made) == 1
    b = second.version(case.spec, case.params, case.dtype, 7, make)
    assert len(made) == 1 and np.array_equal(b["pos__a"], a["pos__a"]) and np.array_equal(b["ref__out"], np.ones(3))
    second.version(case.spec, case.params, case.dtype, 8, make)  # another set: its own version
    assert len(made) == 2


def test_auditors_of_different_workers_change_a_set_the_same_way_and_check_it_against_its_reference(tmp_path):
    caches = [InputCache(shared=SharedArrays(tmp_path)) for _ in range(2)]
    versions = []
    for cache in caches:
        case = _case(cache)
        sets = rotation_sets(case, 2, 0, cache)
        audit = Auditor(case, sets, case.outputs, shared_version=shared_versions(case, 0, cache))
        v = audit._versions(1)[0]
        ref = audit._reference(1, 0)
        host = {k: np.array(x, copy=True) for k, x in sets[1][1].items()}
        for name, (pos, values) in v.changes.items():
            host[name].reshape(-1)[pos] = values
        expected = case.spec.reference({k: x.astype(np.float64) for k, x in host.items()}, case.params)
        assert all(np.allclose(ref[k], expected[k]) for k in expected)  # the version's own reference
        versions.append({k: (p.tolist(), x.tolist()) for k, (p, x) in v.changes.items()})
    assert versions[0] == versions[1] and versions[0]


def test_shared_arrays_make_room_by_removing_the_least_recently_used(tmp_path):
    """A full shared folder drops its least recently used entries: a quick suite filled 1 GiB a third of the way
    through, and every later group was then made once per worker."""
    import os
    import time

    shared = SharedArrays(tmp_path, max_bytes=3 * 8000 + 500)
    arr = {"x": np.zeros(1000)}  # 8000 bytes
    for name in ("a", "b", "c"):
        shared.put((name,), arr)
    past = time.time() - 100
    for i, name in enumerate(("a", "b", "c")):  # a, b, c from oldest to newest
        os.utime(shared._dir((name,)), (past + i, past + i))
    assert shared.get(("a",)) is not None  # a used now: b is the least recently used
    shared.put(("d",), arr)
    assert shared.get(("b",)) is None
    assert all(shared.get((k,)) is not None for k in ("a", "c", "d"))
    shared.put(("huge",), {"x": np.zeros(10_000)})  # larger than the folder: not shared, nothing dropped
    assert shared.get(("huge",)) is None and shared.get(("a",)) is not None


def test_a_version_never_changes_what_a_cheap_fingerprint_reads():
    """A memoizer keyed on a few fixed elements (the first, middle and last, a matrix's corners) must meet a
    changed input under its old key: a version whose random changes hit a[0], a[n // 2] or a[-1] let the
    fingerprint memoizer compute the changed answer afresh and pass about one verify run in 40."""
    from workbench.measure.audit_versions import landmarks, new_version

    for shape in [(1001,), (4099,), (64, 128), (3, 7, 33)]:
        marks = landmarks(shape)
        size = int(np.prod(shape))
        assert {0, size // 2, size - 1} <= set(marks.tolist())
        if len(shape) == 2:
            assert {shape[1] - 1, size - shape[1]} <= set(marks.tolist())  # the other two corners
        host = {"a": np.arange(size, dtype=np.float32).reshape(shape)}
        touched = np.concatenate([new_version(host).changes["a"][0] for _ in range(300)])
        assert len(touched) and not np.isin(touched, marks).any(), shape
        assert len(np.unique(touched)) > 50  # still random positions elsewhere
    tiny = {"a": np.arange(9, dtype=np.float32)}  # too small to spare the landmarks: still changed
    assert len(new_version(tiny).changes["a"][0]) >= 1
