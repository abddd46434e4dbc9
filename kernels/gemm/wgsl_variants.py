"""gemm as a WGSL compute shader (wgpu runtime: Vulkan, lavapipe on a CPU); float32 only (WGSL's f32)."""
from workbench.catalog import kernel_here

TILE = 16

kernel_here(__file__).wgsl(
    "wgsl-tiled", "gemm_tiled.wgsl", ("a", "b", "out"),
    groups=lambda p, max_groups: (-(-p["n"] // TILE), -(-p["m"] // TILE), 1),
    uniforms=lambda p: [("I", p["m"]), ("I", p["n"]), ("I", p["k"])],
    description=f"{TILE}x{TILE} tiles of a and b staged in workgroup memory (workgroupBarrier); float32 (WGSL f32)")
