// Q5_K, as in the file, at the words the block layout gives: W_D = f16 d | f16 dmin << 16,
// scales[12] (from W_SCALES, see kscales.wgsl), qh[32] (from W_QH), qs[128] (from W_QS). Sub-block u (one
// unit) reads qs[32 (u / 2) + l] (low nibbles for even u, high for odd) and bit u of qh[l] as the
// fifth bit; value = d · scale · q - dmin · min.
#include "quant/kscales.wgsl"
const UNIT_PARTIAL = false;
const_assert {{W_QS}}u % 4u == 0u && {{W_QH}}u % 4u == 0u; // read 16 bytes at a time (w_quad)

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let sub = u & 7u;
  let b = {{BLOCK_WORDS}}u * (row * P.blocks_per_row + (u >> 3u));
  let head = kblock_head(b);
  let dm = f16x2(head[0]);
  let sm = kscale_min(vec3<u32>(head[1], head[2], head[3]), sub);
  let dl = dm.x * f32(sm.x);
  let ml = dm.y * f32(sm.y);
  let qs = b + {{W_QS}}u + 8u * (sub >> 1u);
  let shifts = vec4<u32>(0u, 8u, 16u, 24u);
  for (var h = 0u; h < 2u; h++) {
    let q4 = w_quad(qs + 4u * h);
    let h4 = w_quad(b + {{W_QH}}u + 4u * h);
    for (var k = 0u; k < 4u; k++) {
      let lo = (vec4<u32>(q4[k]) >> (shifts + vec4<u32>(4u * (sub & 1u)))) & vec4<u32>(15u);
      let hi = (vec4<u32>(h4[k]) >> (shifts + vec4<u32>(sub))) & vec4<u32>(1u);
      (*w)[4u * h + k] = dl * vec4<f32>(lo | (hi << vec4<u32>(4u))) - ml;
    }
  }
}
