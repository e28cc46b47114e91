/**
 * WGSL of the two prep kernels that turn a window's leaf table into the decode kernel's lookup
 * tables on the GPU, so that the host builds nothing proportional to the output:
 * - `firstLeaf`: one thread per leaf; the first leaf of each macroblock writes its index at the
 *   block's slot, the window's last leaf writes the end. Leaves are in macroblock order and every
 *   block has at least one (the validator guarantees both), so every slot is written, and windows
 *   that share a block write the same values.
 * - `cells`: one workgroup per macroblock; each leaf marks its node of the block's quadtree
 *   (85 nodes of size 64..8, 256 of size 4) in workgroup memory, then each thread looks up four
 *   cells from the root down (the first marked ancestor is the leaf: the leaves tile the block
 *   exactly) and writes their leaf indices as one word of the table.
 */
import { LEAF_TABLE_WGSL } from "@sgfp4/format";
import { PARAMS_WGSL } from "./shader.js";

const BINDINGS = /* wgsl */ `${LEAF_TABLE_WGSL}
${PARAMS_WGSL}
@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> leaves: array<vec4<u32>>;`;

export const FIRST_LEAF_SHADER = /* wgsl */ `${BINDINGS}
@group(0) @binding(2) var<storage, read_write> firstLeaf: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let i = (wid.y * p.leafGroupsX + wid.x) * 256u + t; // leaf index within the window
  if (i >= p.leafCount) { return; }
  let l = p.leafEnd - p.leafCount + i; // index in the stream
  let b = leaves[l - p.leafBase][SGFP4_LEAF_WORD_BLOCK];
  // the window's first leaf starts its first block
  if (i == 0u || leaves[l - 1u - p.leafBase][SGFP4_LEAF_WORD_BLOCK] != b) { firstLeaf[b] = l; }
  if (i + 1u == p.leafCount) { firstLeaf[p.firstBlock + p.blockCount] = p.leafEnd; }
}
`;

export const CELLS_SHADER = /* wgsl */ `${BINDINGS}
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
    let g = leaves[first + k - p.leafBase][SGFP4_LEAF_WORD_GEOMETRY];
    nodeLeaf[nodeIndex(sgfp4_geometry_y(g), sgfp4_geometry_x(g), sgfp4_geometry_log2(g))] = k + 1u;
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
`;
