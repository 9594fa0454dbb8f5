// Q4_1, as in the file (20 bytes = 5 words): word 0 = f16 d | f16 m << 16, words 1..4 = qs[16].
// Byte j of qs: low nibble is value j, high nibble value j + 16; value = nibble · d + m.
const UNIT_PARTIAL = false;

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let blk = row * P.blocks_per_row + u;
  let b = 5u * blk;
  let dm = f16x2(W[b]);
  for (var i = 0u; i < 4u; i++) {
    let q = W[b + 1u + i];
    (*w)[i] = vec4<f32>(nib_lo(q)) * dm.x + dm.y;
    (*w)[i + 4u] = vec4<f32>(nib_hi(q)) * dm.x + dm.y;
  }
}
