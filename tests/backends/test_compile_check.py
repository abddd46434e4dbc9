"""Rung 4: the catalog's device sources compile for sm_80 and sm_90 with a resource report.

Runs where nvcc or NVRTC is present (CI has nvcc) and skips with the reason
otherwise. The whole catalog is compiled once per test run, by the command (tests/conftest.py's
catalog_compile_check, which test_done_criteria and test_compile_check_triton read too); the other tests
compile one small unit each.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import COMPILE_CHECK_ARCHS

from workbench.cli import main
from workbench.portable import compile_check as cc
from workbench.portable import prelude, programs
from workbench.portable.compile_check import Compiler, Unit

ARCHS = ("sm_80", "sm_90")
TILED = {"gemm_tiled", "transpose_tiled"}


@pytest.fixture(scope="module")
def compiler() -> Compiler:
    found = cc.find_compiler()
    if found is None:
        pytest.skip("neither nvcc nor NVRTC is available: rung 4 (compile for sm_80/sm_90) cannot run here")
    return found


@pytest.fixture(scope="module")
def catalog_rows(compiler, catalog_compile_check):
    """The portable rows of ``workbench compile-check --arch sm_80,sm_90 --json`` over the catalog (run once per
    test run, tests/conftest.py's catalog_compile_check), each with the attributes of a check row."""
    assert ARCHS == COMPILE_CHECK_ARCHS
    try:
        doc = json.loads(catalog_compile_check["stdout"])
    except json.JSONDecodeError:
        pytest.fail(f"compile-check printed no JSON: {catalog_compile_check['stderr'][-2000:]}")
    assert doc["compiler"] == compiler.describe(), (doc["compiler"], compiler)  # the compiler these tests found
    rows = [SimpleNamespace(**r) for r in doc["rows"] if r["tool"] == compiler.kind]
    assert rows, f"no portable rows: {catalog_compile_check['stderr'][-2000:]}"
    return cc.units_from_catalog(), rows


def test_catalog_compiles_without_errors_or_spills(catalog_rows):
    units, rows = catalog_rows
    failed = [f"{r.file} {r.kernel} {r.arch}: {'; '.join(r.problems)}" for r in rows if not r.ok]
    assert not failed, "\n".join(failed)
    assert all(r.kernel for r in rows)
    assert all(r.spill_stores == 0 and r.spill_loads == 0 for r in rows)


def test_every_registered_entry_has_a_resource_report_per_arch(catalog_rows):
    _, rows = catalog_rows
    seen = {(Path(r.file).name, r.kernel, r.arch): r for r in rows}
    for p in programs():
        if "cupy" not in p.runtimes:
            continue
        for entry in p.entries:
            for arch in ARCHS:
                row = seen.get((p.source.name, entry, arch))
                assert row is not None, f"{p.kernel}/{p.variant}: no row for {entry} on {arch}"
                assert row.registers and row.registers > 0


def test_shared_memory_reported_where_declared(catalog_rows):
    _, rows = catalog_rows
    for r in rows:
        if r.kernel in TILED:
            assert r.declares_shared
        if r.declares_shared:
            assert r.smem_bytes and r.smem_bytes > 0 and r.ptx_shared, (r.file, r.kernel, r.arch)
        else:
            assert r.smem_bytes == 0, (r.file, r.kernel, r.arch)
    # transpose's tile is TILE x (TILE + 1) floats: the padding is really there.
    assert {r.smem_bytes for r in rows if r.kernel == "transpose_tiled"} == {32 * 33 * 4}
    assert {r.smem_bytes for r in rows if r.kernel == "gemm_tiled"} == {2 * 16 * 16 * 4}


def test_broken_source_reports_file_and_line(compiler, tmp_path):
    src = tmp_path / "broken.cu"
    src.write_text("/* a comment */\nKERNEL void broken(GLOBAL real* out)\n{\n    out[0] = not_declared;\n}\n")
    rows = cc.check_unit(Unit(src, (("BLOCK", 64),), ("test/broken",)), "sm_80", "float32", compiler,
                         relative_to=tmp_path)
    (row,) = rows
    assert row.kernel is None and not row.ok
    assert any(p.startswith("broken.cu:4: error:") and "not_declared" in p for p in row.problems), row.problems


def test_empty_shared_macro_fails_the_shared_check(compiler):
    """The FIELD-NOTES pitfall: with SHARED empty, gemm_tiled still compiles, into thread-private memory."""
    gemm = next(p for p in programs() if (p.kernel, p.variant) == ("gemm", "portable-tiled"))
    unit = Unit(gemm.source, tuple(sorted(gemm.defines.items())), ("gemm/portable-tiled",))
    broken = prelude("cuda", "float32").replace("#define SHARED __shared__", "#define SHARED")
    assert broken != prelude("cuda", "float32")
    rows = {r.kernel: r for r in cc.check_unit(unit, "sm_90", "float32", compiler, prelude_override=broken)}
    assert rows["gemm_tiled"].declares_shared and rows["gemm_tiled"].ptx_shared is False
    assert any(".shared" in p for p in rows["gemm_tiled"].problems)
    assert rows["gemm_naive"].ok  # declares nothing, so nothing to check


def test_other_dtypes_compile(compiler):
    """float16 (PTX cvt conversions, no cuda_fp16.h) and float64 renderings of the reduction-heavy sources."""
    units = [u for u in cc.units_from_catalog() if u.source.name in ("softmax_warp.cu", "sum.cu", "gemm.cu")]
    rows = cc.run_check(units, ("sm_90",), compiler, dtypes=("float16", "float64"))
    assert rows and all(r.ok for r in rows), [(r.file, r.kernel, r.dtype, r.problems) for r in rows if not r.ok]


def test_full_mask_follows_warp_size(compiler, tmp_path):
    src = tmp_path / "mask.cu"
    src.write_text("static_assert(FULL_MASK == (lane_mask_t)((1ull << WARP_SIZE) - 1) || WARP_SIZE == 32, \"mask\");\n"
                   "static_assert(WARP_SIZE != 32 || FULL_MASK == ~(lane_mask_t)0, \"full\");\n"
                   "KERNEL void k(GLOBAL real* o) { o[THREAD_X] = (real)SHFL_XOR(LOAD(o, THREAD_X), 1); }\n")
    for warp in (16, 32):
        rows = cc.check_unit(Unit(src, (("BLOCK", 64), ("WARP_SIZE", warp)), ()), "sm_80", "float32", compiler)
        assert all(r.ok for r in rows), rows[0].problems


def test_nvrtc_path_matches(compiler):
    if cc.nvrtc_version() is None:
        pytest.skip("NVRTC (cupy_backends + libnvrtc) is not loadable here")
    unit = next(u for u in cc.units_from_catalog() if u.source.name == "softmax.cu")
    rows = cc.check_unit(unit, "sm_80", "float32", Compiler("nvrtc", cc.nvrtc_version() or "?"))
    (row,) = rows
    assert row.ok and row.kernel == "softmax_rows" and row.registers and row.smem_bytes == 256 * 4
    assert row.ptx_shared


def test_ptxas_parser_sees_spills():
    log = ("ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
           "ptxas info    : Function properties for helper\n"
           "    8 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
           "ptxas info    : Function properties for k\n"
           "    24 bytes stack frame, 16 bytes spill stores, 12 bytes spill loads\n"
           "ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem, 380 bytes cmem[0]\n")
    assert cc.parse_ptxas(log) == {"k": {"stack": 24, "spill_stores": 16, "spill_loads": 12, "registers": 255,
                                         "smem": 4096}}


def test_cli_json_and_exit_code(compiler, capsys):
    assert main(["compile-check", "--source", "portable", "--arch", "sm_80", "--kernel", "saxpy", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["archs"] == ["sm_80"]
    (row,) = data["rows"]
    assert row["kernel"] == "saxpy" and row["file"].endswith("saxpy.cu") and row["ok"] and row["registers"] > 0


def test_cli_without_a_compiler(monkeypatch, capsys):
    monkeypatch.setattr(cc, "find_compiler", lambda prefer=None: None)
    assert main(["compile-check", "--source", "portable"]) == 0
    assert "neither nvcc nor NVRTC" in capsys.readouterr().err
    assert main(["compile-check", "--source", "portable", "--strict"]) == 1


def test_cli_fails_on_a_catalog_file_that_did_not_load_and_on_nothing_compiled(monkeypatch, capsys):
    """A catalog whose portable.py failed to load (its source a link to /dev/zero) and a named kernel with
    nothing to compile both exited 0 with "0 kernel rows" (2026-12-07): a gate passed on nothing."""
    from workbench.catalog import loader

    assert main(["compile-check", "--source", "triton", "--kernel", "gemm_int8", "--arch", "sm_80"]) == 1
    assert "nothing to compile for gemm_int8" in capsys.readouterr().err
    monkeypatch.setattr(cc, "find_compiler", lambda prefer=None: None)
    monkeypatch.setitem(loader.load_errors, "zz/portable.py", "ValueError: kernel source /dev/zero is a device")
    assert main(["compile-check", "--source", "portable", "--kernel", "saxpy"]) == 1
    assert "catalog file failed to load: zz/portable.py" in capsys.readouterr().err
