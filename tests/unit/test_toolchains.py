"""``workbench info`` lists the compilers compile-check can use, each available or not with a reason."""

from __future__ import annotations

from workbench.cli.cmd_info import format_environment
from workbench.portable import compile_check, hip_check, toolchains, triton_catalog

NAMES = ["nvcc", "NVRTC", "hipcc", "triton (NVIDIA)", "triton (AMD)"]


def test_every_compiler_is_listed_with_availability_and_a_reason_when_missing(monkeypatch):
    monkeypatch.setattr(compile_check, "find_nvcc", lambda: None)
    monkeypatch.setattr(compile_check, "nvrtc_version", lambda: None)
    monkeypatch.setattr(hip_check, "find_hipcc", lambda: None)
    monkeypatch.setattr(triton_catalog, "triton_version", lambda: None)
    records = toolchains.toolchain_records()
    assert [r["name"] for r in records] == NAMES
    assert not any(r["available"] for r in records)
    assert all(r["reason"] for r in records)
    assert "apt-get install" in records[2]["reason"] and "pip install" in records[3]["reason"]


def test_found_compilers_are_available_with_their_versions(monkeypatch):
    monkeypatch.setattr(compile_check, "find_nvcc", lambda: "/opt/cuda/bin/nvcc")
    monkeypatch.setattr(compile_check, "nvcc_version", lambda path: "13.0 (V13.0.88)")
    monkeypatch.setattr(hip_check, "find_hipcc", lambda: hip_check.HipCompiler("/usr/bin/hipcc", "5.2", "15.0.6"))
    nvcc, _, hipcc = (toolchains._nvcc(), toolchains._nvrtc(), toolchains._hipcc())
    assert nvcc["available"] and nvcc["version"] == "13.0 (V13.0.88)" and nvcc["path"] == "/opt/cuda/bin/nvcc"
    assert hipcc["available"] and hipcc["version"] == "5.2 (LLVM 15.0.6)"


def test_a_probe_that_raises_is_listed_not_fatal(monkeypatch):
    def broken():
        raise OSError("permission denied")

    monkeypatch.setattr(compile_check, "find_nvcc", broken)
    (nvcc,) = [r for r in toolchains.toolchain_records() if r["name"] == "nvcc"]
    assert not nvcc["available"] and "permission denied" in nvcc["reason"]


def test_info_prints_a_compilers_section_only_when_they_were_probed():
    env = {"backends": [], "toolchains": [{"name": "hipcc", "available": False, "version": None,
                                           "targets": "gfxNNN", "reason": "not found (apt-get install hipcc)"}]}
    text = format_environment(env)
    assert "Compilers (workbench compile-check" in text
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("hipcc"))
    assert " no " in line and "apt-get install hipcc" in line
    assert "Compilers" not in format_environment({"backends": []})
