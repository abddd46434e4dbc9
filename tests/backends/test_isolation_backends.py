"""Bad numba and OpenCL kernels, for real: writes past the end (by one: caught by the guard zone; far: a
segfault), a nopython loop that never returns holding the GIL, a far out-of-bounds OpenCL read. Each ends in
its own row, in verify and in bench, and the honest variants beside them stay ok."""

from __future__ import annotations

from conftest import require_backend

from workbench.sweep.driver import SweepSpec, run_sweep
from workbench.sweep.verification import verify

K = "wb_bad"
FAST = {"budget_s": 0.05, "warmup_s": 0.01, "min_samples": 3, "max_samples": 20, "rounds": 1}

NUMBA = {
    "numba-good": ("ok", ""),
    "numba-one-past": ("incorrect", "wrote 1 element past the end of `out`"),
    "numba-far": ("crashed", "signal SIGSEGV"),
    "numba-hang": ("timeout", "worker process was killed"),
}
OPENCL = {
    "portable-good": ("ok", ""),
    "portable-read-far": ("crashed", "signal SIGSEGV"),
    "portable-one-past": ("incorrect", "wrote 1 element past the end of `out`"),
}



def _opencl_cpu_backend() -> str:
    from workbench.backends import registry

    names = [n for n in registry.available_backends() if n.startswith("opencl")]
    if not names:
        require_backend("opencl-0")  # skips with the probe's reason
    return names[0]


def _check(rows: dict, expected: dict) -> None:
    for name, (status, words) in expected.items():
        assert rows[name][0] == status, (name, rows[name])
        assert words in rows[name][1], (name, rows[name])


def test_verify_bad_numba_kernels(bad_catalog):
    require_backend("numba")
    results = verify(backends="numba", kernels=K, variants=list(NUMBA), seeds=(0, 1), timeout_s=5,
                     build_timeout_s=120)
    _check({r.variant: (r.status, r.message) for r in results}, NUMBA)


def test_bench_bad_numba_kernels_then_honest_ones_on_a_fresh_worker(bad_catalog, tmp_path):
    require_backend("numba")
    variants = ["numba-far", "numba-hang", "numba-one-past", "numba-good"]
    spec = SweepSpec(kernels=[K], variants=variants, backends=["numba"], timeout_s=5, build_timeout_s=120, **FAST)
    out = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False)
    rows = {r["variant"]: (r["status"], r["message"] or "") for r in out.rows}
    _check(rows, NUMBA)
    good = next(r for r in out.rows if r["variant"] == "numba-good")
    assert good["median_s"] > 0 and "disturbed" not in (good["message"] or "")  # no abandoned thread left behind


def test_verify_boundscheck_in_a_worker_turns_the_off_by_one_into_an_index_error(bad_catalog):
    require_backend("numba")
    (r,) = verify(backends="numba", kernels=K, variants=["numba-one-past"], seeds=(0,), boundscheck=True,
                  timeout_s=30, build_timeout_s=120)
    assert r.status == "error" and "IndexError" in r.message and "numba boundscheck on" in r.message


def test_verify_and_bench_a_far_out_of_bounds_opencl_read(bad_catalog, tmp_path):
    backend = _opencl_cpu_backend()
    results = verify(backends=backend, kernels=K, variants=list(OPENCL), seeds=(0,), timeout_s=30,
                     build_timeout_s=120)
    _check({r.variant: (r.status, r.message) for r in results}, OPENCL)
    spec = SweepSpec(kernels=[K], variants=list(OPENCL), backends=[backend], timeout_s=30, build_timeout_s=120,
                     **FAST)
    out = run_sweep(spec, store=tmp_path / "s.sqlite", progress=False)
    _check({r["variant"]: (r["status"], r["message"] or "") for r in out.rows}, OPENCL)
