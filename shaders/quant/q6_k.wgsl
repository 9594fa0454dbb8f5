// Q6_K, repacked (weights.ts): main plane ql[128], qh[64], int8 scales[16] per block, at the
// words the block layout gives (W_QL, W_QH, W_SCALES, BLOCK_WORDS); scale plane f16 d per block.
// Unit u (values 32u..32u+31) is half n = u / 4, s = u % 4: value l of the unit takes its low 4
// bits from ql[64n + 32 (s & 1) + l] (low nibble for s < 2, high otherwise) and its high 2 bits
// from shift 2s of qh[32n + l]; value = (d · scales[8n + 2s + (l >= 16)]) · (q - 32).
const UNIT_PARTIAL = false;
const_assert {{W_QL}}u % 4u == 0u && {{W_QH}}u % 4u == 0u && {{BLOCK_WORDS}}u % 4u == 0u; // 16-byte reads (w_quad)

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let sub = u & 7u;
  let blk = row * P.blocks_per_row + (u >> 3u);
  let b = {{BLOCK_WORDS}}u * blk;
  let d = f16_to_f32(w_half(2u * P.scale_word + blk));
  let n = sub >> 2u;
  let s = sub & 3u;
  let ql = b + {{W_QL}}u + 16u * n + 8u * (s & 1u);
  let nshift = 4u * (s >> 1u);
  let si = 8u * n + 2u * s; // even: both scales sit in one word
  let sw = W[b + {{W_SCALES}}u + (si >> 2u)] >> ((si & 3u) * 8u);
  for (var h = 0u; h < 2u; h++) {
    let sc = bitcast<i32>(((sw >> (8u * h)) & 0xffu) << 24u) >> 24u;
    let dl = d * f32(sc);
    let l4 = w_quad(ql + 4u * h);
    let h4 = w_quad(b + {{W_QH}}u + 8u * n + 4u * h);
    for (var k = 0u; k < 4u; k++) {
      let lo = (vec4<u32>(l4[k]) >> (vec4<u32>(0u, 8u, 16u, 24u) + vec4<u32>(nshift))) & vec4<u32>(15u);
      let hi = crumbs4(h4[k], 2u * s);
      (*w)[4u * h + k] = dl * vec4<f32>(vec4<i32>(lo | (hi << vec4<u32>(4u))) - 32);
    }
  }
}
