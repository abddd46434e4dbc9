"""rope_interleaved as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32. The kernel
(shared with the other layout) is ``workbench.catalog.rope_variants.triton_kernel``."""
from workbench.catalog import kernel_here
from workbench.catalog.rope_variants import register_triton, triton_compiles

register_triton(kernel_here(__file__), "interleaved")
COMPILE = triton_compiles("interleaved")
