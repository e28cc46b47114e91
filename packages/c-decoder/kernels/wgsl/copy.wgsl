
@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
struct P { count: u32, groupsX: u32, _a: u32, _b: u32 }
@group(0) @binding(2) var<uniform> q: P;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let base = (wid.y * q.groupsX + wid.x) * 1024u + t;
  for (var i = 0u; i < 4u; i++) {
    let idx = base + i * 256u;
    if (idx < q.count) { dst[idx] = src[idx]; }
  }
}
