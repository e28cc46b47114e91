
struct Params {
  rows: u32, cols: u32, tilesX: u32, firstBlock: u32,
  blockCount: u32, groupsX: u32, leafBase: u32, outBase: u32,
  outCount: u32, outOrigin: u32, leafCount: u32, leafEnd: u32,
  leafGroupsX: u32, _pad0: u32, _pad1: u32, _pad2: u32,
}
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> leaves: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> firstLeaf: array<u32>;
@group(0) @binding(3) var<storage, read_write> cells: array<u32>;

// leaf index + 1 at each leaf's quadtree node (0 = not a leaf); zero-initialised by WGSL
var<workgroup> nodeLeaf: array<u32, 341>;

// nodes of size 64, 32, 16, 8, 4 start at these indices of nodeLeaf
fn nodeIndex(y: u32, x: u32, log2: u32) -> u32 {
  var base = 85u;
  switch (log2) {
    case 6u: { base = 0u; }
    case 5u: { base = 1u; }
    case 4u: { base = 5u; }
    case 3u: { base = 21u; }
    default: {}
  }
  return base + (y >> log2) * (64u >> log2) + (x >> log2);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let group = wid.y * p.groupsX + wid.x;
  if (group >= p.blockCount) { return; }
  let b = p.firstBlock + group;
  let first = firstLeaf[b];
  let count = min(firstLeaf[b + 1u] - first, 256u);
  for (var k = t; k < count; k += 64u) {
    let info = leaves[first + k - p.leafBase].y;
    nodeLeaf[nodeIndex(info & 63u, (info >> 6u) & 63u, (info >> 12u) & 7u)] = k + 1u;
  }
  workgroupBarrier();
  var word = 0u;
  for (var j = 0u; j < 4u; j++) {
    let cell = t * 4u + j;
    let cy = (cell >> 4u) * 4u;
    let cx = (cell & 15u) * 4u;
    var k = 1u;
    for (var log2 = 6u; log2 >= 2u; log2--) {
      let n = nodeLeaf[nodeIndex(cy, cx, log2)];
      if (n != 0u) { k = n; break; }
    }
    word |= ((k - 1u) & 255u) << (j * 8u);
  }
  cells[group * 64u + t] = word;
}
