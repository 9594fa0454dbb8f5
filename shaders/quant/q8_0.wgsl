// Q8_0, repacked (weights.ts): main plane int8 qs[32] per block (8 words); scale plane f16 d per block.
// value = q · d.
const UNIT_PARTIAL = false;
const_assert {{W_QS}}u % 4u == 0u && {{BLOCK_WORDS}}u % 4u == 0u; // qs read 16 bytes at a time (w_quad)

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let blk = row * P.blocks_per_row + u;
  let d = f16_to_f32(w_half(2u * P.scale_word + blk));
  let qs = {{BLOCK_WORDS}}u * blk + {{W_QS}}u;
  for (var h = 0u; h < 2u; h++) {
    let q4 = w_quad(qs + 4u * h);
    for (var k = 0u; k < 4u; k++) {
      (*w)[4u * h + k] = vec4<f32>(sbytes4(q4[k])) * d;
    }
  }
}
