"""check() and verify(): what must fail fails, what cannot run is unsupported, never a pass."""

from __future__ import annotations

import dataclasses
import json
import textwrap
import time

import numpy as np
import pytest
from conftest import require_backend

from workbench.catalog import Unsupported, get_kernel, register_kernel, registry, variant
from workbench.measure.case import check, make_host_inputs, reference_outputs
from workbench.sweep.verification import verify

TEST_KERNEL = "_test_gelu"


@pytest.fixture
def test_kernel():
    """A private copy of the gelu_tanh spec to hang deliberately broken variants on; removed afterwards."""
    spec = register_kernel(dataclasses.replace(get_kernel("gelu_tanh"), name=TEST_KERNEL))
    yield spec
    registry.unregister_kernel(TEST_KERNEL)


def _case(name, p, dtype="float32"):
    spec = get_kernel(name)
    host = make_host_inputs(spec, p, dtype, 0)
    return spec, host, reference_outputs(spec, host, p)


class TestCheck:
    def setup_method(self):
        self.spec, self.host, self.ref = _case("gelu_tanh", {"n": 4099})
        self.good = self.ref["out"].astype(np.float32)

    def run(self, out, dtype="float32"):
        return check(self.spec, {"out": out}, self.ref, dtype, self.host, {"n": 4099})

    def test_correct_output_passes(self):
        res = self.run(self.good)
        assert res.passed and res.max_error < 1e-6

    def test_nan_output_fails(self):
        bad = self.good.copy()
        bad[17] = np.nan
        res = self.run(bad)
        assert not res.passed and "non-finite" in res.message

    def test_all_zero_output_fails(self):
        res = self.run(np.zeros_like(self.good))
        assert not res.passed and "constant" in res.message

    def test_constant_output_fails(self):
        res = self.run(np.full_like(self.good, float(np.mean(self.good))))
        assert not res.passed

    def test_wrong_shape_fails(self):
        res = self.run(self.good[:-1])
        assert not res.passed and "shape" in res.message

    def test_wrong_dtype_fails(self):
        res = self.run(self.good.astype(np.float64))
        assert not res.passed and "dtype" in res.message

    def test_missing_output_fails(self):
        res = check(self.spec, {}, self.ref, "float32")
        assert not res.passed and "missing" in res.message

    def test_subtly_wrong_gelu_fails(self):
        x = self.host["x"].astype(np.float64)
        wrong = 0.5 * x * (1 + np.tanh(0.7987 * (x + 0.044715 * x ** 3)))  # sqrt(2/pi) = 0.7978..., digits swapped
        res = self.run(wrong.astype(np.float32))
        assert not res.passed and res.max_error > res.tolerance

    def test_rounded_constant_fails_in_float64(self):
        """0.0447 for 0.044715 moves gelu by ~1e-6 of its range: inside float32 noise, far outside float64's."""
        spec, host, ref = _case("gelu_tanh", {"n": 4099}, "float64")
        x = host["x"]
        wrong = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.0447 * x ** 3)))
        res = check(spec, {"out": wrong}, ref, "float64")
        assert not res.passed and res.max_error > 1e3 * res.tolerance

    def test_gelu_erf_is_not_gelu_tanh(self):
        erf = pytest.importorskip("scipy.special").erf

        x = self.host["x"].astype(np.float64)
        res = self.run((0.5 * x * (1 + erf(x / np.sqrt(2)))).astype(np.float32))
        assert not res.passed

    def test_half_precision_result_passes_float16_but_not_float32(self):
        spec, host, ref = _case("gelu_tanh", {"n": 4099}, "float16")
        out16 = ref["out"].astype(np.float16)
        assert check(spec, {"out": out16}, ref, "float16").passed
        assert not self.run(self.good.astype(np.float16).astype(np.float32)).passed


def test_broken_variant_reported_as_fail(test_kernel):
    @variant(TEST_KERNEL, "wrong-constant", "numpy")
    def build(ctx):
        def run(inp, out):
            x = inp["x"]
            np.multiply(0.5 * x, 1 + np.tanh(0.7987 * (x + 0.044715 * x ** 3)), out=out["out"])
        return run

    @variant(TEST_KERNEL, "right", "numpy")
    def build_ok(ctx):
        def run(inp, out):
            x = inp["x"]
            np.multiply(0.5 * x, 1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)), out=out["out"])
        return run

    rows = {r.variant: r for r in verify(backends="numpy", kernels=TEST_KERNEL)}
    assert rows["right"].status == "ok" and rows["right"].passed
    bad = rows["wrong-constant"]
    assert bad.status == "incorrect" and not bad.passed and bad.max_error > bad.tolerance
    assert bad.params is not None and bad.seed is not None and "tolerance" in bad.message


