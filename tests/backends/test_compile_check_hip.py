"""Rung 4 for AMD: the portable ``.cu`` sources compile as HIP for gfx targets with hipcc, with resource remarks.

Runs where hipcc (with the ROCm device libraries) is installed and skips with
the reason otherwise; the parser and "no hipcc" tests run everywhere. The
catalog is compiled once per module for gfx90a (about 10 s on two cores).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.portable import compile_check as cc
from workbench.portable import hip_check, programs
from workbench.portable.compile_check import Unit
from workbench.portable.source import render

ARCH = "gfx90a"


@pytest.fixture(scope="module")
def hip() -> hip_check.HipCompiler:
    found = hip_check.find_hipcc()
    if found is None:
        pytest.skip(f"hipcc is not installed: the HIP compile rung cannot run here ({hip_check.HIP_INSTALL_HINT})")
    reason = hip_check.probe_arch(found, ARCH)
    if reason:
        pytest.skip(f"hipcc cannot build {ARCH} here: {reason}")
    return found


@pytest.fixture(scope="module")
def gfx90a_rows(hip):
    return cc.run_check(cc.units_from_catalog(), (ARCH,), None, hip=hip)


def test_every_portable_kernel_compiles_for_gfx90a(gfx90a_rows):
    failed = [f"{r.file} {r.kernel}: {'; '.join(r.problems)}" for r in gfx90a_rows if not r.ok or r.skipped]
    assert not failed, "\n".join(failed)
    assert gfx90a_rows and all(r.kernel and r.tool == "hipcc" and r.arch == ARCH for r in gfx90a_rows)
    for r in gfx90a_rows:
        assert r.registers and r.registers > 0, (r.file, r.kernel)  # VGPRs
        assert r.sgprs and r.sgprs > 0 and r.agprs is not None and r.occupancy and r.occupancy > 0
        assert r.sgpr_spills == 0 and r.vgpr_spills == 0 and r.stack_bytes == 0, (r.file, r.kernel)
        assert (r.smem_bytes > 0) == r.declares_shared, (r.file, r.kernel, r.smem_bytes)


def test_every_registered_entry_has_a_gfx90a_row(gfx90a_rows):
    seen = {(Path(r.file).name, r.kernel) for r in gfx90a_rows}
    for p in programs():
        if "cupy" in p.runtimes:
            for entry in p.entries:
                assert (p.source.name, entry) in seen, f"{p.kernel}/{p.variant}: no {ARCH} row for {entry}"
    # LDS sizes are the declared arrays, as on NVIDIA.
    assert {r.smem_bytes for r in gfx90a_rows if r.kernel == "transpose_tiled"} == {32 * 33 * 4}
    assert {r.smem_bytes for r in gfx90a_rows if r.kernel == "gemm_tiled"} == {2 * 16 * 16 * 4}


def _warp_unit() -> Unit:
    p = next(p for p in programs() if p.needs_warp and p.source.name == "softmax_warp.cu")
    return Unit(p.source, tuple(sorted({**p.defines, "WARP_SIZE": 32}.items())), (f"{p.kernel}/{p.variant}",))


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_warp_softmax_compiles_for_64_lane_wavefronts(hip, dtype):
    unit = _warp_unit()
    (row,) = hip_check.check_unit(unit, ARCH, dtype, hip)
    assert row.ok and row.kernel == "softmax_rows_warp", row.problems
    assert row.defines["WARP_SIZE"] == 64  # the wavefront width of gfx90a, not NVIDIA's 32
    block = row.defines["BLOCK"]
    acc = 8 if dtype == "float64" else 4
    assert row.smem_bytes == block // 64 * acc  # one post per 64-lane wavefront


def test_warp_softmax_follows_wave32_on_rdna(hip):
    if hip_check.probe_arch(hip, "gfx1030"):
        pytest.skip("this hipcc cannot build gfx1030")
    (row,) = hip_check.check_unit(_warp_unit(), "gfx1030", "float32", hip)
    assert row.ok and row.defines["WARP_SIZE"] == 32 and row.smem_bytes == row.defines["BLOCK"] // 32 * 4


def test_wrong_warp_size_is_a_build_error(hip, tmp_path):
    """The HIP prelude refuses a WARP_SIZE that is not the target's wavefront width (64-bit masks assume it)."""
    src = tmp_path / "mask.cu"
    src.write_text("static_assert(FULL_MASK == ~(lane_mask_t)0, \"64 lanes, 64-bit mask\");\n"
                   "static_assert(sizeof(lane_mask_t) == 8, \"mask\");\n"
                   "KERNEL void k(GLOBAL real* o) { o[THREAD_X] = (real)SHFL_XOR(LOAD(o, THREAD_X), 1); }\n")
    (row,) = hip_check.check_unit(Unit(src, (("BLOCK", 64), ("WARP_SIZE", 32)), ()), ARCH, "float32", hip)
    assert row.ok and row.defines["WARP_SIZE"] == 64, row.problems
    text = render(src, "hip", "float32", {"BLOCK": 64, "WARP_SIZE": 32})
    ok, log = hip_check._run(hip, ARCH, text, 120)
    assert not ok and "wavefront size" in log


