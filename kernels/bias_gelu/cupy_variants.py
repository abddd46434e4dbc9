"""bias_gelu with CuPy on an NVIDIA/AMD GPU (unfused); ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here


@kernel_here(__file__).cupy("h = cupy.add(x, bias), then gelu_tanh(h) as eager ufuncs: h and a temporary go through "
                            "memory.", name="cupy-unfused")
def make_run(xp, special=None):
    # The unfused form is literally the bias add followed by the catalog's own gelu_tanh cupy code
    # (imported on use: gelu_tanh's folder loads after this one).
    from workbench_catalog.gelu_tanh.cupy_variants import make_run as gelu_tanh_run

    gelu = gelu_tanh_run(xp)

    def run(inp, out):
        h = xp.add(inp["x"], inp["bias"])  # materialised in the run dtype: the unfused intermediate
        gelu({"x": h}, out)
    return run
