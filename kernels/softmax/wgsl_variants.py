"""softmax as a WGSL compute shader (wgpu runtime: Vulkan, lavapipe on a CPU); float32 only (WGSL's f32)."""
from workbench.catalog import kernel_here

kernel_here(__file__).wgsl(
    "wgsl", "softmax.wgsl", ("x", "out"),
    groups=lambda p, max_groups: (max(1, min(p["rows"], max_groups)), 1, 1),
    uniforms=lambda p: [("I", p["rows"]), ("I", p["cols"])],
    description="a workgroup of 256 per row, max and sum reduced in workgroup memory; float32 (WGSL f32)")
