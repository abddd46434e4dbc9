"""rope: rotary position embedding of q and k, half-split layout (GPT-NeoX, LLaMA, Qwen, Mistral:
element i pairs with i + head_dim/2, Hugging Face's ``rotate_half``). Shape, inputs and the choice of two
specs (this and ``rope_interleaved``): ``workbench.catalog.rope``. theta = 10000.

Tolerances: the defaults (float32 1e-5 of max|out|, float16 5e-3, bfloat16 4e-2). Each output is
a cos -+ b sin: two products and an add, well conditioned in max-normalised error (|out| <= |a| + |b|),
so a few roundings: float32 variants measured <= 8e-8 (both layouts, every backend). torch's
half-precision forms round each of their four temporaries in the run dtype.
"""
from workbench.catalog import kernel_here
from workbench.catalog.rope import rope_spec

SPEC = kernel_here(__file__).register(
    rope_spec, "rotary embedding of q and k, half-split pairs (NeoX / LLaMA rotate_half); memory-bound",
    layout="half")
