"""Issue 40, the kernel author's loop: tolerances that grow with the size yet still see a wrong element,
mismatch messages that point at the element, the precision hint only for rounding, eps-exercising inputs,
``verify --sizes`` as ``bench`` takes them, runs by name, the magics' one-line errors and terminal summary,
and latency-bound / unroofed specs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from workbench.catalog.check import check
from workbench.catalog.spec import KernelSpec
from workbench.catalog.tolerance import UNIT_ROUNDOFF, Accumulation, accumulation_tolerances


def scan_spec(**extra) -> KernelSpec:
    """A row-wise inclusive scan, as a researcher would write it, with accumulation tolerances over cols."""
    return KernelSpec(
        name="_scan", description="row-wise inclusive scan", axes=("rows", "cols"),
        make_inputs=lambda p, rng: {"x": rng.standard_normal((p["rows"], p["cols"]))},
        reference=lambda i, p: {"out": np.cumsum(i["x"], axis=1)},
        output_shapes=lambda p: {"out": (p["rows"], p["cols"])}, flops=lambda p: p["rows"] * p["cols"],
        bytes_moved=lambda p, s: 2 * p["rows"] * p["cols"] * s, sizes={"verify": [{"rows": 3, "cols": 100}]},
        **{"tolerances": accumulation_tolerances("cols"), **extra})


def scan_case(spec: KernelSpec, params: dict[str, int], dtype: str):
    x = spec.host_inputs(params, dtype, seed=0)["x"]
    return x, spec.reference({"x": x.astype(np.float64)}, params)["out"]


# -- tolerance as a function of dtype and size --------------------------------------------------------------
def test_the_tolerance_grows_with_the_accumulated_length_and_needs_the_params():
    spec = scan_spec()
    small, large = spec.tolerance("float32", {"rows": 1, "cols": 100}), spec.tolerance("float32", {"rows": 1,
                                                                                                  "cols": 2**20})
    assert small == 1e-5  # the default floor
    assert large == pytest.approx(2 * UNIT_ROUNDOFF["float32"] * 1024)
    with pytest.raises(ValueError, match="depends on the size"):
        spec.tolerance("float32")
    assert KernelSpec.tolerance(scan_spec(tolerances={"float32": 3e-6}), "float32") == 3e-6  # numbers unchanged


def test_float16_cumsum_fails_the_default_and_passes_the_accumulation_tolerance():
    params = {"rows": 37, "cols": 1000}
    spec = scan_spec()
    x, ref = scan_case(spec, params, "float16")
    out = np.cumsum(x, axis=1)  # sequential float16 accumulation: a correct float16 scan
    assert not check(scan_spec(tolerances={"float16": 5e-3}), {"out": out}, {"out": ref}, "float16",
                     params=params).passed
    assert check(spec, {"out": out}, {"out": ref}, "float16", params=params).passed


def test_a_dropped_or_shifted_element_still_fails_at_the_largest_length_the_tolerance_admits():
    spec = scan_spec()
    tol = spec.tolerances["float32"]
    assert isinstance(tol, Accumulation)
    # one wrong N(0, 1) term moves a scan by ~1 against a largest partial sum of at most ~3 sqrt(n)
    n = tol.largest_length(lambda k: 1 / (3 * math.sqrt(k)))
    assert 10**6 < n < 10**7
    params = {"rows": 1, "cols": n}
    x, ref = scan_case(spec, params, "float32")
    good = np.cumsum(x, axis=1)
    assert check(spec, {"out": good}, {"out": ref}, "float32", params=params).passed
    j = n // 2 + int(np.argmax(np.abs(x[0, n // 2:n // 2 + 100]) > 1.0))  # a typical term, |x| > 1
    dropped = x.copy()
    dropped[0, j] = 0
    res = check(spec, {"out": np.cumsum(dropped, axis=1)}, {"out": ref}, "float32", params=params)
    assert not res.passed and not res.rounding_like, res
    exclusive = good - x  # the exclusive-scan bug: every element shifted by one term
    res = check(spec, {"out": exclusive}, {"out": ref}, "float32", params=params)
    assert not res.passed and not res.rounding_like, res


# -- mismatch messages --------------------------------------------------------------------------------------
def test_a_mismatch_names_the_worst_element_in_the_output_shape_its_value_the_reference_and_the_count():
    spec = scan_spec(tolerances={"float32": 1e-5})
    params = {"rows": 4, "cols": 50}
    x, ref = scan_case(spec, params, "float32")
    out = np.cumsum(x, axis=1)
    out[2, 37] += 5.0
    res = check(spec, {"out": out}, {"out": ref}, "float32", params=params)
    assert not res.passed
    assert "at out[2, 37]:" in res.message and f"reference {ref[2, 37]:.6g}" in res.message, res.message
    assert f"{out[2, 37]:.6g}" in res.message and "1 of 200 elements off" in res.message, res.message
    assert not res.rounding_like


def test_an_output_never_written_says_so_and_a_partly_written_one_points_at_the_first_nan():
    spec = scan_spec(tolerances={"float32": 1e-5})
    params = {"rows": 2, "cols": 8}
    x, ref = scan_case(spec, params, "float32")
    res = check(spec, {"out": np.full((2, 8), np.nan, np.float32)}, {"out": ref}, "float32", params=params)
    assert "never written" in res.message and "all 16 of its 16 elements" in res.message, res.message
    assert "out[0, 0] to out[1, 7]" in res.message and np.isnan(res.max_error), (res.message, res.max_error)
    part = np.cumsum(x, axis=1)
    part[1, 5:] = np.nan
    res = check(spec, {"out": part}, {"out": ref}, "float32", params=params)
    assert "3 of 16 elements non-finite" in res.message and "first at out[1, 5]" in res.message, res.message
    assert "never written" in res.message and np.isnan(res.max_error)


def test_a_one_element_output_never_written_names_the_element_and_its_error_is_nan_not_inf():
    # 03 printed "its one element is non-finite" and a max error of "inf" for an output holding only NaN
    spec = scan_spec(tolerances={"float32": 1e-5})
    params = {"rows": 1, "cols": 1}
    _, ref = scan_case(spec, params, "float32")
    res = check(spec, {"out": np.full((1, 1), np.nan, np.float32)}, {"out": ref}, "float32", params=params)
    assert "its only element, out[0, 0] (1 of 1), is non-finite" in res.message, res.message
    assert np.isnan(res.max_error), res.max_error
    res = check(spec, {"out": np.full((1, 1), np.inf, np.float32)}, {"out": ref}, "float32", params=params)
    assert res.max_error == float("inf"), res.max_error


def test_the_precision_hint_follows_the_pattern_not_just_the_size_of_the_error():
    from workbench.measure.result_audit import TRADES_PRECISION, precision_note

    rng = np.random.default_rng(1)
    y = rng.standard_normal(5000)
    spec = KernelSpec(name="_tanh", description="", axes=("n",), make_inputs=None, reference=None,
                      output_shapes=lambda p: {"out": (p["n"],)}, flops=lambda p: 0, bytes_moved=lambda p, s: 0,
                      sizes={"verify": [{"n": 5000}]})
    ref = np.tanh(y)
    rounded = np.tanh(y.astype(np.float16)).astype(np.float32)  # float16 arithmetic in a float32 run
    res = check(spec, {"out": rounded}, {"out": ref}, "float32")
    assert not res.passed and res.rounding_like
    assert TRADES_PRECISION in precision_note("float32", res.max_error, res.tolerance, res.rounding_like)
    shifted = np.roll(ref, 1).astype(np.float32)
    res = check(spec, {"out": shifted}, {"out": ref}, "float32")
    assert not res.rounding_like and precision_note("float32", 1e-3, res.tolerance, res.rounding_like) == ""
    one = ref.astype(np.float32)
    one[77] *= 1.001  # an error of a precision trade's size, but in one element
    res = check(spec, {"out": one}, {"out": ref}, "float32")
    assert not res.passed and not res.rounding_like


# -- inputs that exercise the constants ---------------------------------------------------------------------
def test_the_catalog_layernorm_inputs_catch_a_wrong_eps():
    from workbench.catalog import builtin_catalog_path, get_kernel, load_catalog

    load_catalog(builtin_catalog_path())
    spec = get_kernel("layernorm")
    params = {"rows": 8, "cols": 256}
    host = spec.host_inputs(params, "float32", seed=0)
    f64 = {k: v.astype(np.float64) for k, v in host.items()}
    ref = spec.reference(f64, params)

    def layernorm(eps):
        x = f64["x"]
        mean = x.mean(axis=1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
        return {"out": ((x - mean) / np.sqrt(var + eps) * f64["weight"] + f64["bias"]).astype(np.float32)}

    assert check(spec, layernorm(1e-5), ref, "float32", params=params).passed
    for wrong in (1e-4, 0.0):
        res = check(spec, layernorm(wrong), ref, "float32", params=params)
        assert not res.passed, (wrong, res)


# -- latency-bound and unroofed specs -----------------------------------------------------------------------
def test_a_spec_declares_latency_bound_with_its_chain_or_no_roof_and_is_scored_so():
    from workbench.roofs.ceilings import row_peak_note
    from workbench.roofs.throughput import rates

    with pytest.raises(ValueError, match="chain="):
        scan_spec(bound="latency-bound")
    with pytest.raises(ValueError, match="latency-bound, none"):
        scan_spec(bound="serial")
    spec = scan_spec(bound="latency-bound", chain=lambda p: p["cols"])
    peaks = {"gflops": 100.0, "bandwidth_gbps": 50.0}
    r = rates(1e6, 8e6, 1e-3, "float32", published=peaks, bound=spec.bound, chain_steps=spec.chain({"cols": 1000}))
    assert r["pct_peak_bw"] is None and r["pct_peak_flops"] is None and r["pct_published"] is None
    assert "1000 dependent steps a call, 1e+03 ns a step" in r["peak_note"], r["peak_note"]
    rescaled = row_peak_note({**r, "bound": "latency-bound", "median_s": 2e-3})  # the rounds moved the median
    assert "2e+03 ns a step" in rescaled, rescaled
    roofed = rates(1e6, 8e6, 1e-3, "float32", published=peaks, bound="memory-bound")
    assert roofed["pct_published"] is not None
    none = rates(1e6, 8e6, 1e-3, "float32", published=peaks, bound="none")
    assert none["pct_published"] is None and "no roof" in none["peak_note"]


# -- runs by name -------------------------------------------------------------------------------------------
def test_a_run_is_named_by_id_name_or_unique_prefix_and_an_ambiguous_one_lists_the_runs(tmp_path):
    from workbench.report.data import resolve_run_ids
    from workbench.store.database import open_store
    from workbench.store.run_names import resolve_run

    store = open_store(tmp_path / "s.sqlite")
    a = store.new_run(name="run1")
    b = store.new_run(name="run2")
    c = store.new_run(name="baseline")
    assert resolve_run(store, "run1") == a and resolve_run(store, b) == b and resolve_run(store, "base") == c
    assert resolve_run_ids(store, ["run1", "run2"]) == [a, b]
    with pytest.raises(ValueError, match="ambiguous") as err:
        resolve_run(store, "run")
    assert a in str(err.value) and b in str(err.value) and "run1" in str(err.value)
    with pytest.raises(ValueError, match="unknown run id 'nope'"):
        resolve_run(store, "nope")


def test_commands_take_a_run_name(tmp_path, capsys):
    from workbench.cli import main
    from workbench.store.database import open_store

    path = tmp_path / "s.sqlite"
    store = open_store(path)
    store.new_run(name="first")
    keep = store.new_run(name="second")
    assert main(["export", "second", "--store", str(path), "-o", str(tmp_path / "x.json")]) == 0
    assert keep in (tmp_path / "x.json").read_text()
    assert main(["store", "drop", "first", "--store", str(path)]) == 0
    assert [r for r in open_store(path).runs()["run_id"]] == [keep]


# -- verify --sizes -----------------------------------------------------------------------------------------
def test_verify_sizes_takes_explicit_sizes_as_bench_does(capsys):
    from workbench.cli import main

    code = main(["verify", "--kernel", "layernorm", "--backend", "numpy", "--variant", "numpy", "--seeds", "1",
                 "--sizes", "3x65,rows=2:cols=9", "--isolation", "in-process", "--json"])
    import json

    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["passed"], doc
    assert main(["verify", "--kernel", "layernorm", "--sizes", "1x2x3", "--isolation", "in-process"]) == 2
    assert "fits none of the kernels" in capsys.readouterr().err


def test_verify_python_takes_tuples_and_skips_kernels_no_size_fits():
    from workbench.sweep.verification import verify

    res = verify(backends="numpy", kernels=["layernorm", "relu"], variants=["numpy"], seeds=[0],
                 sizes=[(3, 65)], isolation="in-process")
    assert {r.kernel for r in res} == {"layernorm"} and res.ok
    assert any(s.kernel == "relu" and "none of the sizes" in s.reason for s in res.skipped)


# -- magics -------------------------------------------------------------------------------------------------
def test_statement_errors_are_one_line_and_workbench_errors_keep_their_traceback():
    from workbench.magics import MagicInputError, statement_error, statement_function

    run, _ = statement_function("undefined_name + 1", {})
    try:
        run()
    except NameError as exc:
        err = statement_error(exc, "wb_timeit")
    assert isinstance(err, MagicInputError) and str(err) == (
        "%wb_timeit: the statement raised NameError: name 'undefined_name' is not defined")
    with pytest.raises(SyntaxError) as bad:
        statement_function("x = (", {})
    assert "not valid Python" in str(statement_error(bad.value, "wb_timeit"))
    assert statement_error(RuntimeError("ours"), "wb_timeit") is None


def test_wb_timeit_name_error_is_one_usage_line():
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    try:
        ip.run_line_magic("load_ext", "workbench.magics")
        from IPython.core.error import UsageError

        with pytest.raises(UsageError, match="NameError: name 'nothing_here' is not defined"):
            ip.run_line_magic("wb_timeit", "-q nothing_here + 1")
    finally:
        InteractiveShell.clear_instance()


def test_the_terminal_summary_shows_every_column_of_every_row():
    import pandas as pd

    from workbench.magics import in_terminal, summary_text

    table = pd.DataFrame([{"variant": "scan", "backend": "numpy", "dtype": "float32", "size": "8x65536",
                           "status": "ok", "median ± IQR": "1.2 ms ± 3 us", "GB/s": "3.4", "notes": "~ noisy"},
                          {"variant": "excl", "backend": "numpy", "dtype": "float32", "size": "8x65536",
                           "status": "incorrect", "median ± IQR": "", "GB/s": "", "notes": "out: max error"}])
    text = summary_text(table)
    assert text.splitlines() == ["scan numpy float32 8x65536 ok: median ± IQR 1.2 ms ± 3 us, GB/s 3.4",
                                 "    notes: ~ noisy", "excl numpy float32 8x65536 incorrect",
                                 "    notes: out: max error"]
    assert in_terminal(object()) and not in_terminal(type("Kernelled", (), {"kernel": object()})())


def test_a_size_rule_refuses_a_size_the_kernel_has_no_meaning_at_by_name():
    k = 8
    spec = KernelSpec(name="topk-rule", description="top-k", axes=("rows", "cols"),
                      make_inputs=lambda p, rng: {"x": rng.standard_normal((p["rows"], p["cols"]))},
                      reference=lambda inp, p: {"out": np.sort(inp["x"], axis=1)[:, ::-1][:, :k]},
                      output_shapes=lambda p: {"out": (p["rows"], k)}, flops=lambda p: 0.0,
                      bytes_moved=lambda p, i: 0.0, sizes={"verify": [{"rows": 3, "cols": 13}]},
                      size_rule=lambda p: f"cols must be at least {k}" if p["cols"] < k else None)
    assert spec.validate_params({"rows": 3, "cols": 8}) == {"rows": 3, "cols": 8}
    with pytest.raises(ValueError, match=r"no meaning at \{'rows': 3, 'cols': 5\}: cols must be at least 8"):
        spec.validate_params({"rows": 3, "cols": 5})


def test_a_kernel_whose_file_failed_to_load_is_named_so_not_unknown(monkeypatch):
    from workbench.catalog import get_kernel, loader
    monkeypatch.setitem(loader.load_errors, "topk-broken/spec.py", "TypeError: unexpected keyword 'validate_params'")
    with pytest.raises(ValueError, match=r"kernel 'topk-broken' did not load \(topk-broken/spec.py: TypeError"):
        get_kernel("topk-broken")
    with pytest.raises(ValueError, match="unknown kernel 'nothing-here'; valid kernels"):
        get_kernel("nothing-here")
