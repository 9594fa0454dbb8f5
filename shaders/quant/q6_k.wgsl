// Q6_K, repacked (weights.ts): main plane ql[128], qh[64], int8 scales[16] per block, at the
// words the block layout gives (W_QL, W_QH, W_SCALES, BLOCK_WORDS); scale plane f16 d per block.
// Unit u (values 32u..32u+31) is half n = u / 4, s = u % 4: value l of the unit takes its low 4
// bits from ql[64n + 32 (s & 1) + l] (low nibble for s < 2, high otherwise) and its high 2 bits
// from shift 2s of qh[32n + l]; value = (d · scales[8n + 2s + (l >= 16)]) · (q - 32). The mat-vec
// takes the offset out of the sum: d · scale · (Σ q·x − 32 Σx) per 16 values.
const UNIT_PARTIAL = false;
const_assert {{W_QL}}u % 4u == 0u && {{W_QH}}u % 4u == 0u && {{W_SCALES}}u % 4u == 0u && {{BLOCK_WORDS}}u % 4u == 0u; // 16-byte reads (w_quad)

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let sub = u & 7u;
  let blk = row * P.blocks_per_row + (u >> 3u);
  let b = w_block(row, u >> 3u);
  let d = f16_to_f32(w_half(2u * P.scale_word + blk));
  let n = sub >> 2u;
  let s = sub & 3u;
  let ql = {{W_QL}}u + 16u * n + 8u * (s & 1u);
  let nshift = 4u * (s >> 1u);
  let si = 8u * n + 2u * s; // even: both scales sit in one word
  let sw = W[w_block_word(b, {{W_SCALES}}u + (si >> 2u))] >> ((si & 3u) * 8u);
  for (var h = 0u; h < 2u; h++) {
    let sc = bitcast<i32>(((sw >> (8u * h)) & 0xffu) << 24u) >> 24u;
    let dl = d * f32(sc);
    let l4 = w_block_quad(b, ql + 4u * h);
    let h4 = w_block_quad(b, {{W_QH}}u + 8u * n + 4u * h);
    for (var k = 0u; k < 4u; k++) {
      let lo = (vec4<u32>(l4[k]) >> (vec4<u32>(0u, 8u, 16u, 24u) + vec4<u32>(nshift))) & vec4<u32>(15u);
      let hi = crumbs4(h4[k], 2u * s);
      (*w)[4u * h + k] = dl * vec4<f32>(vec4<i32>(lo | (hi << vec4<u32>(4u))) - 32);
    }
  }
}

#if MATVEC
// The two int8 scales in the low 16 bits of w, as floats.
fn q6_scale_pair(w: u32) -> vec2<f32> {
  return vec2<f32>(vec2<i32>(bitcast<i32>(w << 24u) >> 24u, bitcast<i32>(w << 16u) >> 24u));
}

// What units s and s + 2 of half n of block i of `row` share: d, their scales (8n + 2s, +1 and
// 8n + 2s + 4, +5), their 32 bytes of ql (a, c: low and high nibbles) and of qh (g, e: crumbs 2s
// and 2s + 4).
struct Q6Pair {
  d: f32,
  scl: vec2<f32>,
  sch: vec2<f32>,
  a: vec4<u32>,
  c: vec4<u32>,
  g: vec4<u32>,
  e: vec4<u32>,
}

fn q6_pair(row: u32, i: u32, n: u32, s: u32) -> Q6Pair {
  let b = w_block(row, i);
  let sc = {{W_SCALES}}u + 2u * n;
  let ql = {{W_QL}}u + 16u * n + 8u * s;
  let qh = {{W_QH}}u + 8u * n;
  return Q6Pair(
    f16_to_f32(w_half(2u * P.scale_word + row * P.blocks_per_row + i)),
    q6_scale_pair(W[w_block_word(b, sc)] >> (16u * s)),
    q6_scale_pair(W[w_block_word(b, sc + 1u)] >> (16u * s)),
    w_block_quad(b, ql),
    w_block_quad(b, ql + 4u),
    w_block_quad(b, qh),
    w_block_quad(b, qh + 4u),
  );
}

#if THREAD_ROWS
const MV_UNITS = 8u;

// Σ q·x over each 16-value half of one unit, from the 6-bit codes put together word-wide: nibbles
// at shift nshift of its 32 bytes of ql (a, c), crumbs at shift hs of its half's 32 bytes of qh
// (g, e) on top; x that unit in masked order (masked_dot16).
fn q6_unit_masked(a: vec4<u32>, c: vec4<u32>, g: vec4<u32>, e: vec4<u32>, nshift: u32, hs: u32, x: array<vec4<f32>, 8>) -> vec2<f32> {
  let ns = vec4<u32>(nshift);
  let hv = vec4<u32>(hs);
  let lo = vec4<u32>(0x0f0f0f0fu);
  let top = vec4<u32>(0x30303030u);
  let four = vec4<u32>(4u);
  let qa = ((a >> ns) & lo) | (((g >> hv) << four) & top);
  let qc = ((c >> ns) & lo) | (((e >> hv) << four) & top);
  let one = vec4<f32>(1.0);
  return vec2<f32>(dot(masked_dot16(qa, 0x3fu, x[0], x[1], x[2], x[3]), one), dot(masked_dot16(qc, 0x3fu, x[4], x[5], x[6], x[7]), one));
}

