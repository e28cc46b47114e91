/**
 * WGSL of the device half of v2 validation (records.ts is the host half): one workgroup of 64
 * threads per record reads the uploaded stream, applies the leaf-level rules of DECISIONS.md
 * section 3 and writes the record's part of the leaf table (docs/ARCHITECTURE.md layout) at the
 * first-leaf index the host counted.
 * - thread 0 walks a MIXED record's split map (pre-order DFS, TL TR BL BR) into workgroup memory;
 *   map bits past the walk must be zero, and the walk must give the host's leaf count;
 * - each thread then takes four consecutive leaves: reserved flag bits 1-3, FP16 Inf/NaN scale or
 *   bias (after the 0xFFF0 mask), the payload (its size from the mode bit) and its padding to 16
 *   bytes inside the stream, the padding zero. Payload offsets are a prefix sum over the record.
 * A fault lowers the call's status word to the job's index (atomicMin; the host sets it to
 * 0xFFFFFFFF first): the decode kernels of that job and of every later one read it and write
 * nothing, and the host reads it back before the call resolves (then parse() names the fault). Records are checked
 * independently (records may leave gaps; none is read where the previous one ended).
 */
import { LEAF_TABLE_WGSL } from "@sgfp4/format";

/** Uniform of the leaves kernel: 4 u32. */
export const CHECK_PARAM_WORDS = 4;

