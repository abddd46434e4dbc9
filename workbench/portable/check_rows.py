"""The rows and facts every compile check shares (NVIDIA through nvcc/NVRTC, AMD through hipcc): a unit to
compile, a diagnostic, a kernel's row, and which kernels declare shared memory. Kept apart so that the
NVIDIA and AMD checkers both build on it without importing each other."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from workbench.core.record import JsonObject
from workbench.portable.source import Defines, DefineValue

DEFAULT_TIMEOUT_S = 180.0
_KERNEL_DEF = re.compile(r"\bKERNEL\s+void\s+(?P<name>[A-Za-z_]\w*)\s*\(")
_SHARED_DECL = re.compile(r"\bSHARED\s+\w")  # SHARED_PTR has no space after SHARED
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


@dataclass
class Diagnostic:
    file: str | None
    line: int | None
    severity: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: " if self.file and self.line else (f"{self.file}: " if self.file else "")
        return f"{where}{self.severity}: {self.message}"


@dataclass
class KernelRow:
    """One (file, kernel, arch) line of the report."""

    file: str
    kernel: str | None
    arch: str
    dtype: str
    variants: list[str]
    defines: Defines
    tool: str
    registers: int | None = None
    spill_stores: int | None = None
    spill_loads: int | None = None
    smem_bytes: int | None = None
    stack_bytes: int | None = None
    declares_shared: bool = False
    ptx_shared: bool | None = None
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: AMD only (hipcc remarks): scalar and accumulation registers, spill counts (registers, not bytes),
    #: occupancy in waves per SIMD. On AMD rows ``registers`` is VGPRs, ``smem_bytes`` LDS per block and
    #: ``stack_bytes`` scratch per lane.
    sgprs: int | None = None
    agprs: int | None = None
    sgpr_spills: int | None = None
    vgpr_spills: int | None = None
    occupancy: int | None = None
    #: Why this target or compiler could not be checked here (not a failure of the source).
    skipped: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> JsonObject:
        return {**asdict(self), "ok": self.ok}


@dataclass(frozen=True)
class Unit:
    """One compile: a source with its build-time defines, for the variants that share them."""

    source: Path
    defines: tuple[tuple[str, DefineValue], ...]
    variants: tuple[str, ...]
    registered: bool = True


# -- what to compile -------------------------------------------------------------------------------


def _function_bodies(text: str, header: re.Pattern) -> dict[str, str]:
    """Name -> body text for each brace-delimited definition whose header matches ``header``."""
    bodies = {}
    for m in header.finditer(text):
        start = text.find("{", m.end())
        if start < 0:
            continue
        depth, i = 0, start
        while i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        bodies[m.group("name")] = text[start:i + 1]
    return bodies


def kernels_declaring_shared(source_text: str) -> dict[str, bool]:
    """For each ``KERNEL`` in a rendered source: does its body declare a ``SHARED`` array?"""
    code = _COMMENTS.sub(" ", source_text)
    return {name: bool(_SHARED_DECL.search(body)) for name, body in _function_bodies(code, _KERNEL_DEF).items()}


def ptx_uses_shared(ptx: str) -> dict[str, bool]:
    """For each ``.entry`` in PTX: does its body touch the ``.shared`` state space?"""
    header = re.compile(r"\.entry\s+(?P<name>[A-Za-z_$][\w$]*)\s*\(")
    return {name: ".shared" in body for name, body in _function_bodies(ptx, header).items()}


def _display(path: str, relative_to: Path | None) -> str:
    if path.startswith("<"):
        return path
    try:
        return str(Path(path).resolve().relative_to((relative_to or Path.cwd()).resolve()))
    except ValueError:
        return path


# -- the check ------------------------------------------------------------------------------------


def find_tool(name: str, env_roots: tuple[str, ...], default_root: str) -> str | None:
    """``name`` on the PATH, else ``<root>/bin/<name>`` under the first of ``$env_roots`` (then
    ``default_root``) where it is an executable file; None when absent. CUDA and ROCm install outside the PATH."""
    found = shutil.which(name)
    if found:
        return found
    for root in filter(None, (*(os.environ.get(v) for v in env_roots), default_root)):
        cand = Path(root) / "bin" / name
        if cand.is_file() and os.access(cand, os.X_OK):
            return str(cand)
    return None


def kernel_rows(unit: Unit, rows: list[KernelRow]) -> list[KernelRow]:
    """``rows`` of ``unit``, saying so on each row when no variant registers its source (a ``.cu`` file found in
    the catalog and compiled with default defines)."""
    if not unit.registered:
        for row in rows:
            row.variants = ["(not registered by any variant; compiled with default defines)"]
    return rows
