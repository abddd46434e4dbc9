"""The compilers ``workbench compile-check`` can use here (rung 4), each available or not with a reason, for
``workbench info``: nvcc, NVRTC, hipcc and Triton's NVIDIA and AMD code generators.

Triton is found without being imported: importing its LLVM into a process that has opened a lavapipe Vulkan
adapter crashes it, and ``workbench info`` probes Vulkan in the same process.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TypedDict

from workbench.portable import compile_check, hip_check, triton_catalog

CUDA_HINT = "install the CUDA toolkit, or pip install 'nvidia-cuda-nvrtc==13.0.*' cupy-cuda13x"


class ToolchainRecord(TypedDict):
    """One compiler in ``workbench info`` and the environment record's ``toolchains``."""

    name: str
    available: bool
    version: str | None
    targets: str
    path: str | None
    #: Why it is unavailable ("" when available).
    reason: str


def _record(name: str, version: str | None, targets: str, reason: str = "", path: str | None = None
            ) -> ToolchainRecord:
    return {"name": name, "available": version is not None and not reason, "version": version, "targets": targets,
            "path": path, "reason": reason}


def _nvcc() -> ToolchainRecord:
    path = compile_check.find_nvcc()
    if not path:
        return _record("nvcc", None, "sm_XX (portable C as CUDA)", f"not on the PATH ({CUDA_HINT})")
    return _record("nvcc", compile_check.nvcc_version(path), "sm_XX (portable C as CUDA)", path=path)


def _nvrtc() -> ToolchainRecord:
    found = compile_check.nvrtc_version()
    return _record("NVRTC", found, "sm_XX (portable C as CUDA; used when nvcc is absent)",
                   "" if found else f"not loadable through CuPy ({CUDA_HINT})")


def _hipcc() -> ToolchainRecord:
    hip = hip_check.find_hipcc()
    targets = "gfxNNN (portable C as HIP), the targets its LLVM knows"
    if hip is None:
        return _record("hipcc", None, targets, f"not found ({hip_check.HIP_INSTALL_HINT})")
    return _record("hipcc", f"{hip.hip_version} (LLVM {hip.llvm_version})", targets, path=hip.path)


def _triton_backends() -> list[ToolchainRecord]:
    version = triton_catalog.triton_version()
    nvidia_targets = "sm_XX (Triton kernels, through its bundled ptxas)"
    amd_targets = "gfx908/gfx90a/gfx942/gfx950, gfx11xx/gfx12xx (Triton kernels)"
    if version is None:
        why = f"triton is not installed ({triton_catalog.TRITON_HINT})"
        return [_record("triton (NVIDIA)", None, nvidia_targets, why), _record("triton (AMD)", None, amd_targets, why)]
    spec = importlib.util.find_spec("triton")
    root = Path(next(iter(spec.submodule_search_locations or []), "")) if spec else Path()
    ptxas = root / "backends" / "nvidia" / "bin" / "ptxas"
    amd = root / "backends" / "amd" / "compiler.py"
    return [_record("triton (NVIDIA)", version, nvidia_targets,
                    "" if ptxas.is_file() else "this triton build has no NVIDIA backend (no bundled ptxas)",
                    path=str(ptxas) if ptxas.is_file() else None),
            _record("triton (AMD)", version, amd_targets,
                    "" if amd.is_file() else "this triton build has no AMD backend")]


def toolchain_records() -> list[ToolchainRecord]:
    """One record per compiler: name, available, version, targets, path and the reason when unavailable."""
    records = []
    for probe in (_nvcc, _nvrtc, _hipcc):
        try:
            records.append(probe())
        except Exception as exc:  # noqa: BLE001 - a broken toolchain is listed with its error
            records.append(_record(probe.__name__.strip("_"), None, "-", f"{type(exc).__name__}: {exc}"))
    try:
        records += _triton_backends()
    except Exception as exc:  # noqa: BLE001
        records.append(_record("triton", None, "-", f"{type(exc).__name__}: {exc}"))
    return records
