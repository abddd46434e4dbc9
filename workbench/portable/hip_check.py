"""Rung 4 for AMD: compile the portable ``.cu`` sources as HIP for gfx targets with hipcc, no GPU needed.

Each unit is rendered with the ``hip`` prelude (what CuPy hands hipRTC on ROCm)
and ``WARP_SIZE`` set to the target's wavefront width (64 on gfx9/CDNA such as
gfx90a and gfx908, 32 on gfx10+/RDNA such as gfx1030, HIP's default there),
then compiled with::

    HIP_PLATFORM=amd hipcc --offload-arch=<gfx> --genco -O3 -std=c++17 \\
        -Rpass-analysis=kernel-resource-usage -include hip/hip_runtime.h unit.hip

``-include hip/hip_runtime.h`` stands in for what hipRTC provides implicitly
(``__global__``, ``__forceinline__``, ``threadIdx``, ``__shfl_xor``); the
rendered text itself is unchanged. ``HIP_PLATFORM=amd`` is needed because with
nvcc on the PATH hipcc picks the NVIDIA platform.

The ``remark:`` lines give, per kernel: SGPRs, VGPRs, AGPRs, scratch bytes per
lane, occupancy (waves per SIMD), SGPR/VGPR spill counts and LDS bytes per
block. They fill the same :class:`~workbench.portable.compile_check.KernelRow`
as the NVIDIA rows: ``registers`` is the VGPR count (per-thread registers, the
thing ptxas reports), ``smem_bytes`` the LDS size, ``stack_bytes`` the scratch
size (per-thread private memory, like ptxas's stack frame); SGPRs, AGPRs,
occupancy and the spill counts (registers, not bytes) are AMD-only fields.

A target the local compiler cannot build (gfx942 on LLVM 15, gfx1100 without
its device library) gives one skipped row with the compiler's reason, as does
a missing hipcc.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from workbench.portable.check_rows import (
    DEFAULT_TIMEOUT_S,
    Diagnostic,
    KernelRow,
    Unit,
    _display,
    find_tool,
    kernel_rows,
    kernels_declaring_shared,
)
from workbench.portable.source import render

HIP_INSTALL_HINT = "apt-get install --no-install-recommends hipcc libamdhip64-dev rocm-device-libs"
_CLANG_DIAG = re.compile(r"^(?P<file>[^:\n]+?):(?P<line>\d+):(?:\d+:)? (?P<sev>fatal error|error|warning): "
                         r"(?P<msg>.*)$")
_DRIVER_ERR = re.compile(r"^(?:clang|hipcc|clang-\d+|lld|ld\.lld)(?:\S*)?: (?:fatal )?error: (?P<msg>.*)$")
_REMARK = re.compile(r"remark: (?P<body>.*?)\s*\[-Rpass-analysis=kernel-resource-usage\]\s*$")
_REMARK_KV = re.compile(r"^\s*(?P<key>[^:]+?)(?: \[[^\]]*\])?: (?P<val>\S+)$")
#: Phrases of clang driver errors that mean "this compiler cannot build for that target", not a source bug.
_UNSUPPORTED = ("invalid target id", "cannot find rocm device library", "unknown target cpu",
                "unsupported cuda gpu architecture", "not a recognized processor")
#: remark key -> KernelRow field
_FIELDS = {"SGPRs": "sgprs", "VGPRs": "registers", "AGPRs": "agprs", "ScratchSize": "stack_bytes",
           "Occupancy": "occupancy", "SGPRs Spill": "sgpr_spills", "VGPRs Spill": "vgpr_spills",
           "LDS Size": "smem_bytes"}


@dataclass(frozen=True)
class HipCompiler:
    path: str
    hip_version: str
    llvm_version: str

    kind = "hipcc"

    def describe(self) -> str:
        return f"hipcc {self.hip_version} (LLVM {self.llvm_version}) ({self.path})"

    @property
    def short(self) -> str:
        return f"this hipcc (LLVM {self.llvm_version.split('.')[0]})"


def find_hipcc() -> HipCompiler | None:
    """hipcc on the PATH or under ``$ROCM_PATH``/``/opt/rocm``, with its HIP and LLVM versions; None if absent."""
    found = find_tool("hipcc", ("ROCM_PATH", "HIP_PATH"), "/opt/rocm")
    if not found:
        return None
    try:
        out = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60, env=_env())
        text = out.stdout + out.stderr
    except (subprocess.TimeoutExpired, OSError):
        text = ""
    hip = re.search(r"HIP version: (\S+)", text)
    llvm = re.search(r"clang version (\d+(?:\.\d+)*)", text)
    return HipCompiler(found, hip.group(1) if hip else "unknown", llvm.group(1) if llvm else "unknown")


def _env() -> dict[str, str]:
    return {**os.environ, "HIP_PLATFORM": "amd"}


def wave_size(arch: str) -> int:
    """Wavefront width HIP compiles for by default: 64 on gfx6-gfx9 (GCN, CDNA), 32 on gfx10 and later (RDNA)."""
    m = re.fullmatch(r"gfx(\d+)[0-9a-f]{2}(?::.*)?", arch)
    if not m:
        raise ValueError(f"not an AMD target: {arch!r} (expected e.g. gfx90a, gfx1030)")
    return 32 if int(m.group(1)) >= 10 else 64


def _hipcc_cmd(hip: HipCompiler, arch: str, src: Path, out: Path) -> list[str]:
    return [hip.path, f"--offload-arch={arch}", "--genco", "-O3", "-std=c++17",
            "-Rpass-analysis=kernel-resource-usage", "-include", "hip/hip_runtime.h", str(src), "-o", str(out)]


def _run(hip: HipCompiler, arch: str, text: str, timeout: float) -> tuple[bool, str]:
    with tempfile.TemporaryDirectory(prefix="wb-hip-") as tmp:
        src = Path(tmp) / "unit.hip"
        src.write_text(text)
        try:
            r = subprocess.run(_hipcc_cmd(hip, arch, src, Path(tmp) / "unit.hsaco"), capture_output=True,
                               text=True, timeout=timeout, cwd=tmp, env=_env())
        except subprocess.TimeoutExpired:
            return False, f"hipcc: error: timed out after {timeout:.0f} s"
        except OSError as e:
            return False, f"hipcc: error: {e}"
    return r.returncode == 0, r.stdout + r.stderr


def unsupported_reason(log: str, hip: HipCompiler) -> str | None:
    """'unsupported by this hipcc (LLVM 15): ...' when the driver refused the target itself, else None."""
    for line in log.splitlines():
        m = _DRIVER_ERR.match(line.strip())
        if m and any(p in m.group("msg").lower() for p in _UNSUPPORTED):
            msg = m.group("msg").split("; format is")[0].split("; provide its path")[0]
            return f"unsupported by {hip.short}: {msg}"
    return None


@functools.cache
def probe_arch(hip: HipCompiler, arch: str, timeout: float = DEFAULT_TIMEOUT_S) -> str | None:
    """Compile an empty kernel for ``arch``: None when the target works, else the reason it does not."""
    ok, log = _run(hip, arch, 'extern "C" __global__ void wb_probe(float* p) { p[threadIdx.x] = 0.0f; }\n',
                   timeout)
    if ok:
        return None
    return unsupported_reason(log, hip) or f"hipcc cannot build for {arch}: {log.strip()[-500:]}"


def parse_diagnostics(log: str, relative_to: Path | None = None) -> list[Diagnostic]:
    """clang's ``file:line:col: error: msg`` and driver errors, files made relative."""
    out = []
    for line in log.splitlines():
        line = line.strip()
        if m := _CLANG_DIAG.match(line):
            if m.group("file") in ("clang", "hipcc") or m.group("file").startswith("clang-"):
                continue
            out.append(Diagnostic(_display(m.group("file"), relative_to), int(m.group("line")),
                                  "warning" if m.group("sev") == "warning" else "error", m.group("msg").strip()))
        elif m := _DRIVER_ERR.match(line):
            out.append(Diagnostic(None, None, "error", "hipcc: " + m.group("msg").strip()))
    return out


