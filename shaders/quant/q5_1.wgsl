// Q5_1, as in the file: words W_D = f16 d | f16 m << 16, W_QH = qh, qs[16] from word W_QS.
// Bit j of qh is the fifth bit of value j; value = (nibble | bit << 4) · d + m.
#include "quant/unit-matvec.wgsl"
const UNIT_PARTIAL = false;

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let blk = row * P.blocks_per_row + u;
  let b = {{BLOCK_WORDS}}u * blk;
  let dm = f16x2(W[b + {{W_D}}u]);
  let qh = W[b + {{W_QH}}u];
  for (var i = 0u; i < 4u; i++) {
    let q = W[b + {{W_QS}}u + i];
    let lo = nib_lo(q) | (bits4(qh, 4u * i) << vec4<u32>(4u));
    let hi = nib_hi(q) | (bits4(qh, 16u + 4u * i) << vec4<u32>(4u));
    (*w)[i] = vec4<f32>(lo) * dm.x + dm.y;
    (*w)[i + 4u] = vec4<f32>(hi) * dm.x + dm.y;
  }
}
