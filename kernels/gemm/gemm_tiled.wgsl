// Tiled gemm on the wgpu runtime: 16x16 invocations per workgroup, one output each; 16x16 tiles of a and b
// staged in workgroup memory between workgroupBarrier()s, edges zero-filled; float32.
const TILE: u32 = 16u;
struct Params { m: u32, n: u32, k: u32, }

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> ta: array<array<f32, 16>, 16>;
var<workgroup> tb: array<array<f32, 16>, 16>;

@compute @workgroup_size(16, 16)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = wid.y * TILE + lid.y;
    let col = wid.x * TILE + lid.x;
    var acc = 0.0;
    let tiles = (p.k + TILE - 1u) / TILE;
    for (var t = 0u; t < tiles; t++) {
        let ka = t * TILE + lid.x;
        let kb = t * TILE + lid.y;
        if (row < p.m && ka < p.k) {
            ta[lid.y][lid.x] = a[row * p.k + ka];
        } else {
            ta[lid.y][lid.x] = 0.0;
        }
        if (kb < p.k && col < p.n) {
            tb[lid.y][lid.x] = b[kb * p.n + col];
        } else {
            tb[lid.y][lid.x] = 0.0;
        }
        workgroupBarrier();
        for (var i = 0u; i < TILE; i++) {
            acc += ta[lid.y][i] * tb[i][lid.x];
        }
        workgroupBarrier();
    }
    if (row < p.m && col < p.n) {
        dst[row * p.n + col] = acc;
    }
}
