// Q8_0, repacked (weights.ts): main plane int8 qs[32] per block (8 words); scale plane f16 d per block.
// value = q · d.
const UNIT_PARTIAL = false;

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let blk = row * P.blocks_per_row + u;
  let d = f16_to_f32(w_half(2u * P.scale_word + blk));
  let qs = {{BLOCK_WORDS}}u * blk + {{W_QS}}u;
  for (var i = 0u; i < 8u; i++) {
    (*w)[i] = vec4<f32>(sbytes4(W[qs + i])) * d;
  }
}
