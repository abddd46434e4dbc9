"""saxpy: y = a * x + y_in — the simplest memory-bound kernel (2 reads, 1 write per element)."""

from workbench.catalog import kernel_here

ALPHA = 1.7

SPEC = kernel_here(__file__).register(
    description="out = alpha * x + y (alpha = 1.7); STREAM-triad-like, purely bandwidth-bound",
    axes=("n",),
    make_inputs=lambda p, rng: {"x": rng.standard_normal(p["n"]), "y": rng.standard_normal(p["n"])},
    reference=lambda inp, p: {"out": ALPHA * inp["x"] + inp["y"]},
    output_shapes=lambda p: {"out": (p["n"],)},
    flops=lambda p: 2 * p["n"],
    bytes_moved=lambda p, itemsize: 3 * p["n"] * itemsize,
    sizes={
        "verify": [{"n": 1}, {"n": 1000003}, {"n": 4099}],
        "quick": [{"n": 2**16}, {"n": 2**20}, {"n": 2**22}],
        "full": [{"n": 2**k} for k in range(12, 27, 2)],
    },
    llm_params=lambda s: {"n": s["batch"] * s["seq"] * s["hidden"]},
)
