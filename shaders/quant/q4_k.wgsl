// Q4_K, as in the file, at the words the block layout gives: W_D = f16 d | f16 dmin << 16,
// scales[12] (from W_SCALES, see kscales.wgsl), qs[128] (from W_QS). Sub-block u (32 values, one unit) reads
// qs[32 (u / 2) + l]: low nibbles for even u, high for odd; value = d · scale · q - dmin · min.
#include "quant/kscales.wgsl"
const UNIT_PARTIAL = false;

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let sub = u & 7u;
  let b = {{BLOCK_WORDS}}u * (row * P.blocks_per_row + (u >> 3u));
  let dm = f16x2(W[b + {{W_D}}u]);
  let sm = kscale_min(b, sub);
  let dl = dm.x * f32(sm.x);
  let ml = dm.y * f32(sm.y);
  let qs = b + {{W_QS}}u + 8u * (sub >> 1u);
  let shift = 4u * (sub & 1u);
  for (var i = 0u; i < 8u; i++) {
    let q = (vec4<u32>(W[qs + i]) >> (vec4<u32>(0u, 8u, 16u, 24u) + vec4<u32>(shift))) & vec4<u32>(15u);
    (*w)[i] = dl * vec4<f32>(q) - ml;
  }
}