#if MV_PAIRS
// Whole super-block u / 8 of rows row0 .. row0 + rows − 1 (CPU adapters, threads own their rows),
// two units at a time: units s and s + 2 of half n share their 32 bytes of ql (low and high
// nibbles) and of qh (crumbs 2s and 2s + 4). Each token's two units of x (in masked order) and
// 32 · Σx per 16 values are prepared once for all the rows; per row, d and the four scales read
// once, then for every token d · Σ_k scale_k · (Σ q·x − 32 Σx) over the four 16-value groups k.
fn matvec_step(xb: u32, u: u32, row0: u32, rows: u32, acc: ptr<function, array<f32, ACC>>) {
  for (var j = 0u; j < 4u; j++) {
    let n = j >> 1u;
    let s = j & 1u;
    let c = 32u * (u + 4u * n + s);
    #unroll T 0 {{TT}} 1
    let x{{T}} = x_pair(token_x(xb, {{T}}u), c, c + 64u);
    #endunroll
    let hs = 2u * s;
    for (var r = 0u; r < {{MV_ROW_END}}; r++) {
      if (r >= rows) { break; }
      let w = q6_pair(row0 + r, u >> 3u, n, s);
      #unroll T 0 {{TT}} 1
      {
        let l = q6_unit_masked(w.a, w.c, w.g, w.e, 0u, hs, x{{T}}.lo);
        let h = q6_unit_masked(w.a, w.c, w.g, w.e, 4u, hs + 4u, x{{T}}.hi);
        let xs = 32.0 * x{{T}}.sums;
        (*acc)[r * TT + {{T}}u] += w.d * (dot(w.scl, l - xs.xy) + dot(w.sch, h - xs.zw));
      }
      #endunroll
    }
  }
}
#else
// Σ q·x per 16 values of the four units of one half of a block (x0 .. x3 their x in masked
// order), from its 64 bytes of ql at word ql (units s and s + 2 share 32 of them: low and high
// nibbles) and 32 bytes of qh at word qh (crumbs 2s of every unit) of the block at b (w_block):
// [0] units 0 and 1, [1] units 2 and 3.
fn q6_half_dots(b: vec2<u32>, ql: u32, qh: u32, x0: array<vec4<f32>, 8>, x1: array<vec4<f32>, 8>, x2: array<vec4<f32>, 8>, x3: array<vec4<f32>, 8>) -> array<vec4<f32>, 2> {
  let a0 = w_block_quad(b, ql);
  let c0 = w_block_quad(b, ql + 4u);
  let a1 = w_block_quad(b, ql + 8u);
  let c1 = w_block_quad(b, ql + 12u);
  let g = w_block_quad(b, qh);
  let e = w_block_quad(b, qh + 4u);
  return array<vec4<f32>, 2>(
    vec4<f32>(q6_unit_masked(a0, c0, g, e, 0u, 0u, x0), q6_unit_masked(a1, c1, g, e, 0u, 2u, x1)),
    vec4<f32>(q6_unit_masked(a0, c0, g, e, 4u, 4u, x2), q6_unit_masked(a1, c1, g, e, 4u, 6u, x3)),
  );
}

// Whole super-block u / 8 of rows row0 .. row0 + rows − 1 (CPU adapters, threads own their rows):
// the block's x (in masked order) and 32 · Σx per 16 values prepared once for all the rows; per
// row, d and the 16 scales read once (one quad), ql as 8 quads and qh as 4 (q6_half_dots):
// d · Σ_k scale_k · (Σ q·x − 32 Σx) over the 16 sixteen-value groups k.
const_assert TT == 1u; // one token: a batched step takes the pair steps
fn matvec_step(xb: u32, u: u32, row0: u32, rows: u32, acc: ptr<function, array<f32, ACC>>) {
  let x = x_block(xb, 32u * u);
  // 32 · Σx of group k (unit k / 2, its half k % 2) at [k / 4][k % 4].
  let xo = array<vec4<f32>, 4>(
    32.0 * vec4<f32>(x_halves(x[0]), x_halves(x[1])), 32.0 * vec4<f32>(x_halves(x[2]), x_halves(x[3])),
    32.0 * vec4<f32>(x_halves(x[4]), x_halves(x[5])), 32.0 * vec4<f32>(x_halves(x[6]), x_halves(x[7])),
  );
  let xm = x_block_masked(x);
  for (var r = 0u; r < {{MV_ROW_END}}; r++) {
    if (r >= rows) { break; }
    let blk = (row0 + r) * P.blocks_per_row + (u >> 3u);
    let b = w_block(row0 + r, u >> 3u);
    let d = f16_to_f32(w_half(2u * P.scale_word + blk));
    let sc = w_block_quad(b, {{W_SCALES}}u);
    let ql = {{W_QL}}u;
    let qh = {{W_QH}}u;
    let h0 = q6_half_dots(b, ql, qh, xm[0], xm[1], xm[2], xm[3]);
    let h1 = q6_half_dots(b, ql + 16u, qh + 8u, xm[4], xm[5], xm[6], xm[7]);
    (*acc)[r] += d * (dot(vec4<f32>(sbytes4(sc.x)), h0[0] - xo[0]) + dot(vec4<f32>(sbytes4(sc.y)), h0[1] - xo[1])
      + dot(vec4<f32>(sbytes4(sc.z)), h1[0] - xo[2]) + dot(vec4<f32>(sbytes4(sc.w)), h1[1] - xo[3]));
  }
}
#endif
#else
const MV_UNITS = 2u;

