
struct Params {
  rows: u32, cols: u32, tilesX: u32, firstBlock: u32,
  blockCount: u32, groupsX: u32, leafBase: u32, outBase: u32,
  outCount: u32, outOrigin: u32, leafCount: u32, leafEnd: u32,
  leafGroupsX: u32, _pad0: u32, _pad1: u32, _pad2: u32,
}
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> leaves: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> firstLeaf: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let i = (wid.y * p.leafGroupsX + wid.x) * 256u + t; // leaf index within the window
  if (i >= p.leafCount) { return; }
  let l = p.leafEnd - p.leafCount + i; // index in the stream
  let b = leaves[l - p.leafBase].x;
  // the window's first leaf starts its first block
  if (i == 0u || leaves[l - 1u - p.leafBase].x != b) { firstLeaf[b] = l; }
  if (i + 1u == p.leafCount) { firstLeaf[p.firstBlock + p.blockCount] = p.leafEnd; }
}