export const LEAVES_SHADER = /* wgsl */ `${LEAF_TABLE_WGSL}
struct CheckParams { blockCount: u32, groupsX: u32, streamBytes: u32, statusIndex: u32 }
@group(0) @binding(0) var<uniform> q: CheckParams;
@group(0) @binding(1) var<storage, read> stream: array<u32>;
@group(0) @binding(2) var<storage, read> blockFirst: array<u32>;
@group(0) @binding(3) var<storage, read_write> leaves: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> status: array<atomic<u32>>;

// MIXED: packed geometry (y | x << 6 | log2 << 12) of each leaf in storage order
var<workgroup> geo: array<u32, 256>;
var<workgroup> sums: array<u32, 64>;
var<workgroup> walkOk: u32;

fn mapBit(m: vec3<u32>, k: u32) -> u32 {
  return (m[k >> 5u] >> (k & 31u)) & 1u;
}

// The split-map walk (thread 0): fills geo, returns whether the map is valid for n leaves.
fn walk(m: vec3<u32>, n: u32) -> bool {
  var stack: array<u32, 16>; // pending nodes; each split adds three, four levels deep at most
  stack[0] = 6u << 12u;
  var sp = 1u;
  var bit = 0u;
  var count = 0u;
  loop {
    if (sp == 0u) { break; }
    sp -= 1u;
    let node = stack[sp];
    let log2 = node >> 12u;
    if (log2 > 2u) {
      let k = bit;
      bit += 1u;
      if (mapBit(m, k) == 1u) {
        let h = 1u << (log2 - 1u);
        let c = (log2 - 1u) << 12u;
        let y = node & 63u;
        let x = (node >> 6u) & 63u;
        // pushed in reverse so that TL comes off first
        stack[sp] = c | (y + h) | ((x + h) << 6u);
        stack[sp + 1u] = c | (y + h) | (x << 6u);
        stack[sp + 2u] = c | y | ((x + h) << 6u);
        stack[sp + 3u] = c | y | (x << 6u);
        sp += 4u;
        continue;
      }
    }
    if (count < 256u) { geo[count] = node; }
    count += 1u;
  }
  var rest = 0u;
  for (var k = bit; k < 96u; k++) { rest |= mapBit(m, k); }
  return rest == 0u && count == n;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let b = wid.y * q.groupsX + wid.x;
  if (b >= q.blockCount) { return; }
  let base = (16u + 4u * q.blockCount + 15u) & ~15u;
  // the host checked the offset table, the sb_header and that the leaf headers are in the stream
  let start = base + stream[4u + b];
  let recordLayout = stream[start >> 2u] & 7u;
  let first = blockFirst[b];
  let n = min(blockFirst[b + 1u] - first, 256u);
  let mixed = recordLayout == 4u;
  let headersAt = select(start + 4u, start + 16u, mixed);
  if (t == 0u) {
    var ok = true;
    if (mixed) {
      let w = start >> 2u;
      ok = walk(vec3<u32>(stream[w + 1u], stream[w + 2u], stream[w + 3u]), n);
    }
    walkOk = select(0u, 1u, ok);
  }
  workgroupBarrier();
  // uniform layouts: leaf size and raster position from the layout value
  let uniformLog2 = select(6u - recordLayout, 2u, recordLayout == 5u);
  var header: array<u32, 4>;
  var geometry: array<u32, 4>;
  var padded: array<u32, 4>;
  var local = 0u;
  for (var j = 0u; j < 4u; j++) {
    let i = t * 4u + j;
    if (i < n) {
      var g: u32;
      if (mixed) {
        g = geo[i];
      } else {
        let perRowLog2 = 6u - uniformLog2;
        g = ((i >> perRowLog2) << uniformLog2) | ((i & ((1u << perRowLog2) - 1u)) << (uniformLog2 + 6u)) | (uniformLog2 << 12u);
      }
      let h = stream[(headersAt >> 2u) + i];
      let mode = h & SGFP4_V2_LEAF_MODE_MASK;
      header[j] = h;
      geometry[j] = sgfp4_geometry_pack(sgfp4_geometry_y(g), sgfp4_geometry_x(g), sgfp4_geometry_log2(g), mode);
      padded[j] = (sgfp4_leaf_payload_bytes(sgfp4_geometry_log2(g), mode) + 15u) & ~15u;
      local += padded[j];
    }
  }
  // inclusive prefix sum of the threads' payload bytes
  sums[t] = local;
  workgroupBarrier();
  for (var d = 1u; d < 64u; d <<= 1u) {
    var add = 0u;
    if (t >= d) { add = sums[t - d]; }
    workgroupBarrier();
    sums[t] += add;
    workgroupBarrier();
  }
  var p = ((headersAt + 4u * n + 15u) & ~15u) + sums[t] - local;
  var bad = walkOk == 0u;
  for (var j = 0u; j < 4u; j++) {
    let i = t * 4u + j;
    if (i < n) {
      let h = header[j];
      let params = sgfp4_v2_header_params(h);
      if ((h & SGFP4_V2_LEAF_RESERVED_MASK) != 0u || sgfp4_half_nonfinite(sgfp4_params_scale_bits(params)) || sgfp4_half_nonfinite(sgfp4_params_bias_bits(params))) {
        bad = true;
      }
      let used = sgfp4_leaf_payload_bytes(sgfp4_geometry_log2(geometry[j]), sgfp4_geometry_mode(geometry[j]));
      // compared without overflow: p is within a record of the stream's end here
      if (p > q.streamBytes || padded[j] > q.streamBytes - p) {
        bad = true;
      } else {
        let padEnd = (p + padded[j]) >> 2u;
        for (var w = (p + used) >> 2u; w < padEnd; w++) {
          if (stream[w] != 0u) { bad = true; }
        }
      }
      leaves[first + i] = vec4<u32>(b, geometry[j], params, p);
      p += padded[j];
    }
  }
  if (bad) { atomicMin(&status[0], q.statusIndex); }
}
`;

/**
 * v1: the one rule the host leaves to the GPU (records.ts `v1LeafTable` applies the rest and
 * builds the table): a T158 block's payload words 256..511 are zero. One workgroup per block,
 * four words per thread; a fault lowers the status word as above.
 */
export const V1_CHECK_SHADER = /* wgsl */ `${LEAF_TABLE_WGSL}
struct CheckParams { blockCount: u32, groupsX: u32, streamBytes: u32, statusIndex: u32 }
@group(0) @binding(0) var<uniform> q: CheckParams;
@group(0) @binding(1) var<storage, read> stream: array<u32>;
@group(0) @binding(2) var<storage, read> leaves: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> status: array<atomic<u32>>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let b = wid.y * q.groupsX + wid.x;
  if (b >= q.blockCount) { return; }
  let leaf = leaves[b];
  if (sgfp4_geometry_mode(leaf[SGFP4_LEAF_WORD_GEOMETRY]) != SGFP4_MODE_T158) { return; }
  let upper = (leaf[SGFP4_LEAF_WORD_PAYLOAD] + SGFP4_V1_T158_BYTES) >> 2u;
  var any = 0u;
  for (var j = 0u; j < 4u; j++) { any |= stream[upper + t * 4u + j]; }
  if (any != 0u) { atomicMin(&status[0], q.statusIndex); }
}
`;
