// Q5_1, as in the file (24 bytes = 6 words): f16 d | f16 m << 16, qh, qs[16].
// Bit j of qh is the fifth bit of value j; value = (nibble | bit << 4) · d + m.
const UNIT_PARTIAL = false;

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let blk = row * P.blocks_per_row + u;
  let b = 6u * blk;
  let dm = f16x2(W[b]);
  let qh = W[b + 1u];
  for (var i = 0u; i < 4u; i++) {
    let q = W[b + 2u + i];
    let lo = nib_lo(q) | (bits4(qh, 4u * i) << vec4<u32>(4u));
    let hi = nib_hi(q) | (bits4(qh, 16u + 4u * i) << vec4<u32>(4u));
    (*w)[i] = vec4<f32>(lo) * dm.x + dm.y;
    (*w)[i + 4u] = vec4<f32>(hi) * dm.x + dm.y;
  }
}
