// gelu_tanh on the wgpu runtime: a grid-stride loop, 256 invocations per workgroup (float32).
struct Params { n: u32, }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let stride = nwg.x * 256u;
    for (var i = gid.x; i < p.n; i += stride) {
        let v = x[i];
        // tanh of a clamped argument: tanh is +-1 in float32 past 15, and exp-based tanh overflows far out
        let u = clamp(0.7978845608028654 * (v + 0.044715 * v * v * v), -15.0, 15.0);
        dst[i] = 0.5 * v * (1.0 + tanh(u));
    }
}
