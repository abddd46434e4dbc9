"""rope as a Triton kernel (runtime ``triton``: the interpreter on CPU tensors here); float32. The kernel
(shared with the other layout) is ``workbench.authoring.rope_variants.triton_kernel``."""
from workbench.authoring.rope_variants import register_triton, triton_compiles
from workbench.catalog import kernel_here

register_triton(kernel_here(__file__), "half")
COMPILE = triton_compiles("half")
