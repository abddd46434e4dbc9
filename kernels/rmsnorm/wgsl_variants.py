"""rmsnorm as a WGSL compute shader (wgpu runtime: Vulkan, lavapipe on a CPU); float32 only (WGSL's f32)."""
from workbench.catalog import kernel_here

from .spec import EPS

kernel_here(__file__).wgsl(
    "wgsl", "rmsnorm.wgsl", ("x", "weight", "out"),
    groups=lambda p, max_groups: (max(1, min(p["rows"], max_groups)), 1, 1),
    uniforms=lambda p: [("I", p["rows"]), ("I", p["cols"]), ("f", EPS)],
    description="a workgroup of 256 per row, sum of squares reduced in workgroup memory; float32 (WGSL f32)")
