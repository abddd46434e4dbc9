"""rope_interleaved: rotary position embedding of q and k, interleaved layout (GPT-J, RoFormer, Meta's
original LLaMA code: elements 2i and 2i + 1 form a pair, a complex number). Shape, inputs and the choice
of two specs (this and ``rope``): ``workbench.catalog.rope``. theta = 10000.

Tolerances: the defaults, as ``rope``'s (same arithmetic on other pairs).
"""
from workbench.catalog import kernel_here
from workbench.catalog.rope import rope_spec

SPEC = kernel_here(__file__).register(
    rope_spec, "rotary embedding of q and k, interleaved pairs (GPT-J / Meta LLaMA complex form); memory-bound",
    layout="interleaved")
