"""wb_game: vector_add's spec under another name, for variants that game the clock (issue 23). Each variant
in this folder is right whenever the old checker looked, and wrong, stale or unfairly fast otherwise; the
honest ones beside them must stay ok. Small verify and quick sizes, odd on purpose."""
import dataclasses

from workbench.catalog import get_kernel, kernel_here

SPEC = kernel_here(__file__).register(
    lambda name: dataclasses.replace(get_kernel("vector_add"), name=name, llm_params=None,
                                     description="out = a + b (test kernel for variants that game the clock)",
                                     sizes={"verify": [{"n": 1001}], "quick": [{"n": 4099}]}))
