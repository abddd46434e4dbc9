"""rmsnorm_residual with CuPy on an NVIDIA/AMD GPU (unfused); ``make_run`` runs with numpy too (tests)."""
from workbench.catalog import kernel_here


@kernel_here(__file__).cupy("cupy.add(x, residual, out=residual_out), then rmsnorm of it (float16 reduced in "
                            "float32): unfused.", name="cupy-unfused")
def make_run(xp, special=None):
    # Unfused: the add, then the catalog's own rmsnorm cupy code on residual_out (rmsnorm's folder
    # loads before this one; imported on use all the same).
    from workbench_catalog.rmsnorm.cupy_variants import make_run as rmsnorm_run

    rmsnorm = rmsnorm_run(xp)

    def run(inp, out):
        h = xp.add(inp["x"], inp["residual"], out=out["residual_out"])
        rmsnorm({"x": h, "weight": inp["weight"]}, out)
    return run
