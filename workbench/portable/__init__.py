"""Portable device kernels: one CUDA-C-subset source, compiled as CUDA (CuPy), HIP (CuPy on ROCm) and OpenCL.

``prelude`` holds the per-target macro text, ``source`` renders a ``.cu`` file
into a compilation unit, ``program`` registers variants, ``runtimes`` compiles
and launches them, ``compile_check`` builds them for real NVIDIA targets
without a GPU. Nothing here imports a GPU runtime at import time.
"""

from workbench.portable.prelude import DTYPES, TARGETS, prelude
from workbench.portable.program import (
    DEFAULT_BLOCK,
    Launch,
    PortableProgram,
    Scratch,
    cdiv,
    grid_2d,
    grid_stride,
    per_row,
    portable_here,
    portable_variant,
    programs,
)
from workbench.portable.source import kernel_names, render

__all__ = ["DEFAULT_BLOCK", "DTYPES", "Launch", "PortableProgram", "Scratch", "TARGETS", "cdiv", "grid_2d",
           "grid_stride", "kernel_names", "per_row", "portable_here", "portable_variant", "prelude", "programs",
           "render"]
