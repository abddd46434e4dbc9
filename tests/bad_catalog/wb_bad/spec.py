"""wb_bad: vector_add's spec under another name, the kernel the deliberately bad variants of the isolation
tests hang on (small verify and quick sizes, odd on purpose)."""
import dataclasses

from workbench.catalog import get_kernel, kernel_here

SPEC = kernel_here(__file__).register(
    lambda name: dataclasses.replace(get_kernel("vector_add"), name=name, llm_params=None,
                                     description="out = a + b (test kernel for bad variants)",
                                     sizes={"verify": [{"n": 1001}], "quick": [{"n": 4099}]}))
