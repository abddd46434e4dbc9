"""Compile a Triton kernel for NVIDIA and AMD GPUs without a GPU, and report registers, spills and shared memory.

``triton.compile(ASTSource(...), target=GPUTarget(...))`` runs Triton's whole pipeline (ttir, ttgir,
llir, then ptx/cubin or amdgcn/hsaco) with no driver. The compiled metadata carries ``shared``; its
``n_regs``/``n_spills`` are filled only when a driver loads the binary, so here they come from the
binaries: ``ptxas -v`` (the copy bundled with triton) on the PTX for NVIDIA, the AMDHSA kernel metadata in
the amdgcn text for AMD. Kernels compiled this way must be defined at module level in a file (not under
``TRITON_INTERPRET=1``, where ``triton.jit`` gives an interpreted function).

Targets are named like the compile-check's: ``sm_80``, ``sm_90``, ``gfx90a``, ``gfx942``.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from workbench.core.record import JsonObject
from workbench.core.status import Status
from workbench.portable.source import DefineValue

TARGETS = ("sm_80", "sm_90", "gfx90a", "gfx942")


@dataclass(frozen=True)
class TritonCompile:
    """One GPU compile of a catalog Triton kernel, declared beside its variant in ``triton_variants.py``::

        COMPILE = (TritonCompile(_kernel, {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                                 {"BLOCK": 1024}),)

    ``kernel`` is the variant's factory (it imports triton lazily and returns the ``@triton.jit``
    function; an autotuned kernel's factory returns ``.fn``, with one entry per config). The signature
    names every argument's Triton type (``*fp32``, ``i32``, ``fp32``, ``constexpr``), and ``constexprs``
    gives the compile-time values the variant launches with at a representative size.
    """

    kernel: Callable[[], Any]
    signature: Mapping[str, str]
    constexprs: Mapping[str, DefineValue] = field(default_factory=dict)
    num_warps: int = 4
    #: What distinguishes this entry from the kernel's others (e.g. an autotune config), shown in the table.
    label: str = ""


@dataclass
class TritonCompileRow:
    kernel: str
    target: str
    status: str  # ok | error
    n_regs: int | None = None  # registers per thread (NVIDIA) / VGPRs (AMD)
    n_spills: int | None = None  # bytes of spill stores (NVIDIA) / spilled VGPRs + SGPRs (AMD)
    shared: int | None = None  # bytes of shared memory (LDS on AMD)
    sgprs: int | None = None  # AMD only
    compiler: str = "triton"
    message: str = ""
    spill_loads: int | None = None  # NVIDIA: bytes of spill loads
    stack: int | None = None  # stack frame (NVIDIA) / scratch (AMD) bytes per thread
    agprs: int | None = None  # AMD only (CDNA accumulation registers)
    sgpr_spills: int | None = None  # AMD only
    vgpr_spills: int | None = None  # AMD only

    def to_dict(self) -> JsonObject:
        return asdict(self)


def gpu_target(target: str) -> Any:
    """``sm_90`` -> GPUTarget("cuda", 90, 32); ``gfx90a`` -> GPUTarget("hip", "gfx90a", 64)."""
    from triton.backends.compiler import GPUTarget

    if target.startswith("sm_"):
        return GPUTarget("cuda", int(target[3:].rstrip("a")), 32)
    if target.startswith("gfx"):
        return GPUTarget("hip", target, 32 if target.startswith(("gfx10", "gfx11", "gfx12")) else 64)
    raise ValueError(f"unknown target {target!r}: use sm_XY or gfxNNN")


def _ptxas_candidates() -> list[str]:
    """triton's bundled ptxas builds: the PTX triton emits for some arches needs the newer one."""
    import triton.backends.nvidia as nv

    bin_dir = os.path.join(os.path.dirname(nv.__file__), "bin")
    return [p for p in (os.path.join(bin_dir, n) for n in ("ptxas", "ptxas-blackwell")) if os.path.exists(p)]


def _nvidia_usage(ptx: str) -> dict[str, int | None]:
    """Registers, spill-store and spill-load bytes and stack frame from ``ptxas -v`` on the kernel's PTX."""
    arch = re.search(r"^\.target\s+(sm_\w+)", ptx, re.M)
    text, failures = "", []
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        for ptxas in _ptxas_candidates():
            out = subprocess.run([ptxas, "-v", f"--gpu-name={arch.group(1) if arch else 'sm_90'}", src,
                                  "-o", os.path.join(d, "k.cubin")], capture_output=True, text=True, timeout=120)
            if out.returncode == 0:
                text = out.stdout + out.stderr
                break
            failures.append(f"{os.path.basename(ptxas)}: {(out.stdout + out.stderr).strip()[-300:]}")
        else:
            raise RuntimeError("ptxas failed: " + " | ".join(failures or ["no ptxas bundled with triton"]))
    def number(pattern: str) -> int | None:
        m = re.search(pattern, text)
        return int(m.group(1)) if m else None

    return {"n_regs": number(r"Used (\d+) registers"), "n_spills": number(r"(\d+) bytes spill stores"),
            "spill_loads": number(r"(\d+) bytes spill loads"), "stack": number(r"(\d+) bytes stack frame")}


def _amd_usage(amdgcn: str) -> dict[str, int | None]:
    """VGPRs, SGPRs, AGPRs, spilled VGPRs/SGPRs and scratch from the AMDHSA metadata in the amdgcn text."""
    def field(name: str) -> int | None:
        m = re.search(rf"\.{name}:\s+(\d+)", amdgcn)
        return int(m.group(1)) if m else None

    vs, ss = field("vgpr_spill_count"), field("sgpr_spill_count")
    return {"n_regs": field("vgpr_count"), "sgprs": field("sgpr_count"), "agprs": field("agpr_count"),
            "vgpr_spills": vs, "sgpr_spills": ss, "stack": field("private_segment_fixed_size"),
            "n_spills": None if vs is None and ss is None else (vs or 0) + (ss or 0)}


def compile_triton(fn: Any, signature: dict[str, str], constexprs: dict[str, DefineValue], target: str,
                   num_warps: int = 4) -> TritonCompileRow:
    """Compile the ``@triton.jit`` function ``fn`` for ``target``; errors become a row with the message."""
    name = getattr(fn, "__name__", None) or getattr(getattr(fn, "fn", None), "__name__", "kernel")
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # triton 3.9 warns when it is unset
    try:
        import triton
        from triton.compiler import ASTSource

        compiled = triton.compile(ASTSource(fn=fn, signature=signature, constexprs=constexprs),
                                  target=gpu_target(target), options={"num_warps": num_warps})
        md = compiled.metadata
        row = TritonCompileRow(kernel=name, target=target, status=Status.OK, shared=int(md.shared))
        usage = (_nvidia_usage(compiled.asm["ptx"]) if "ptx" in compiled.asm
                 else _amd_usage(compiled.asm["amdgcn"]) if "amdgcn" in compiled.asm else {})
        for key, value in usage.items():
            setattr(row, key, value)
        return row
    except Exception as exc:  # noqa: BLE001 - a failed compile is a row, not a crash of the whole check
        return TritonCompileRow(kernel=name, target=target, status=Status.ERROR, message=f"{type(exc).__name__}: {exc}")
