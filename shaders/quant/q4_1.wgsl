// Q4_1, as in the file: word W_D = f16 d | f16 m << 16, qs[16] from word W_QS.
// Byte j of qs: low nibble is value j, high nibble value j + 16; value = nibble · d + m.
#include "quant/unit-matvec.wgsl"
const UNIT_PARTIAL = false;

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let blk = row * P.blocks_per_row + u;
  let b = {{BLOCK_WORDS}}u * blk;
  let dm = f16x2(W[b + {{W_D}}u]);
  for (var i = 0u; i < 4u; i++) {
    let q = W[b + {{W_QS}}u + i];
    (*w)[i] = vec4<f32>(nib_lo(q)) * dm.x + dm.y;
    (*w)[i + 4u] = vec4<f32>(nib_hi(q)) * dm.x + dm.y;
  }
}