#if INT_DOT
// The 6-bit codes of 16 values as four packed words (bytes 0 .. 63): low nibbles of l at shift
// nshift, high 2 bits of h at shift hs.
fn q6_code_words(l: vec4<u32>, h: vec4<u32>, nshift: u32, hs: u32) -> vec4<u32> {
  return ((l >> vec4<u32>(nshift)) & vec4<u32>(0x0f0f0f0fu)) | (((h >> vec4<u32>(hs)) & vec4<u32>(0x03030303u)) << vec4<u32>(4u));
}

// d_x · Σ (q − 32)·q_x over each 16-value half of a unit, exactly in integers: w's codes at
// (nshift, hs), x the unit's q8_1 block.
fn q6_unit_qdots(w: Q6Pair, nshift: u32, hs: u32, x: XQ8) -> vec2<f32> {
  let lo = qdot16(q6_code_words(w.a, w.g, nshift, hs), x.lo) - 32 * xq_sum16(x.lo);
  let hi = qdot16(q6_code_words(w.c, w.e, nshift, hs), x.hi) - 32 * xq_sum16(x.hi);
  return x.d * vec2<f32>(f32(lo), f32(hi));
}

// The float step's units (s and s + 2 of half n) with x as q8_1 (INT_DOT).
fn matvec_step(xb: u32, u: u32, row0: u32, rows: u32, acc: ptr<function, array<f32, ACC>>) {
  let s = (u >> 1u) & 1u;
  let ua = (u & ~3u) + s;
  let xl = xq_block(ua);
  let xh = xq_block(ua + 2u);
  let n = (u >> 2u) & 1u;
  let hs = 2u * s;
  for (var r = 0u; r < {{MV_ROW_END}}; r++) {
    if (r >= rows) { break; }
    let w = q6_pair(row0 + r, u >> 3u, n, s);
    (*acc)[r] += w.d * (dot(w.scl, q6_unit_qdots(w, 0u, hs, xl)) + dot(w.sch, q6_unit_qdots(w, 4u, hs + 4u, xh)));
  }
}
#else

// The 6-bit codes of the four bytes of l (low nibbles at shift nshift) and h (high bits at shift hs).
fn q6_codes(l: u32, h: u32, nshift: u32, hs: u32) -> vec4<f32> {
  let lo = (vec4<u32>(l) >> (vec4<u32>(0u, 8u, 16u, 24u) + vec4<u32>(nshift))) & vec4<u32>(15u);
  return vec4<f32>(lo | (crumbs4(h, hs) << vec4<u32>(4u)));
}

// Σ q·x over each 16-value half of one unit with its x: (a, c) the unit's 32 bytes of ql (nibbles
// at shift nshift), (g, e) its half's 32 bytes of qh (crumbs at shift hs).
fn q6_unit_dots(a: vec4<u32>, c: vec4<u32>, g: vec4<u32>, e: vec4<u32>, nshift: u32, hs: u32, x: array<vec4<f32>, 8>) -> vec2<f32> {
  return vec2<f32>(
    dot(q6_codes(a.x, g.x, nshift, hs), x[0]) + dot(q6_codes(a.y, g.y, nshift, hs), x[1])
      + dot(q6_codes(a.z, g.z, nshift, hs), x[2]) + dot(q6_codes(a.w, g.w, nshift, hs), x[3]),
    dot(q6_codes(c.x, e.x, nshift, hs), x[4]) + dot(q6_codes(c.y, e.y, nshift, hs), x[5])
      + dot(q6_codes(c.z, e.z, nshift, hs), x[6]) + dot(q6_codes(c.w, e.w, nshift, hs), x[7]),
  );
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
  for (var r = 0u; r < {{MV_ROW_END}}; r++) {
    if (r >= rows) { break; }
    let w = q6_pair(row0 + r, u >> 3u, n, s);
    let l = q6_unit_dots(w.a, w.c, w.g, w.e, 0u, hs, xl);
    let h = q6_unit_dots(w.a, w.c, w.g, w.e, 4u, hs + 4u, xh);
    (*acc)[r] += w.d * (dot(w.scl, l - sl) + dot(w.sch, h - sh));
  }
}
#endif
#endif
#endif
