// Q6_K, repacked (weights.ts): main plane ql[128], qh[64], int8 scales[16] per block, at the
// words the block layout gives (W_QL, W_QH, W_SCALES, BLOCK_WORDS); scale plane f16 d per block.
// Unit u (values 32u..32u+31) is half n = u / 4, s = u % 4: value l of the unit takes its low 4
// bits from ql[64n + 32 (s & 1) + l] (low nibble for s < 2, high otherwise) and its high 2 bits
// from shift 2s of qh[32n + l]; value = (d · scales[8n + 2s + (l >= 16)]) · (q - 32). The mat-vec
// takes the offset out of the sum: d · scale · (Σ q·x − 32 Σx) per 16 values.
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

#if MATVEC
const MV_UNITS = 2u;

// The 6-bit codes of the four bytes of l (low nibbles at shift nshift) and h (high bits at shift hs).
fn q6_codes(l: u32, h: u32, nshift: u32, hs: u32) -> vec4<f32> {
  let lo = (vec4<u32>(l) >> (vec4<u32>(0u, 8u, 16u, 24u) + vec4<u32>(nshift))) & vec4<u32>(15u);
  return vec4<f32>(lo | (crumbs4(h, hs) << vec4<u32>(4u)));
}

// The two int8 scales in the low 16 bits of w, as floats.
fn q6_scale_pair(w: u32) -> vec2<f32> {
  return vec2<f32>(vec2<i32>(bitcast<i32>(w << 24u) >> 24u, bitcast<i32>(w << 16u) >> 24u));
}

// Units s and s + 2 of half n of a block (u even: n = bit 2 of u, s = bit 1), of rows
// row0 .. row0 + rows − 1: the two share their 32 bytes of ql (low and high nibbles) and of qh
// (crumbs 2s and 2s + 4), so each row loads them once.
fn matvec_step(xb: u32, u: u32, row0: u32, rows: u32, acc: ptr<function, array<f32, ACC>>) {
  let s = (u >> 1u) & 1u;
  let ua = (u & ~3u) + s;
  let xl = x_unit(xb, 32u * ua);
  let xh = x_unit(xb, 32u * ua + 64u);
  let sl = 32.0 * x_halves(xl);
  let sh = 32.0 * x_halves(xh);
  let n = (u >> 2u) & 1u;
  let hs = 2u * s;
  for (var r = 0u; r < ROWS; r++) {
    if (r >= rows) { break; }
    let blk = (row0 + r) * P.blocks_per_row + (u >> 3u);
    let b = {{BLOCK_WORDS}}u * blk;
    let d = f16_to_f32(w_half(2u * P.scale_word + blk));
    // Scales 8n + 2s, +1 (unit s) and 8n + 2s + 4, +5 (unit s + 2).
    let sc = b + {{W_SCALES}}u + 2u * n;
    let scl = q6_scale_pair(W[sc] >> (16u * s));
    let sch = q6_scale_pair(W[sc + 1u] >> (16u * s));
    let ql = b + {{W_QL}}u + 16u * n + 8u * s;
    let qh = b + {{W_QH}}u + 8u * n;
    let a = w_quad(ql);
    let c = w_quad(ql + 4u);
    let g = w_quad(qh);
    let e = w_quad(qh + 4u);
    let l0 = dot(q6_codes(a.x, g.x, 0u, hs), xl[0]) + dot(q6_codes(a.y, g.y, 0u, hs), xl[1])
      + dot(q6_codes(a.z, g.z, 0u, hs), xl[2]) + dot(q6_codes(a.w, g.w, 0u, hs), xl[3]);
    let l1 = dot(q6_codes(c.x, e.x, 0u, hs), xl[4]) + dot(q6_codes(c.y, e.y, 0u, hs), xl[5])
      + dot(q6_codes(c.z, e.z, 0u, hs), xl[6]) + dot(q6_codes(c.w, e.w, 0u, hs), xl[7]);
    let h0 = dot(q6_codes(a.x, g.x, 4u, hs + 4u), xh[0]) + dot(q6_codes(a.y, g.y, 4u, hs + 4u), xh[1])
      + dot(q6_codes(a.z, g.z, 4u, hs + 4u), xh[2]) + dot(q6_codes(a.w, g.w, 4u, hs + 4u), xh[3]);
    let h1 = dot(q6_codes(c.x, e.x, 4u, hs + 4u), xh[4]) + dot(q6_codes(c.y, e.y, 4u, hs + 4u), xh[5])
      + dot(q6_codes(c.z, e.z, 4u, hs + 4u), xh[6]) + dot(q6_codes(c.w, e.w, 4u, hs + 4u), xh[7]);
    (*acc)[r] += d * (dot(scl, vec2<f32>(l0, l1) - sl) + dot(sch, vec2<f32>(h0, h1) - sh));
  }
}
#endif
