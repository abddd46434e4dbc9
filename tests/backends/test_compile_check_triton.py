"""Rung 4 for Triton: ``workbench compile-check`` compiles the catalog's Triton kernels for NVIDIA and AMD
targets with no GPU, in the same table as the portable C sources, and a kernel that cannot be compiled
fails loudly instead of vanishing from the table.

Needs triton (the CPU wheel carries its compilers and ptxas); skips with the reason where it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.portable import triton_catalog

pytestmark = pytest.mark.skipif(triton_catalog.triton_version() is None,
                                reason="triton is not installed: the Triton compile rung cannot run here")

SCALE_SOURCE = """\
import functools
from workbench.catalog import kernel_here
from workbench.portable.triton_check import TritonCompile


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)

    return scale_kernel
"""


def _kernel_folder(tmp_path: Path, name: str, triton_source: str) -> Path:
    """A catalog kernel folder: relu's spec under a new name, and the given triton_variants.py."""
    folder = tmp_path / name
    folder.mkdir()
    (folder / "spec.py").write_text((Path(__file__).parents[2] / "kernels" / "relu" / "spec.py").read_text())
    (folder / "triton_variants.py").write_text(triton_source)
    return folder


def _run_json(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["compile-check", "--json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_catalog_softmax_compiles_for_nvidia_and_amd_with_a_resource_report(capsys):
    code, out = _run_json(capsys, "--source", "triton", "--kernel", "softmax", "--arch", "sm_80,sm_90,gfx90a,gfx942")
    assert code == 0
    assert out["triton"].startswith("triton ")
    rows = {r["arch"]: r for r in out["rows"] if r["tool"] == "triton"}
    assert set(rows) == {"sm_80", "sm_90", "gfx90a", "gfx942"}
    for arch, r in rows.items():
        assert r["ok"], (arch, r["problems"])
        assert r["file"].endswith("softmax/triton_variants.py")
        assert r["registers"] and r["registers"] > 0
        assert r["dtype"] == "float32" and "triton" in r["variants"]
    assert rows["sm_90"]["spill_stores"] == 0 and rows["sm_90"]["spill_loads"] == 0
    assert rows["gfx942"]["vgpr_spills"] == 0 and rows["gfx942"]["sgprs"] > 0


def test_one_table_holds_portable_and_triton_rows_with_the_compiler_named(capsys):
    code = main(["compile-check", "--kernel", "softmax", "--arch", "gfx90a"])
    text = capsys.readouterr().out
    if "hipcc" not in text:
        pytest.skip("hipcc is absent: the table has no portable AMD rows to compare with")
    assert code == 0
    lines = [ln for ln in text.splitlines() if "gfx90a" in ln and ln.endswith("ok")]
    assert any(" hipcc " in ln and "softmax.cu" in ln for ln in lines)
    assert any(" triton " in ln and "triton_variants.py" in ln for ln in lines)


def test_rdna2_is_skipped_with_the_reason_not_failed(capsys):
    code, out = _run_json(capsys, "--source", "triton", "--kernel", "softmax", "--arch", "gfx1030")
    assert code == 0
    (row,) = out["rows"]
    assert row["skipped"] and "RDNA1/2" in row["skipped"]
    assert main(["compile-check", "--source", "triton", "--kernel", "softmax", "--arch", "gfx1030",
                 "--strict"]) == 1


def test_a_triton_kernel_without_compile_entries_fails_the_check(tmp_path: Path):
    folder = _kernel_folder(tmp_path, "scale2", SCALE_SOURCE)
    rows = triton_catalog.check_catalog(["sm_90"], [str(folder)])
    assert len(rows) == 1 and not rows[0].ok
    assert "declares no COMPILE entries" in rows[0].problems[0]


def test_a_declared_compile_that_breaks_is_a_failed_row_with_the_message(tmp_path: Path):
    folder = _kernel_folder(tmp_path, "scale3",
        SCALE_SOURCE + '\nCOMPILE = (TritonCompile(_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", '
                      '"BLOCK": "constexpr"}, {"BLOCK": 1000}),)\n')  # tl.arange needs a power of two
    (row,) = triton_catalog.check_catalog(["sm_90"], [str(folder)])
    assert row.kernel == "scale_kernel" and not row.ok
    assert "power of 2" in row.problems[0] or "arange" in row.problems[0]


def test_triton_absent_gives_skipped_rows_naming_the_install(monkeypatch):
    monkeypatch.setattr(triton_catalog, "triton_version", lambda: None)
    rows = triton_catalog.check_catalog(["sm_80", "gfx942"], [])
    assert [r.arch for r in rows] == ["sm_80", "gfx942"]
    assert all(r.skipped and "pip install" in r.skipped for r in rows)


@pytest.mark.parametrize(("arch", "unsupported"), [("gfx1030", True), ("gfx1010", True), ("gfx803", True),
                                                   ("gfx90a", False), ("gfx942", False), ("gfx1100", False),
                                                   ("sm_80", False)])
def test_which_targets_triton_cannot_compile(arch, unsupported):
    assert bool(triton_catalog.unsupported_reason(arch)) is unsupported


def test_without_a_kernel_every_catalog_triton_file_is_compiled(catalog_compile_check):
    """Read from the catalog's `compile-check --arch sm_80,sm_90 --json`, run once per test run (conftest)."""
    assert catalog_compile_check["returncode"] == 0, catalog_compile_check["stderr"][-2000:]
    out = json.loads(catalog_compile_check["stdout"])
    assert out["triton"].startswith("triton ")
    files = {r["file"].split("/")[-2] for r in out["rows"]
             if r["tool"] == "triton" and r["ok"] and r["arch"] == "sm_90"}
    assert {"softmax", "gemm", "vector_add", "layernorm"} <= files


def test_several_kernels_are_checked_together(capsys):
    code, out = _run_json(capsys, "--kernel", "softmax,relu", "--kernels", "saxpy", "--arch", "sm_90")
    assert code == 0
    kernels = {r["file"].split("/")[-2] for r in out["rows"]}
    assert kernels == {"softmax", "relu", "saxpy"}
    assert {r["tool"] for r in out["rows"]} >= {"triton"}