def test_variant_that_forgets_to_write_fails(test_kernel):
    @variant(TEST_KERNEL, "lazy", "numpy")
    def build(ctx):
        return lambda inp, out: None  # outputs stay poisoned with NaN

    (row,) = verify(backends="numpy", kernels=TEST_KERNEL, seeds=(0,))
    assert row.status == "incorrect" and "non-finite" in row.message


def test_replayed_answer_fails_on_the_next_seed(test_kernel):
    """A kernel that caches its first answer passes seed 0 and must fail seed 1 (fresh inputs per trial)."""
    @variant(TEST_KERNEL, "replay", "numpy")
    def build(ctx):
        memo = {}

        def run(inp, out):
            if "y" not in memo:
                x = inp["x"].astype(np.float64)
                memo["y"] = (0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))).astype(x.dtype)
            out["out"][...] = memo["y"]
        return run

    (row,) = verify(backends="numpy", kernels=TEST_KERNEL, seeds=(0, 1), sizes=[{"n": 4099}])
    assert row.status == "incorrect" and row.seed == 1


def test_unsupported_dtype_and_builder_reasons(test_kernel):
    @variant(TEST_KERNEL, "f64-only", "numpy", dtypes=("float64",))
    def build(ctx):
        raise AssertionError("never built for float32")

    @variant(TEST_KERNEL, "refuses", "numpy")
    def build_refuses(ctx):
        raise Unsupported("needs a feature this machine lacks")

    @variant(TEST_KERNEL, "crashes", "numpy")
    def build_crashes(ctx):
        raise RuntimeError("boom")

    rows = {r.variant: r for r in verify(backends="numpy", kernels=TEST_KERNEL)}
    assert rows["f64-only"].status == "unsupported" and "float64" in rows["f64-only"].message
    assert rows["refuses"].status == "unsupported" and "lacks" in rows["refuses"].message
    assert rows["crashes"].status == "error" and "RuntimeError: boom" in rows["crashes"].message
    assert not any(r.status == "ok" or r.passed for r in rows.values())


def test_numba_variant_in_float16_is_unsupported():
    require_backend("numba")
    rows = verify(backends="numba", kernels="gelu_tanh", dtypes="float16")
    assert rows and all(r.status == "unsupported" and "float16" in r.message for r in rows)


def test_variant_without_any_backend_is_unsupported(test_kernel):
    @variant(TEST_KERNEL, "elsewhere", "no-such-runtime")
    def build(ctx):
        raise AssertionError("never built")

    rows = [r for r in verify(kernels=TEST_KERNEL) if r.variant == "elsewhere"]
    assert rows and rows[0].status == "unsupported" and "no-such-runtime" in rows[0].message


def test_compiled_variants_skipped_unless_asked(test_kernel):
    @variant(TEST_KERNEL, "compiled-thing", "numpy", mode="compiled")
    def build(ctx):
        raise AssertionError("must not be built")

    res = verify(backends="numpy", kernels=TEST_KERNEL)
    assert not any(r.variant == "compiled-thing" for r in res)
    assert [s.variant for s in res.skipped] == ["compiled-thing"]


