"""Quiet success: ``workbench verify`` prints each cell once (a kernel x backend table), groups what could not
run, counts skipped compiled variants; ``workbench info`` fits 100 columns and reuses its probe while
nothing it depends on changed."""

from __future__ import annotations

import io

from workbench.cli import cmd_info, cmd_verify
from workbench.sweep.verification import Skipped, VerifyResult, VerifyResults

CUPY_WHY = "no available backend runs cupy (cupy: no CUDA device/driver: CUDARuntimeError: insufficient (cupy 14.2.0))"


def _results() -> VerifyResults:
    rows = [VerifyResult(k, v, b, "float32", "ok", 1e-7, 1e-5, {"n": 7}, 0, "", 0.2, 3)
            for k in ("saxpy", "softmax") for v, b in (("numpy", "numpy"), ("numba", "numba"))]
    rows.append(VerifyResult("softmax", "portable", "opencl-0", "float32", "incorrect", 0.5, 1e-5, {"n": 7}, 1,
                             "max error 0.5", 0.3, 3))
    rows += [VerifyResult(k, "cupy", "cupy", "float32", "unsupported", message=CUPY_WHY)
             for k in ("saxpy", "softmax", "gemm")]
    rows.append(VerifyResult("gemm", "wgsl", "vulkan", "float64", "unsupported",
                             message="variant 'wgsl' implements float32, not float64"))
    skipped = [Skipped(k, "torch-compile", "compiled variant (use include_compiled)") for k in ("saxpy", "softmax")]
    return VerifyResults(rows, skipped)


def test_verify_prints_each_cell_once_and_groups_what_did_not_run():
    text = cmd_verify.format_results(_results())
    lines = text.splitlines()
    table = lines[1:lines.index("")]
    assert table[0].split() == ["kernel", "numpy", "numba", "opencl-0", "vulkan"]  # no column for cupy
    assert table[1].split() == ["saxpy", "ok", "ok", "-", "-"]
    assert table[2].split() == ["softmax", "ok", "ok", "0/1", "-"]
    assert table[3].split() == ["gemm", "-", "-", "-", "0/1"]
    cupy = [ln for ln in lines if ln.strip().startswith("cupy:")]
    assert len(cupy) == 1 and "3 variant(s) of 3 kernel(s)" in cupy[0] and cupy[0].endswith("(cupy 14.2.0)")
    assert sum("cupy" in ln for ln in lines) == 1  # the reason once, not once per kernel
    assert "Skipped 2 compiled (torch.compile) variants of 2 kernels" in text and "--include-compiled" in text
    assert "torch-compile" not in text  # by count, not by name
    assert "softmax/portable on opencl-0 (float32) incorrect" in text and "verification FAILED" in text
    assert not any(ln.split()[-1:] == ["s"] for ln in lines)  # no column headed only "s"


def test_verify_details_list_every_cell_with_seconds():
    text = cmd_verify.format_results(_results(), details=True)
    header = next(ln for ln in text.splitlines() if ln.startswith("kernel") and "variant" in ln)
    assert header.split()[-1] == "seconds"


def test_verify_progress_in_a_log_is_rate_limited():
    out = io.StringIO()
    progress = cmd_verify._Progress(out)
    for row in _results():
        progress(row)
    progress.close()
    assert out.getvalue() == ""  # under 10 s: nothing; the cells are printed once, in the summary
    progress.last -= 11
    progress(_results()[0])
    assert out.getvalue().startswith("verify: 10 cells checked, 1 failed")


def test_info_fits_100_columns():
    env = {"backends": [
        {"name": "numpy", "runtime": "numpy", "available": True,
         "device": {"name": "Intel(R) Xeon(R) Processor", "kind": "cpu", "total_memory_bytes": 2**34,
                    "versions": {"numpy": "2.4.6"}}},
        {"name": "torch-cuda", "runtime": "torch", "available": False,
         "reason": "torch 2.13.0+cpu was built without CUDA; install a CUDA/ROCm build (see pytorch.org) " * 2}],
        "toolchains": [{"name": "hipcc", "available": True, "version": "5.2.21153-0 (LLVM 15.0.6)",
                        "targets": "gfxNNN (portable C as HIP), the targets its LLVM knows", "path": "/usr/bin/hipcc"}],
        "host": {"cpu_model": "Intel(R) Xeon(R) Processor " * 3, "simd": ["avx2"] * 30},
        "packages": {f"package{i}": "1.0.0" for i in range(40)}, "probed_at": "2026-11-25T21:00:00+0000"}
    lines = cmd_info.format_environment(env).splitlines()
    assert max(map(len, lines)) <= cmd_info.WIDTH
    rows = {ln.split()[0]: ln for ln in lines[2:6] if ln.startswith("  ") and ln.split()}
    assert rows["numpy"].split()[1] == "yes" and rows["torch-cuda"].split()[1] == "no"
    assert any("--refresh" in ln for ln in lines)


def test_info_reuses_its_probe_until_something_changes(tmp_path, monkeypatch):
    from workbench.portable import toolchains
    from workbench.store import environment

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    calls = []
    monkeypatch.setattr(environment, "backend_records", lambda probe_all=False: calls.append(1) or [{"name": "x"}])
    monkeypatch.setattr(toolchains, "toolchain_records", lambda: [])
    first = cmd_info.probed_backends({"numpy": "2.4.6"})
    again = cmd_info.probed_backends({"numpy": "2.4.6"})
    assert first == again and len(calls) == 1
    cmd_info.probed_backends({"numpy": "2.5.0"})  # a package changed: probed again
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")  # a variable a runtime reads changed: probed again
    cmd_info.probed_backends({"numpy": "2.5.0"})
    cmd_info.probed_backends({"numpy": "2.5.0"}, refresh=True)
    assert len(calls) == 4
