"""Helpers for writing variants, one module per runtime, plugged into the catalog's core (``op.variant``).

A kernel folder registers variants with ``op = kernel_here(__file__)`` and ``op.variant(...)``; what a
runtime repeats lives in that runtime's module, which registers it as ``op.<helper>``
(:func:`workbench.catalog.verbs.helpers.folder_helper`; the typed methods of
:mod:`workbench.catalog.verbs` call it) when this package is imported (``import workbench``
does), and is importable as a function taking ``op`` first:

- :mod:`.numba_support`: ``op.numba`` / ``op.numba_map`` (``numba_variant``, ``numba_map``) from a kernel
  factory, cached per dtype and on disk, compiled before any timing; :mod:`.numba_math`: vectorizable
  exp/erf/max for numba loops;
- :mod:`.torch_support`: ``op.torch``, ``op.torch_compile``, ``op.torch_trio``;
- :mod:`.cupy_support`: ``op.cupy``, from a ``make_run(xp, special)`` function;
- :mod:`.wgsl_support`: ``op.wgsl``, a WGSL shader on the ``wgpu`` runtime;
- :mod:`.triton_support`: ``register_triton_map(op, ...)``, a one-axis elementwise Triton kernel;
- :mod:`.rope_variants` and :mod:`.attention_variants`: the variants both RoPE layouts, and both attention
  kernels, share.

No module here imports its runtime until a variant is built.
"""

from workbench.authoring import cupy_support, numba_support, torch_support, wgsl_support  # noqa: F401  (each registers op.<helper>)
