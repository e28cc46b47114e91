
struct Params {
  rows: u32, cols: u32, tilesX: u32, firstBlock: u32,
  blockCount: u32, groupsX: u32, leafBase: u32, outBase: u32,
  outCount: u32, outOrigin: u32, leafCount: u32, leafEnd: u32,
  leafGroupsX: u32, _pad0: u32, _pad1: u32, _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> payload: array<u32>;
@group(0) @binding(2) var<storage, read> leaves: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> output: array<atomic<u32>>;


fn halfToFloatBits(h: u32) -> u32 {
  let sign = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0x1fu) { return sign | 0x7f800000u | (m << 13u); }
  if (e != 0u) { return sign | ((e + 112u) << 23u) | (m << 13u); }
  if (m == 0u) { return sign; }
  let shift = countLeadingZeros(m) - 21u; // moves the top set bit to bit 10
  return sign | ((113u - shift) << 23u) | (((m << shift) & 0x3ffu) << 13u);
}

fn f32ToF16(x: u32) -> u32 {
  let sign = (x >> 16u) & 0x8000u;
  let a = x & 0x7fffffffu;
  if (a >= 0x477ff000u) { return sign | 0x7c00u; } // 65520 and up round to Inf
  if (a >= 0x38800000u) { // normal f16: rebias the exponent, round off 13 bits
    let m = a - 0x38000000u;
    return sign | ((m + 0xfffu + ((m >> 13u) & 1u)) >> 13u);
  }
  if (a <= 0x33000000u) { return sign; } // at most 2^-25: rounds to (signed) zero
  // subnormal f16: the value in units of 2^-24 is mantissa >> (126 - exponent), rounded
  let shift = 126u - (a >> 23u); // 14..24
  let mant = (a & 0x7fffffu) | 0x800000u;
  let q = mant >> shift;
  let rest = mant & ((1u << shift) - 1u);
  let halfway = 1u << (shift - 1u);
  return sign | (q + select(0u, 1u, rest > halfway || (rest == halfway && (q & 1u) == 1u)));
}

fn f32ToBf16(x: u32) -> u32 {
  return (x + 0x7fffu + ((x >> 16u) & 1u)) >> 16u;
}

// info: bits 0-5 y, 6-11 x, 12-14 log2 size, 15 mode, 16 bias is -0, 17 scale is negative, 18 scale is zero
struct LeafParams { s: f32, bias: f32, info: u32, word: u32 }

fn leafParams(leaf: vec4<u32>) -> LeafParams {
  let sBits = halfToFloatBits(leaf.z >> 16u);
  let bBits = halfToFloatBits(leaf.z & 0xffffu);
  var info = leaf.y & 0xffffu;
  if (bBits == 0x80000000u) { info |= 0x10000u; }
  if ((sBits & 0x80000000u) != 0u) { info |= 0x20000u; }
  if ((sBits & 0x7fffffffu) == 0u) { info |= 0x40000u; }
  return LeafParams(bitcast<f32>(sBits), bitcast<f32>(bBits), info, leaf.w >> 2u);
}

// One element: f32(S) * code + f32(Bias), zero sign fixed by integer logic.
fn affine(s: f32, b: f32, info: u32, code: i32) -> u32 {
  let w = s * f32(code) + b;

  // S * code is -0 when it is zero and the signs differ; a zero sum is -0 only if both are -0.
  let productZero = code == 0 || (info & 0x40000u) != 0u;
  let productNegative = ((info & 0x20000u) != 0u) != (code < 0);
  let negZero = (info & 0x10000u) != 0u && productZero && productNegative;
  return select(bitcast<u32>(w), select(0u, 0x80000000u, negZero), w == 0.0);
}

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let group = wid.y * p.groupsX + wid.x;
  if (group >= p.blockCount) { return; }
  let b = p.firstBlock + group;
  let by = b / p.tilesX;
  let bx = b % p.tilesX;
  let first = b;
  let cx = (t & 15u) * 4u;
  let c = bx * 64u + cx;
  if (c >= p.cols) { return; }
  var lp: LeafParams;
  var kPrev = 0xffffffffu;
  for (var h = 0u; h < 2u; h++) {
    let cell = ((t >> 4u) * 2u + h) * 16u + (t & 15u);
    let cy = (cell >> 4u) * 4u;
    // the second cell reuses the first one's leaf parameters when it is the same leaf
    let k = 0u;
    if (k != kPrev) {
      lp = leafParams(leaves[first + k - p.leafBase]);
      kPrev = k;
    }
    let s = lp.s;
    let bias = lp.bias;
    let info = lp.info;
    let word = lp.word;
    let ly = info & 63u;
    let lx = (info >> 6u) & 63u;
    let size = 1u << ((info >> 12u) & 7u);
    let t158 = (info & 0x8000u) != 0u;
    let r0 = by * 64u + cy;
    for (var i = 0u; i < 4u; i++) {
      let r = r0 + i;
      let codeIndex = (cy - ly + i) * size + (cx - lx); // a multiple of 4
      var v: vec4<u32>;
      if (t158) {
        // 16 two-bit symbols per word: 00 -> 0, 01 -> +1, 10 -> -1, 11 -> 0
        let bits = payload[word + (codeIndex >> 4u)] >> ((codeIndex & 15u) * 2u);
        for (var j = 0u; j < 4u; j++) {
          let sym = (bits >> (2u * j)) & 3u;
          let code = select(0, select(-1, 1, sym == 1u), sym == 1u || sym == 2u);
          v[j] = affine(s, bias, info, code);
        }
      } else {
        // 8 signed nibbles per word, LSB first
        let bits = payload[word + (codeIndex >> 3u)] >> ((codeIndex & 7u) * 4u);
        for (var j = 0u; j < 4u; j++) {
          let code = (bitcast<i32>(bits << (28u - 4u * j))) >> 28u;
          v[j] = affine(s, bias, info, code);
        }
      }
      let e = r * p.cols + c;
      if (r < p.rows) {
        for (var j = 0u; j < 4u; j++) {
          let ej = e + j;
          if (c + j < p.cols && ej >= p.outBase && ej - p.outBase < p.outCount) {
            let i = ej - p.outOrigin;
            let shift = (i & 1u) * 16u;
            atomicAnd(&output[i >> 1u], ~(0xffffu << shift));
            atomicOr(&output[i >> 1u], f32ToBf16(v[j]) << shift);
          }
        }
      }
    }
  }
}