@pytest.mark.parametrize("kwargs, needle", [
    ({"kernels": "nope"}, "valid kernels"),
    ({"backends": "nope"}, "valid backends"),
    ({"dtypes": "float8"}, "valid dtypes"),
    ({"kernels": "saxpy", "variants": "nope"}, "valid variants"),
    ({"kernels": "saxpy", "sizes": "nope"}, "valid"),
])
def test_bad_names_raise_value_error_listing_choices(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        verify(**kwargs)


def test_results_serialise():
    res = verify(backends="numpy", kernels="saxpy", seeds=(0,))
    assert res.ok and res.counts()["ok"] == 1
    json.dumps([r.to_dict() for r in res])


def test_cli_verify_json_saxpy(run_python):
    require_backend("numba")
    proc = run_python("-m", "workbench", "verify", "--json", "--kernel", "saxpy", "--backend", "numpy",
                      "--backend", "numba")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert {r["variant"] for r in doc["results"]} >= {"numpy", "numba"}
    assert doc["counts"]["ok"] >= 2 and doc["counts"]["incorrect"] == 0
    assert doc["passed"] is True and all(r["passed"] == (r["status"] == "ok") for r in doc["results"])


def test_cli_verify_table_and_default_backends(run_python):
    proc = run_python("-m", "workbench", "verify", "--kernel", "saxpy", "--seeds", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok:" in proc.stdout and "saxpy" in proc.stdout and "verification passed" in proc.stdout
    # saxpy's torch.compile variant is skipped, counted and the flag that includes it named
    assert "Skipped 1 compiled" in proc.stdout and "--include-compiled" in proc.stdout
    assert sum(line.startswith("saxpy") for line in proc.stdout.splitlines()) == 1  # each cell once, in the table


def test_only_leaves_the_other_pairs_out():
    res = verify(backends="numpy", kernels=["saxpy", "softmax"], seeds=(0,),
                 only={("softmax", "numpy", "numpy", "float32")})
    assert [(r.kernel, r.variant, r.backend) for r in res] == [("softmax", "numpy", "numpy")] and res.ok


def test_cli_verify_suite_checks_only_the_variants_the_suite_runs(run_python):
    require_backend("numba")
    proc = run_python("-m", "workbench", "verify", "--suite", "quick", "--kernel", "bias_gelu", "--backend", "numba",
                      "numpy", "--seeds", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    got = {(r["variant"], r["backend"]) for r in json.loads(proc.stdout)["results"]}
    # numba-unfused is a variant of bias_gelu on numba too, but the quick suite times only the fused one
    assert got == {("numba-fused", "numba"), ("numpy-unfused", "numpy")}
    bad = run_python("-m", "workbench", "verify", "--suite", "quick", "--variant", "numba-fused")
    assert bad.returncode == 2 and "--suite quick chooses the variants" in bad.stderr and "Traceback" not in bad.stderr


def test_cli_verify_bad_kernel_is_a_clean_error(run_python):
    proc = run_python("-m", "workbench", "verify", "--kernel", "nope")
    assert proc.returncode == 2
    assert "valid kernels" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_verify_exits_1_on_a_failing_variant(run_python, tmp_path):
    """A user catalog (WORKBENCH_CATALOG) with a wrong kernel makes `workbench verify` fail."""
    folder = tmp_path / "wrong_relu"
    folder.mkdir()
    (folder / "spec.py").write_text(textwrap.dedent('''
        import numpy as np
        from workbench.catalog import KernelSpec, register_kernel
        SPEC = register_kernel(KernelSpec(
            name="wrong_relu", description="relu for a test", axes=("n",),
            make_inputs=lambda p, rng: {"x": rng.standard_normal(p["n"])},
            reference=lambda inp, p: {"out": np.maximum(inp["x"], 0.0)},
            output_shapes=lambda p: {"out": (p["n"],)}, flops=lambda p: p["n"],
            bytes_moved=lambda p, s: 2 * p["n"] * s, sizes={"verify": [{"n": 101}]}))
    '''))
    (folder / "cpu.py").write_text(textwrap.dedent('''
        import numpy as np
        from workbench.catalog import variant

        @variant("wrong_relu", "leaky", "numpy")
        def build(ctx):
            def run(inp, out):
                np.maximum(inp["x"], 0.01 * inp["x"], out=out["out"])
            return run
    '''))
    proc = run_python("-m", "workbench", "verify", "--kernel", "wrong_relu", "--backend", "numpy",
                      env={"WORKBENCH_CATALOG": str(tmp_path)})
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "incorrect" in proc.stdout and "wrong_relu/leaky" in proc.stdout
    assert "verification FAILED" in proc.stdout


# -- one pipeline with bench: selection, unavailable backends, the worker's time limit ----------------

@pytest.fixture
def numba_switched_off(monkeypatch):
    """The numba adapter probing unavailable, whatever is installed."""
    from workbench.backends import registry as backend_registry
    from workbench.backends.base import Probe

    monkeypatch.setattr(backend_registry.get("numba"), "probe", lambda: Probe.missing("switched off for a test"))


def test_an_unavailable_backend_verifies_nothing_and_says_why(numba_switched_off):
    from workbench.sweep.driver import SweepSpec
    from workbench.sweep.selection import BackendUnavailable

    for run in (lambda: verify(backends=["numpy", "numba"], kernels="saxpy"),
                lambda: SweepSpec(kernels=["saxpy"], backends=["numpy", "numba"]).cells()):
        with pytest.raises(BackendUnavailable, match="backend 'numba' is unavailable") as err:
            run()
        assert "switched off for a test" in str(err.value) and "available backends: numpy" in str(err.value)


def _unavailable_cupy():
    from workbench.backends import registry as backend_registry

    probe = backend_registry.get("cupy").probe()
    if probe.available:
        pytest.skip("cupy is available here")
    return probe.reason


@pytest.mark.parametrize("argv", [["verify", "--backend", "cupy", "--kernel", "saxpy"],
                                  ["verify", "--json", "--backend", "cupy"],
                                  ["bench", "--backends", "cupy", "--kernels", "saxpy", "--budget", "0.01"]])
def test_cli_verify_and_bench_refuse_an_unavailable_backend_alike(run_python, tmp_path, argv):
    """Formerly `verify --backend cupy` exited 0 with unsupported rows while bench exited 2."""
    reason = _unavailable_cupy()
    proc = run_python("-m", "workbench", *argv, env={"WORKBENCH_STORE": str(tmp_path / "s.sqlite")})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "backend 'cupy' is unavailable here" in proc.stderr and reason[:40] in proc.stderr
    assert "available backends: numpy" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout.strip() == ""  # nothing verified, nothing measured


def test_a_named_variant_meets_every_named_backend_as_in_bench(test_kernel):
    require_backend("numba")
    @variant(TEST_KERNEL, "np", "numpy")
    def build(ctx):
        return lambda inp, out: np.multiply(inp["x"], 1, out=out["out"])

    (row,) = verify(backends="numba", kernels=TEST_KERNEL, variants="np", seeds=(0,))
    assert row.status == "unsupported" and "runs on numpy" in row.message


SLEEPER = '''
import time
from workbench.catalog import variant

@variant("{kernel}", "sleeps", "numpy")
def build(ctx):
    def run(inp, out):
        time.sleep(3600)  # never returns in any useful time
    return run
'''


def test_a_variant_that_never_returns_times_out(test_kernel):
    exec(compile(SLEEPER.format(kernel=TEST_KERNEL), "sleeper", "exec"), {})
    t0 = time.perf_counter()
    (row,) = verify(backends="numpy", kernels=TEST_KERNEL, seeds=(0,), sizes=[{"n": 101}], timeout_s=1.0)
    assert time.perf_counter() - t0 < 30
    assert row.status == "timeout" and not row.passed and "1 s" in row.message


def test_cli_verify_timeout_ends_a_hung_variant(run_python, tmp_path):
    folder = tmp_path / "hung_relu"
    folder.mkdir()
    (folder / "spec.py").write_text(textwrap.dedent('''
        import numpy as np
        from workbench.catalog import KernelSpec, register_kernel
        SPEC = register_kernel(KernelSpec(
            name="hung_relu", description="relu for a test", axes=("n",),
            make_inputs=lambda p, rng: {"x": rng.standard_normal(p["n"])},
            reference=lambda inp, p: {"out": np.maximum(inp["x"], 0.0)},
            output_shapes=lambda p: {"out": (p["n"],)}, flops=lambda p: p["n"],
            bytes_moved=lambda p, s: 2 * p["n"] * s, sizes={"verify": [{"n": 101}]}))
    '''))
    (folder / "cpu.py").write_text(SLEEPER.format(kernel="hung_relu"))
    t0 = time.perf_counter()
    proc = run_python("-m", "workbench", "verify", "--kernel", "hung_relu", "--backend", "numpy", "--timeout", "1",
                      env={"WORKBENCH_CATALOG": str(tmp_path)}, timeout=120)
    assert time.perf_counter() - t0 < 100
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "timeout" in proc.stdout and "hung_relu/sleeps" in proc.stdout and "verification FAILED" in proc.stdout
