"""The float32 Triton variant of a one-axis elementwise kernel, and its GPU compile declaration, in one call.

Every such kernel launches the same way — one program per ``block`` elements over ``n``, arrays as
``<name>_ptr`` pointers, then float scalars, then ``n``, then compile-time constants and ``BLOCK`` — so the
folder writes only its ``@triton.jit`` body. triton is imported when the variant is built, never at load.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from workbench.catalog.spec import DeviceArrays
from workbench.portable.triton_check import TritonCompile


def register_triton_map(op: Any, kernel: Callable[[], Any], arrays: Iterable[str], *,
                        scalars: Mapping[str, float] | None = None, constexprs: Mapping[str, Any] | None = None,
                        block: int = 1024, description: str = "", name: str = "triton") -> tuple[TritonCompile, ...]:
    """Register ``op``'s Triton variant launching ``kernel()`` (a cached factory of a ``@triton.jit``
    function taking ``<array>_ptr`` for each of ``arrays`` (inputs and outputs, in order), the ``scalars``
    (float32 values), ``n``, the ``constexprs`` and ``BLOCK``); return its ``COMPILE`` declaration."""
    arrays, scalars, constexprs = tuple(arrays), dict(scalars or {}), dict(constexprs or {})

    @op.variant(name, "triton", dtypes=("float32",),
                description=f"one program per {block} elements, masked tail{description}; float32")
    def build(ctx: Any) -> Any:
        import triton

        n = ctx.params["n"]
        grid = (triton.cdiv(n, block),)
        launch = kernel()[grid]

        def run(inp: DeviceArrays, out: DeviceArrays) -> None:
            launch(*(inp[a] if a in inp else out[a] for a in arrays), *scalars.values(), n, **constexprs,
                   BLOCK=block)
        return run

    signature = {**{f"{a}_ptr": "*fp32" for a in arrays}, **dict.fromkeys(scalars, "fp32"), "n": "i32",
                 **dict.fromkeys(constexprs, "constexpr"), "BLOCK": "constexpr"}
    return (TritonCompile(kernel, signature, {**constexprs, "BLOCK": block}, label=f"BLOCK={block}"),)
