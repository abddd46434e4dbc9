"""vector_add: out = a + b — the residual add; 2 reads and 1 write per element, no arithmetic to hide behind."""
from workbench.catalog import kernel_here, sizes

SPEC = kernel_here(__file__).register(
    description="out = a + b; the residual add of a transformer block, purely bandwidth-bound",
    axes=("n",),
    make_inputs=lambda p, rng: {"a": rng.standard_normal(p["n"]), "b": rng.standard_normal(p["n"])},
    reference=lambda inp, p: {"out": inp["a"] + inp["b"]},
    output_shapes=lambda p: {"out": (p["n"],)},
    flops=lambda p: p["n"],
    bytes_moved=lambda p, itemsize: 3 * p["n"] * itemsize,
    sizes=sizes.copy(sizes.ELEMENTS),
    llm_params=lambda s: {"n": s["batch"] * s["seq"] * s["hidden"]},
)
