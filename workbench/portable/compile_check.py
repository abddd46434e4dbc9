"""Rung 4: compile every portable source for real NVIDIA and AMD targets, without a GPU, and report resources.

AMD (``gfx*``) targets are compiled as HIP by :mod:`workbench.portable.hip_check`
into the same rows; what follows describes the NVIDIA (``sm_*``) path.

For each registered portable program (and any ``.cu`` in the catalog that no
variant registers) and each architecture, the CUDA rendering that CuPy would
compile (same prelude, same ``#define``s, ``WARP_SIZE`` 32 as on every NVIDIA
GPU) is compiled to a cubin with ``ptxas -v``: by ``nvcc -cubin -Xptxas -v``
when nvcc is on the PATH, otherwise by NVRTC (``--ptxas-options=-v``) in a
worker process. Compiling to a cubin, not just PTX, is what checks resource
limits (``--ptx`` accepts 64 KB of static shared memory; ptxas does not).

Per kernel we report registers, spill stores/loads, static shared memory and
stack, and check that a kernel that declares ``SHARED`` arrays really got
``.shared`` state in its PTX: a ``SHARED`` macro that expanded to nothing
turns the array into thread-private local memory, silently, and the kernel
still compiles. Compiler diagnostics are mapped back to the ``.cu`` file and
line through the ``#line`` directives of :func:`~workbench.portable.source.render`.

CUDA drivers are never touched: compiles run in subprocesses with timeouts
(FIELD-NOTES: a driver call gone wrong can hang a compile forever).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.catalog.loader import builtin_catalog_path, ensure_default_catalog
from workbench.portable import cupy_nvrtc, hip_check
from workbench.portable.check_rows import (
    DEFAULT_TIMEOUT_S,
    Diagnostic,
    KernelRow,
    Unit,
    _display,
    find_tool,
    kernel_rows,
    kernels_declaring_shared,
    ptx_uses_shared,
)
from workbench.portable.prelude import prelude
from workbench.portable.program import DEFAULT_BLOCK, PortableProgram, programs
from workbench.portable.runtimes import runtimes_compiling_for
from workbench.portable.source import render

DEFAULT_ARCHS = ("sm_80", "sm_90")
#: Warp width of every NVIDIA architecture; passed as WARP_SIZE exactly as the CuPy builder does.
NVIDIA_WARP_SIZE = 32
#: Same options the CuPy builder gives NVRTC (:data:`workbench.backends.cupy_portable.CUPY_OPTIONS`).
CUDA_STD = "-std=c++17"

_DIAG = re.compile(r'^"?(?P<file>[^"\n]+?)"?\((?P<line>\d+)\): (?P<sev>catastrophic error|error|warning)'
                   r"(?: #[\w-]+)?: (?P<msg>.*)$")
_PTXAS_ERR = re.compile(r"^ptxas (?:error|fatal)\s*: (?P<msg>.*)$")
_ENTRY = re.compile(r"Compiling entry function '(?P<name>[^']+)' for '(?P<arch>[^']+)'")
_PROPS = re.compile(r"Function properties for (?P<name>\S+)")
_FRAME = re.compile(r"(?P<stack>\d+) bytes stack frame, (?P<st>\d+) bytes spill stores, (?P<ld>\d+) bytes spill loads")
_USED = re.compile(r"Used (?P<regs>\d+) registers(?:.*?(?P<smem>\d+) bytes smem)?")


def units_from_catalog(kernel: str | None = None, catalog_dirs: Iterable[Path] | None = None) -> list[Unit]:
    """Every CUDA-targeted portable program (deduplicated by source and defines), plus unregistered ``.cu`` files."""
    ensure_default_catalog()
    return units_from(programs(), kernel, list(catalog_dirs or [builtin_catalog_path()]))


def units_from(progs: Iterable[PortableProgram], kernel: str | None, catalog_dirs: list[Path]) -> list[Unit]:
    grouped: dict[tuple[Path, tuple], list[str]] = {}
    cuda = runtimes_compiling_for("cuda")
    for p in progs:
        if cuda.isdisjoint(p.runtimes) or (kernel and p.kernel != kernel):
            continue
        defines = dict(p.defines, WARP_SIZE=NVIDIA_WARP_SIZE)
        grouped.setdefault((p.source, tuple(sorted(defines.items()))), []).append(f"{p.kernel}/{p.variant}")
    units = [Unit(src, d, tuple(v)) for (src, d), v in grouped.items()]
    seen = {u.source for u in units}
    for root in catalog_dirs:
        for cu in sorted(Path(root).glob("*/*.cu")):
            if cu.resolve() in seen or (kernel and cu.parent.name != kernel):
                continue
            defaults = {"BLOCK": DEFAULT_BLOCK, "WARP_SIZE": NVIDIA_WARP_SIZE}
            units.append(Unit(cu.resolve(), tuple(sorted(defaults.items())), (), registered=False))
    return sorted(units, key=lambda u: (str(u.source), u.defines))


# -- compilers ------------------------------------------------------------------------------------

def find_nvcc() -> str | None:
    return find_tool("nvcc", ("CUDA_PATH", "CUDA_HOME"), "/usr/local/cuda")


def nvrtc_version(timeout: float = 60.0) -> str | None:
    """NVRTC's version via CuPy's low-level binding, asked in a subprocess; None when it is not loadable."""
    try:
        r = subprocess.run([sys.executable, "-c", cupy_nvrtc.VERSION_CODE], capture_output=True, text=True,
                           timeout=timeout)
    except (subprocess.TimeoutExpired, OSError):
        return None
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None


def nvcc_version(nvcc: str) -> str:
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (subprocess.TimeoutExpired, OSError):
        return "unknown"
    m = re.search(r"release ([\d.]+), (V[\d.]+)", out)
    return f"{m.group(1)} ({m.group(2)})" if m else "unknown"


@dataclass
class Compiler:
    kind: str  # "nvcc" | "nvrtc"
    version: str
    path: str | None = None

    def describe(self) -> str:
        return f"{self.kind} {self.version}" + (f" ({self.path})" if self.path else "")


def find_compiler(prefer: str | None = None) -> Compiler | None:
    """nvcc if present (what CI has), else NVRTC; ``prefer`` forces one of them."""
    if prefer in (None, "nvcc"):
        nvcc = find_nvcc()
        if nvcc:
            return Compiler("nvcc", nvcc_version(nvcc), nvcc)
        if prefer == "nvcc":
            return None
    version = nvrtc_version()
    return Compiler("nvrtc", version) if version else None


def _compile(compiler: Compiler, text: str, arch: str, workdir: Path, timeout: float
             ) -> tuple[bool, str, str | None]:
    """Compile ``text`` for ``arch``: (succeeded, compiler log, PTX text or None)."""
    src = workdir / "unit.cu"
    src.write_text(text)
    if compiler.kind == "nvcc":
        cmd = [compiler.path or "nvcc", CUDA_STD, f"-arch={arch}", "-cubin", "-Xptxas", "-v", "--keep",
               "--keep-dir", str(workdir), "-o", str(workdir / "unit.cubin"), str(src)]
    else:
        cmd = [sys.executable, "-m", cupy_nvrtc.__name__, arch, str(src), str(workdir / "unit.ptx")]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=workdir)
    except subprocess.TimeoutExpired:
        return False, f"ptxas fatal   : {compiler.kind} timed out after {timeout:.0f} s", None
    ptx_path = workdir / "unit.ptx"
    ptx = ptx_path.read_text() if ptx_path.is_file() else None
    return r.returncode == 0, r.stdout + r.stderr, ptx


# -- parsing ----------------------------------------------------------------------------------------

def parse_diagnostics(log: str, relative_to: Path | None = None) -> list[Diagnostic]:
    """Front-end diagnostics (``file(line): error: ...``) and ptxas errors, with files made relative."""
    out = []
    for line in log.splitlines():
        m = _DIAG.match(line.strip())
        if m:
            out.append(Diagnostic(_display(m.group("file"), relative_to), int(m.group("line")),
                                  "error" if "error" in m.group("sev") else "warning", m.group("msg").strip()))
            continue
        m = _PTXAS_ERR.match(line.strip())
        if m:
            out.append(Diagnostic(None, None, "error", "ptxas: " + m.group("msg").strip()))
    return out


def parse_ptxas(log: str) -> dict[str, dict[str, int]]:
    """Per entry function: registers, spill stores/loads, stack and static shared bytes from ``ptxas -v``."""
    stats: dict[str, dict[str, int]] = {}
    entries: set[str] = set()
    current: str | None = None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            entries.add(m.group("name"))
            current = m.group("name")
            stats.setdefault(current, {})
        elif m := _PROPS.search(line):
            current = m.group("name") if m.group("name") in entries else None
        elif (m := _FRAME.search(line)) and current:
            stats[current].update(stack=int(m.group("stack")), spill_stores=int(m.group("st")),
                                  spill_loads=int(m.group("ld")))
        elif (m := _USED.search(line)) and current:
            stats[current].update(registers=int(m.group("regs")), smem=int(m.group("smem") or 0))
    return stats


def check_unit(unit: Unit, arch: str, dtype: str, compiler: Compiler, *, prelude_override: str | None = None,
               timeout: float = DEFAULT_TIMEOUT_S, relative_to: Path | None = None) -> list[KernelRow]:
    """Compile one unit for one arch and return its kernel rows (one error row if it did not compile).

    ``prelude_override`` replaces the CUDA prelude (tests use it to show what an empty SHARED does).
    """
    defines = dict(unit.defines)
    text = render(unit.source, "cuda", dtype, defines)
    if prelude_override is not None:
        text = text.replace(prelude("cuda", dtype), prelude_override, 1)
    file = _display(str(unit.source), relative_to)
    base = dict(file=file, arch=arch, dtype=dtype, variants=list(unit.variants), defines=defines, tool=compiler.kind)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="wb-cc-") as tmp:
        ok, log, ptx = _compile(compiler, text, arch, Path(tmp), timeout)
    seconds = time.perf_counter() - t0
    errors = [d for d in parse_diagnostics(log, relative_to) if d.severity == "error"]
    if not ok or errors:
        problems = [str(d) for d in errors] or [f"{compiler.kind} failed: {log.strip()[-2000:]}"]
        return [KernelRow(kernel=None, problems=problems, seconds=seconds, **base)]
    stats = parse_ptxas(log)
    declared = kernels_declaring_shared(text)
    in_ptx = ptx_uses_shared(ptx) if ptx else {}
    rows = []
    for name in sorted(set(declared) | set(stats)):
        s = stats.get(name, {})
        row = KernelRow(kernel=name, registers=s.get("registers"), spill_stores=s.get("spill_stores"),
                        spill_loads=s.get("spill_loads"), smem_bytes=s.get("smem"), stack_bytes=s.get("stack"),
                        declares_shared=declared.get(name, False), ptx_shared=in_ptx.get(name) if ptx else None,
                        seconds=seconds, **base)
        if not s:
            row.problems.append("no ptxas resource report for this kernel (not compiled?)")
        if (row.spill_stores or 0) + (row.spill_loads or 0) > 0:
            row.problems.append(f"register spills: {row.spill_stores} bytes stored, {row.spill_loads} loaded")
        if row.declares_shared and (row.ptx_shared is False or row.smem_bytes == 0):
            row.problems.append("declares SHARED arrays but the PTX has no .shared state (smem "
                                f"{row.smem_bytes} bytes): they became thread-private local memory")
        rows.append(row)
    return kernel_rows(unit, rows)


def is_amd(arch: str) -> bool:
    return arch.startswith("gfx")


_NO_HIPCC = object()


def run_check(units: list[Unit], archs: Iterable[str], compiler: Compiler | None, *,
              dtypes: Iterable[str] = ("float32",), jobs: int | None = None, timeout: float = DEFAULT_TIMEOUT_S,
              relative_to: Path | None = None, hip: Any = _NO_HIPCC) -> list[KernelRow]:
    """Compile every (unit, arch, dtype) in parallel (one subprocess each); rows in a stable order.

    ``sm_*`` targets go to ``compiler`` (nvcc/NVRTC), ``gfx*`` targets to hipcc (``hip``: a
    :class:`~workbench.portable.hip_check.HipCompiler`, None for "absent", found on the PATH when not
    given). A missing compiler or a target it cannot build gives one skipped row per target with the reason.
    """
    archs, dtypes = list(archs), list(dtypes)
    if hip is _NO_HIPCC:
        hip = hip_check.find_hipcc() if any(is_amd(a) for a in archs) else None
    skipped: dict[str, KernelRow] = {}
    for a in archs:
        if not is_amd(a) and compiler is None:
            skipped[a] = KernelRow(file="(all portable sources)", kernel=None, arch=a, dtype="-", variants=[],
                                   defines={}, tool="-", skipped="neither nvcc nor NVRTC is available")
        elif is_amd(a) and hip is None:
            skipped[a] = hip_check.skipped_row(a, f"hipcc not found ({hip_check.HIP_INSTALL_HINT})")
    amd_live = [a for a in archs if is_amd(a) and a not in skipped]
    if amd_live:
        with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
            reasons = dict(zip(amd_live, pool.map(lambda a: hip_check.probe_arch(hip, a, timeout), amd_live),
                               strict=True))
        skipped.update({a: hip_check.skipped_row(a, r) for a, r in reasons.items() if r})

    def one(task):
        u, a, d = task
        if is_amd(a):
            return hip_check.check_unit(u, a, d, hip, timeout=timeout, relative_to=relative_to)
        return check_unit(u, a, d, compiler, timeout=timeout, relative_to=relative_to)

    tasks = [(u, a, d) for u in units for d in dtypes for a in archs if a not in skipped]
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
        results = list(pool.map(one, tasks))
    return [skipped[a] for a in archs if a in skipped] + [row for rows in results for row in rows]


# -- output ------------------------------------------------------------------------------------------

#: regs: registers per thread (NVIDIA) / VGPRs (AMD); spills: bytes stored/loaded (NVIDIA) / SGPRs/VGPRs
#: spilled (AMD); smem: static shared memory / LDS bytes per block; stack: stack frame / scratch bytes per
#: thread (lane); sgpr, agpr, occ (waves per SIMD): AMD only.
_COLUMNS = (("file", 44), ("kernel", 28), ("arch", 7), ("dtype", 7), ("tool", 6), ("regs", 4), ("sgpr", 4),
            ("agpr", 4), ("spills", 11), ("smem", 5), ("stack", 5), ("occ", 3), ("shared", 6), ("status", 0))


def _cells(row: KernelRow) -> list[str]:
    def num(v):
        return "-" if v is None else str(v)

    if row.declares_shared:
        shared = "yes" if (row.ptx_shared or (row.ptx_shared is None and row.smem_bytes)) else "NO"
    else:
        shared = "-"
    if row.sgpr_spills is not None or row.vgpr_spills is not None:
        spill = f"{num(row.sgpr_spills)}s/{num(row.vgpr_spills)}v"
    else:
        spill = "-" if row.spill_stores is None else f"{row.spill_stores}/{row.spill_loads}"
    if row.skipped:
        status = "SKIP: " + row.skipped
    else:
        status = "ok" if row.ok else "FAIL: " + "; ".join(row.problems)
    kernel = row.kernel or ("-" if row.skipped else "(compile)")
    return [row.file, kernel, row.arch, row.dtype, row.tool, num(row.registers), num(row.sgprs), num(row.agprs),
            spill, num(row.smem_bytes), num(row.stack_bytes), num(row.occupancy), shared, status]


def format_table(rows: list[KernelRow]) -> str:
    lines = ["  ".join(name.ljust(width) for name, width in _COLUMNS).rstrip()]
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, (_, w) in zip(_cells(row), _COLUMNS, strict=False)).rstrip())
    return "\n".join(lines)


def to_json(rows: list[KernelRow], compiler: Compiler | None, archs: list[str], hip: Any = None,
            triton: str | None = None) -> str:
    return json.dumps({"compiler": compiler.describe() if compiler else None,
                       "hip_compiler": hip.describe() if hip else None,
                       "triton": f"triton {triton}" if triton else None, "archs": archs,
                       "rows": [r.to_dict() for r in rows]}, indent=2)


def summary(rows: list[KernelRow]) -> Mapping[str, int]:
    spills = ("spill_stores", "spill_loads", "sgpr_spills", "vgpr_spills")
    return {"rows": len(rows), "failed": sum(not r.ok for r in rows),
            "spilling": sum(bool(sum(getattr(r, f) or 0 for f in spills)) for r in rows),
            "compile_errors": sum(r.kernel is None and not r.skipped for r in rows),
            "skipped": sum(bool(r.skipped) for r in rows)}