def test_broken_source_reports_file_and_line(hip, tmp_path):
    src = tmp_path / "broken.cu"
    src.write_text("/* a comment */\nKERNEL void broken(GLOBAL real* out)\n{\n    out[0] = not_declared;\n}\n")
    (row,) = hip_check.check_unit(Unit(src, (("BLOCK", 64),), ("test/broken",)), ARCH, "float32", hip,
                                  relative_to=tmp_path)
    assert row.kernel is None and not row.ok and not row.skipped
    assert any(p.startswith("broken.cu:4: error:") and "not_declared" in p for p in row.problems), row.problems


def test_gfx942_is_a_clear_unsupported_row(hip):
    reason = hip_check.probe_arch(hip, "gfx942")
    if reason is None:
        pytest.skip(f"{hip.describe()} builds gfx942: nothing unsupported to show")
    unit = next(u for u in cc.units_from_catalog() if u.source.name == "saxpy.cu")
    rows = cc.run_check([unit], ("gfx942", ARCH), None, hip=hip)
    skipped = [r for r in rows if r.skipped]
    assert len(skipped) == 1 and skipped[0].arch == "gfx942" and skipped[0].ok
    assert skipped[0].skipped.startswith(f"unsupported by this hipcc (LLVM {hip.llvm_version.split('.')[0]}): ")
    assert "gfx942" in skipped[0].skipped
    assert [r.kernel for r in rows if r.arch == ARCH] == ["saxpy"]
    assert "SKIP: unsupported by this hipcc" in cc.format_table(rows)


def test_cli_table_and_json(hip, capsys):
    assert main(["compile-check", "--arch", f"{ARCH},gfx942", "--kernel", "saxpy"]) == 0
    out = capsys.readouterr().out
    assert "saxpy" in out and ARCH in out and "hipcc" in out
    assert main(["compile-check", "--source", "portable", "--arch", ARCH, "--kernel", "saxpy", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["archs"] == [ARCH] and data["hip_compiler"].startswith("hipcc ")
    (row,) = data["rows"]
    assert row["kernel"] == "saxpy" and row["ok"] and row["registers"] > 0 and row["sgprs"] > 0
    assert row["vgpr_spills"] == 0 and row["occupancy"] > 0


def test_nvidia_and_amd_rows_side_by_side(hip):
    compiler = cc.find_compiler()
    if compiler is None:
        pytest.skip("neither nvcc nor NVRTC is available: no NVIDIA rows to put beside the AMD ones")
    unit = next(u for u in cc.units_from_catalog() if u.source.name == "transpose.cu")
    rows = cc.run_check([unit], ("sm_80", ARCH), compiler, hip=hip)
    tiled = {r.arch: r for r in rows if r.kernel == "transpose_tiled"}
    assert tiled["sm_80"].smem_bytes == tiled[ARCH].smem_bytes == 32 * 33 * 4
    assert tiled["sm_80"].tool in ("nvcc", "nvrtc") and tiled[ARCH].tool == "hipcc"
    assert all(r.ok for r in rows)


# -- no hipcc needed ---------------------------------------------------------------------------------

def test_without_hipcc_the_amd_rows_skip_with_the_reason(monkeypatch, capsys):
    unit = next(u for u in cc.units_from_catalog() if u.source.name == "saxpy.cu")
    rows = cc.run_check([unit], ("gfx90a", "gfx1030"), None, hip=None)
    assert [r.arch for r in rows] == ["gfx90a", "gfx1030"]
    assert all(r.skipped and "hipcc not found" in r.skipped and r.ok for r in rows)
    monkeypatch.setattr(hip_check, "find_hipcc", lambda: None)
    assert main(["compile-check", "--arch", "gfx90a", "--kernel", "saxpy"]) == 0
    captured = capsys.readouterr()
    assert "SKIP: hipcc not found" in captured.out and "skipped gfx90a" in captured.err
    assert main(["compile-check", "--arch", "gfx90a", "--kernel", "saxpy", "--strict"]) == 1


def test_wave_size_per_target():
    assert [hip_check.wave_size(a) for a in ("gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100")] == \
        [64, 64, 64, 32, 32]
    with pytest.raises(ValueError):
        hip_check.wave_size("gfxabc")


def test_remark_parser():
    tail = " [-Rpass-analysis=kernel-resource-usage]"
    log = "\n".join(f"k.cu:3:13: remark: {body}{tail}" for body in (
        "Function Name: k", "    SGPRs: 28", "    VGPRs: 19", "    AGPRs: 4", "    ScratchSize [bytes/lane]: 16",
        "    Occupancy [waves/SIMD]: 8", "    SGPRs Spill: 1", "    VGPRs Spill: 2",
        "    LDS Size [bytes/block]: 1024"))
    log += "\nk.cu:3:13: note: could not determine the original source location for k.cu:4:0\n"
    assert hip_check.parse_remarks(log) == {"k": {"sgprs": 28, "registers": 19, "agprs": 4, "stack_bytes": 16,
                                                  "occupancy": 8, "sgpr_spills": 1, "vgpr_spills": 2,
                                                  "smem_bytes": 1024}}
    diags = hip_check.parse_diagnostics("/x/broken.cu:4:14: error: use of undeclared identifier 'q'\n"
                                        "clang: error: invalid target ID 'gfx942'; format is ...",
                                        relative_to=Path("/x"))
    assert [str(d) for d in diags] == ["broken.cu:4: error: use of undeclared identifier 'q'",
                                       "error: hipcc: invalid target ID 'gfx942'; format is ..."]
