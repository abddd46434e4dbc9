// rmsnorm on the wgpu runtime: one workgroup of 256 invocations per row (rows strided over the
// dispatched workgroups), the sum of squares reduced in workgroup memory with workgroupBarrier(); float32.
struct Params { rows: u32, cols: u32, eps: f32, }

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weight: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> red: array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = lid.x;
    for (var row = wid.x; row < p.rows; row += nwg.x) {
        let base = row * p.cols;
        var acc = 0.0;
        for (var c = t; c < p.cols; c += 256u) {
            let v = x[base + c];
            acc += v * v;
        }
        red[t] = acc;
        workgroupBarrier();
        for (var s = 128u; s > 0u; s >>= 1u) {
            if (t < s) {
                red[t] += red[t + s];
            }
            workgroupBarrier();
        }
        let rstd = 1.0 / sqrt(red[0] / f32(p.cols) + p.eps);
        workgroupBarrier();
        for (var c = t; c < p.cols; c += 256u) {
            dst[base + c] = x[base + c] * rstd * weight[c];
        }
    }
}
