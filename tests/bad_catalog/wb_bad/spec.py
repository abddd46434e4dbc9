"""wb_bad: out = a + b, the kernel the deliberately bad variants of the isolation tests hang on."""
from workbench.catalog import kernel_here

SPEC = kernel_here(__file__).register(
    description="out = a + b (test kernel for bad variants)",
    axes=("n",),
    make_inputs=lambda p, rng: {"a": rng.standard_normal(p["n"]), "b": rng.standard_normal(p["n"])},
    reference=lambda inp, p: {"out": inp["a"] + inp["b"]},
    output_shapes=lambda p: {"out": (p["n"],)},
    flops=lambda p: p["n"],
    bytes_moved=lambda p, itemsize: 3 * p["n"] * itemsize,
    sizes={"verify": [{"n": 1001}], "quick": [{"n": 4099}]},
)
