/**
 * WGSL of the prep kernel that turns a window's leaf table into the tree decode kernel's
 * first-leaf table on the GPU, so that the host builds nothing proportional to the output: one
 * thread per leaf; the first leaf of each macroblock writes its index at the block's slot, the
 * window's last leaf writes the end. Leaves are in macroblock order and every block has at least
 * one (the validator guarantees both), so every slot is written, and windows that share a block
 * write the same values.
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