def parse_remarks(log: str) -> dict[str, dict[str, int]]:
    """Per kernel, the ``kernel-resource-usage`` remarks as KernelRow field names -> numbers."""
    stats: dict[str, dict[str, int]] = {}
    current: str | None = None
    for line in log.splitlines():
        m = _REMARK.search(line)
        if not m:
            continue
        body = m.group("body")
        if body.startswith("Function Name:"):
            current = body.split(":", 1)[1].strip()
            stats.setdefault(current, {})
            continue
        kv = _REMARK_KV.match(body)
        if kv and current and kv.group("key") in _FIELDS:
            try:
                stats[current][_FIELDS[kv.group("key")]] = int(kv.group("val"))
            except ValueError:
                continue
    return stats


def skipped_row(arch: str, reason: str, dtype: str = "-") -> KernelRow:
    return KernelRow(file="(all portable sources)", kernel=None, arch=arch, dtype=dtype, variants=[], defines={},
                     tool="hipcc", skipped=reason)


def check_unit(unit: Unit, arch: str, dtype: str, hip: HipCompiler, *, timeout: float = DEFAULT_TIMEOUT_S,
               relative_to: Path | None = None) -> list[KernelRow]:
    """Compile one unit as HIP for one gfx target; kernel rows, or one error / skipped row."""
    defines = dict(unit.defines)
    if "WARP_SIZE" in defines:
        defines["WARP_SIZE"] = wave_size(arch)
    text = render(unit.source, "hip", dtype, defines)
    file = _display(str(unit.source), relative_to)
    base = dict(file=file, arch=arch, dtype=dtype, variants=list(unit.variants), defines=defines, tool="hipcc")
    t0 = time.perf_counter()
    ok, log = _run(hip, arch, text, timeout)
    seconds = time.perf_counter() - t0
    errors = [d for d in parse_diagnostics(log, relative_to) if d.severity == "error"]
    if not ok or errors:
        reason = unsupported_reason(log, hip)
        if reason:
            return [KernelRow(kernel=None, skipped=reason, seconds=seconds, **base)]
        problems = [str(d) for d in errors] or [f"hipcc failed: {log.strip()[-2000:]}"]
        return [KernelRow(kernel=None, problems=problems, seconds=seconds, **base)]
    stats = parse_remarks(log)
    declared = kernels_declaring_shared(text)
    rows = []
    for name in sorted(set(declared) | set(stats)):
        s = stats.get(name, {})
        row = KernelRow(kernel=name, declares_shared=declared.get(name, False), seconds=seconds, **base, **s)
        if not s:
            row.problems.append("no kernel-resource-usage remark for this kernel (not compiled?)")
        if (row.sgpr_spills or 0) + (row.vgpr_spills or 0) > 0:
            row.problems.append(f"register spills: {row.sgpr_spills} SGPRs, {row.vgpr_spills} VGPRs")
        if row.declares_shared and row.smem_bytes == 0:
            row.problems.append("declares SHARED arrays but the kernel got no LDS (0 bytes)")
        rows.append(row)
    return kernel_rows(unit, rows)
