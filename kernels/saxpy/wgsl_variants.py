"""saxpy as a WGSL compute shader (wgpu runtime: Vulkan, lavapipe on a CPU); float32 only (WGSL's f32)."""
from workbench.catalog import kernel_here

from .spec import ALPHA

kernel_here(__file__).wgsl(
    "wgsl", "saxpy.wgsl", ("x", "y", "out"),
    groups=lambda p, max_groups: (max(1, min(-(-p["n"] // 256), max_groups)), 1, 1),
    uniforms=lambda p: [("I", p["n"]), ("f", ALPHA)],
    description="grid-stride loop, 256 invocations per workgroup; float32 (WGSL f32)")
