"""The catalog's Triton kernels in the compile-check table: each ``COMPILE`` entry of every loaded
``triton_variants.py``, compiled for each requested sm_XX / gfxNNN target (rung 4, no GPU needed).

Compiles run in child processes (``python -m workbench.portable._triton_worker``), one per kernel folder,
for three reasons: ``TRITON_INTERPRET=1`` (set for the interpreter backend) turns ``triton.jit`` into an
interpreted function that cannot be compiled; importing triton's LLVM into a process that has opened a
lavapipe Vulkan adapter crashes it; and Triton's MLIR pipeline prints failures straight to the C stderr.

Rows are the portable check's :class:`~workbench.portable.check_rows.KernelRow`, with ``tool`` "triton",
so the one table shows portable C and Triton side by side.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TypedDict

from workbench.core.status import Status
from workbench.portable.check_rows import KernelRow
from workbench.portable.source import DefineValue

TRITON_HINT = "pip install 'kernel-workbench[triton]'"
VARIANTS_FILE = "triton_variants.py"


class _WorkerRowKey(TypedDict):
    kernel: str
    target: str
    status: str


class WorkerRow(_WorkerRowKey, total=False):
    """One compile as the worker (:mod:`workbench.portable._triton_worker`) prints it in JSON: a
    :class:`~workbench.portable.triton_check.TritonCompileRow` and what its ``COMPILE`` entry adds (label,
    constexprs with ``num_warps``, dtype, the folder's Triton variants, seconds taken)."""

    n_regs: int | None
    n_spills: int | None
    shared: int | None
    sgprs: int | None
    compiler: str
    message: str
    spill_loads: int | None
    stack: int | None
    agprs: int | None
    sgpr_spills: int | None
    vgpr_spills: int | None
    label: str
    constexprs: dict[str, DefineValue]
    dtype: str
    variants: list[str]
    seconds: float


def triton_version() -> str | None:
    """The installed triton's version, found without importing it (see the module docstring); None if absent."""
    try:
        if importlib.util.find_spec("triton") is None:
            return None
    except (ImportError, ValueError):
        return None
    try:
        return version("triton")
    except PackageNotFoundError:
        return "unknown"


def unsupported_reason(arch: str) -> str | None:
    """Why Triton cannot compile for ``arch`` at all, or None. Triton's AMD backend targets CDNA (gfx908,
    gfx90a, gfx942, gfx950) and RDNA3/4 (gfx11xx, gfx12xx): RDNA1/2 (gfx10xx) fail in its pipeline
    (triton 3.9: ``ConvertWarpPipeline`` on gfx1030), and older GCN has no backend support."""
    m = re.fullmatch(r"gfx(\d+)[0-9a-f]{2}", arch)
    if m and int(m.group(1)) == 10:
        return f"Triton's AMD backend does not target RDNA1/2 ({arch}); it compiles gfx908/gfx90a/gfx942/gfx950 " \
               "and gfx11xx/gfx12xx"
    if m and int(m.group(1)) < 9:
        return f"Triton's AMD backend does not target {arch} (pre-CDNA)"
    return None


def folders_with_triton(folders: list[str], kernels: str | Iterable[str] | None = None) -> list[Path]:
    """Loaded catalog folders that hold Triton variants (``kernels``: only the folders of those names)."""
    wanted = {kernels} if isinstance(kernels, str) else set(kernels) if kernels is not None else None
    return [Path(f) for f in folders
            if (Path(f) / VARIANTS_FILE).is_file() and (wanted is None or Path(f).name in wanted)]


def check_catalog(archs: list[str], folders: list[str], kernel: str | Iterable[str] | None = None,
                  jobs: int | None = None,
                  timeout: float = 180.0, relative_to: Path | None = None) -> list[KernelRow]:
    """Compile every ``COMPILE`` entry of the Triton variants in ``folders`` for each arch in ``archs``."""
    found = triton_version()
    targets = [a for a in archs if not unsupported_reason(a)]
    skipped = [_skipped(a, unsupported_reason(a) or "") for a in archs if unsupported_reason(a)]
    if found is None:
        return [_skipped(a, f"triton is not installed: {TRITON_HINT}") for a in archs]
    todo = folders_with_triton(folders, kernel)
    if not targets or not todo:
        return skipped
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda f: _compile_folder(f, targets, timeout, relative_to), todo))
    return skipped + [row for rows in results for row in rows]


def _compile_folder(folder: Path, archs: list[str], timeout: float, relative_to: Path | None) -> list[KernelRow]:
    display = _display(folder / VARIANTS_FILE, relative_to)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    cmd = [sys.executable, "-m", "workbench.portable._triton_worker", str(folder), ",".join(archs)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout * max(1, len(archs)), env=env)
    except subprocess.TimeoutExpired:
        return [_failed(display, a, f"triton compile timed out after {timeout * len(archs):.0f} s") for a in archs]
    last = done.stdout.strip().splitlines()[-1:] if done.stdout.strip() else []
    try:
        payload = json.loads(last[0]) if last else None
    except json.JSONDecodeError:
        payload = None
    if done.returncode != 0 or not isinstance(payload, dict):
        why = (done.stderr.strip() or done.stdout.strip())[-1500:] or f"exit code {done.returncode}"
        return [_failed(display, a, f"triton compile worker failed: {why}") for a in archs]
    if payload.get("error"):
        return [_failed(display, a, payload["error"]) for a in archs]
    return [_row(display, r) for r in payload["rows"]]


def _row(display: str, r: WorkerRow) -> KernelRow:
    kernel = r["kernel"] + (f" ({r['label']})" if r.get("label") else "")
    row = KernelRow(file=display, kernel=kernel, arch=r["target"], dtype=r.get("dtype") or "-",
                    variants=r.get("variants") or [], defines=r.get("constexprs") or {}, tool="triton",
                    registers=r.get("n_regs"), smem_bytes=r.get("shared"), stack_bytes=r.get("stack"),
                    seconds=r.get("seconds", 0.0))
    if r["target"].startswith("gfx"):
        row.sgprs, row.agprs = r.get("sgprs"), r.get("agprs")
        row.sgpr_spills, row.vgpr_spills = r.get("sgpr_spills"), r.get("vgpr_spills")
    else:
        row.spill_stores, row.spill_loads = r.get("n_spills"), r.get("spill_loads")
    if r["status"] != Status.OK:
        row.problems.append(r.get("message") or "compile failed")
    elif row.registers is None:
        row.problems.append("no register count in the compiled kernel (ptxas -v / AMDHSA metadata)")
    elif r.get("n_spills"):
        row.problems.append(f"register spills: {r['n_spills']} " + ("(SGPRs + VGPRs)" if r["target"].startswith("gfx")
                                                                    else "bytes stored"))
    return row


def _skipped(arch: str, why: str) -> KernelRow:
    return KernelRow(file="(triton)", kernel=None, arch=arch, dtype="-", variants=[], defines={}, tool="triton",
                     skipped=why)


def _failed(display: str, arch: str, why: str) -> KernelRow:
    return KernelRow(file=display, kernel=None, arch=arch, dtype="-", variants=[], defines={}, tool="triton",
                     problems=[why])


def _display(path: Path, relative_to: Path | None) -> str:
    try:
        return str(path.resolve().relative_to((relative_to or Path.cwd()).resolve()))
    except ValueError:
        return str(path)
