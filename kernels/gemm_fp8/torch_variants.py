"""gemm_fp8 with torch: the stored bytes viewed as float8_e4m3fn, upcast to the run dtype, one GEMM, the
per-channel scales on its output; eager and torch.compile. Where torch cannot convert float8_e4m3fn on
the device (an old torch, or a device without float8 support) the variant is unsupported, saying so."""
import functools

from workbench.catalog import Unsupported, kernel_here

op = kernel_here(__file__)


def _upcast_linear(x, w, scale):
    import torch
    import torch.nn.functional as F

    return F.linear(x, w.view(torch.float8_e4m3fn).to(x.dtype)) * scale


@functools.cache
def _fp8_problem(device: str) -> str | None:
    """None where torch converts float8_e4m3fn to and from floats on ``device``, else why not."""
    import torch

    fp8 = getattr(torch, "float8_e4m3fn", None)
    if fp8 is None:
        return f"torch {torch.__version__} has no float8_e4m3fn dtype"
    try:
        probe = torch.tensor([0x38, 0xC4], dtype=torch.uint8, device=device).view(fp8).to(torch.float32)
        if probe.cpu().tolist() != [1.0, -3.0]:
            return f"torch {torch.__version__} decodes float8_e4m3fn wrongly on {device}: {probe.tolist()}"
    except (RuntimeError, TypeError, NotImplementedError) as exc:
        return f"torch {torch.__version__} cannot convert float8_e4m3fn on {device}: {exc}"
    return None


def _checked(ctx):
    problem = _fp8_problem(str(ctx.backend.device))
    if problem:
        raise Unsupported(problem)


@op.variant("torch", "torch", library=True,
            description="F.linear(x, w.view(float8_e4m3fn).to(x.dtype)) * scale: upcast per call, library GEMM")
def build_upcast(ctx):
    _checked(ctx)
    return lambda i, o: _upcast_linear(i["x"], i["w"], i["scale"])


@op.variant("torch-compile", "torch", mode="compiled",
            description="torch.compile of the upcast form (inductor may fuse the upcast into the GEMM's load)")
def build_compiled(ctx):
    from workbench.authoring.torch_support import compile_for

    _checked(ctx)
    compiled = compile_for(ctx, op.name, _upcast_linear, ("x", "w", "scale"))
    return lambda i, o: compiled(i["x"], i["w"], i["scale"])
