// Q5_K, as in the file, at the words the block layout gives: W_D = f16 d | f16 dmin << 16,
// scales[12] (from W_SCALES, see kscales.wgsl), qh[32] (from W_QH), qs[128] (from W_QS). Sub-block u (one
// unit) reads qs[32 (u / 2) + l] (low nibbles for even u, high for odd) and bit u of qh[l] as the
// fifth bit; value = d · scale · q - dmin · min. The mat-vec steps over sub-block pairs (2j, 2j + 1),
// which share their 32 bytes of qs, on a GPU, and over whole blocks on a CPU adapter (THREAD_ROWS).
#include "quant/kscales.wgsl"
const UNIT_PARTIAL = false;
const_assert {{W_QS}}u % 4u == 0u && {{W_QH}}u % 4u == 0u; // read 16 bytes at a time (w_quad)

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let sub = u & 7u;
  let b = w_block(row, u >> 3u);
  let head = kblock_head(b);
  let dm = f16x2(head[0]);
  let sm = kscale_min(vec3<u32>(head[1], head[2], head[3]), sub);
  let dl = dm.x * f32(sm.x);
  let ml = dm.y * f32(sm.y);
  let qs = {{W_QS}}u + 8u * (sub >> 1u);
  let shifts = vec4<u32>(0u, 8u, 16u, 24u);
  for (var h = 0u; h < 2u; h++) {
    let q4 = w_block_quad(b, qs + 4u * h);
    let h4 = w_block_quad(b, {{W_QH}}u + 4u * h);
    for (var k = 0u; k < 4u; k++) {
      let lo = (vec4<u32>(q4[k]) >> (shifts + vec4<u32>(4u * (sub & 1u)))) & vec4<u32>(15u);
      let hi = (vec4<u32>(h4[k]) >> (shifts + vec4<u32>(sub))) & vec4<u32>(1u);
      (*w)[4u * h + k] = dl * vec4<f32>(lo | (hi << vec4<u32>(4u))) - ml;
    }
  }
}

#if MATVEC
#if THREAD_ROWS
const MV_UNITS = 8u;

// Σ q·x of sub-block sub (0..7) from the 5-bit codes put together word-wide: nibbles at shift
// 4 (sub & 1) of its 32 bytes of qs (a, c), bit sub of the block's 32 bytes of qh (g, e) as the
// fifth bit; x that unit in masked order (masked_dot16).
fn q5_unit_masked(a: vec4<u32>, c: vec4<u32>, g: vec4<u32>, e: vec4<u32>, sub: u32, x: array<vec4<f32>, 8>) -> f32 {
  let ns = vec4<u32>(4u * (sub & 1u));
  let hs = vec4<u32>(sub);
  let lo = vec4<u32>(0x0f0f0f0fu);
  let fifth = vec4<u32>(0x10101010u);
  let four = vec4<u32>(4u);
  let qa = ((a >> ns) & lo) | (((g >> hs) << four) & fifth);
  let qc = ((c >> ns) & lo) | (((e >> hs) << four) & fifth);
  return dot(masked_dot16(qa, 0x1fu, x[0], x[1], x[2], x[3]) + masked_dot16(qc, 0x1fu, x[4], x[5], x[6], x[7]), vec4<f32>(1.0));
}

#if MV_PAIRS
// A pair's 32 bytes of qs (a, c) and the block's 32 bytes of qh (g, e), as quads.
struct PairCodes {
  a: vec4<u32>,
  c: vec4<u32>,
  g: vec4<u32>,
  e: vec4<u32>,
}

fn pair_codes(b: vec2<u32>, j: u32) -> PairCodes {
  let qs = {{W_QS}}u + 8u * j;
  return PairCodes(w_block_quad(b, qs), w_block_quad(b, qs + 4u), w_block_quad(b, {{W_QH}}u), w_block_quad(b, {{W_QH}}u + 4u));
}

fn pair_dots(w: PairCodes, j: u32, x: XPair) -> vec2<f32> {
  return vec2<f32>(q5_unit_masked(w.a, w.c, w.g, w.e, 2u * j, x.lo), q5_unit_masked(w.a, w.c, w.g, w.e, 2u * j + 1u, x.hi));
}

#include "quant/kpair-step.wgsl"
#else
// Σ q·x of sub-blocks sub and sub + 1 (sub even), their 32 bytes of qs at word qs, (g, e) the
// block's qh, xl and xh those units of x in masked order; b the block (w_block).
fn q5_pair_masked(b: vec2<u32>, qs: u32, g: vec4<u32>, e: vec4<u32>, sub: u32, xl: array<vec4<f32>, 8>, xh: array<vec4<f32>, 8>) -> vec2<f32> {
  let a = w_block_quad(b, qs);
  let c = w_block_quad(b, qs + 4u);
  return vec2<f32>(q5_unit_masked(a, c, g, e, sub, xl), q5_unit_masked(a, c, g, e, sub + 1u, xh));
}

// Whole super-block u / 8 of rows row0 .. row0 + rows − 1, as Q4_K's (qh read once per row too).
const_assert TT == 1u; // one token: a batched step takes the pair steps
fn matvec_step(xb: u32, u: u32, row0: u32, rows: u32, acc: ptr<function, array<f32, ACC>>) {
  let x = x_block(xb, 32u * u);
  let xs = x_unit_sums(x);
  let xm = x_block_masked(x);
  for (var r = 0u; r < {{MV_ROW_END}}; r++) {
    if (r >= rows) { break; }
    let b = w_block(row0 + r, u >> 3u);
    let head = kblock_head(b);
    let dm = f16x2(head[0]);
    let k = kscales_all(vec3<u32>(head[1], head[2], head[3]));
    let qs = {{W_QS}}u;
    let g = w_block_quad(b, {{W_QH}}u);
    let e = w_block_quad(b, {{W_QH}}u + 4u);
    let q01 = q5_pair_masked(b, qs, g, e, 0u, xm[0], xm[1]);
    let q23 = q5_pair_masked(b, qs + 8u, g, e, 2u, xm[2], xm[3]);
    let q45 = q5_pair_masked(b, qs + 16u, g, e, 4u, xm[4], xm[5]);
    let q67 = q5_pair_masked(b, qs + 24u, g, e, 6u, xm[6], xm[7]);
    (*acc)[r] += dm.x * (dot(k.sc[0], vec4<f32>(q01, q23)) + dot(k.sc[1], vec4<f32>(q45, q67)))
      - dm.y * (dot(k.mn[0], xs[0]) + dot(k.mn[1], xs[1]));
  }
}
#endif
#else
const MV_UNITS = 2u;

#if INT_DOT
// The 5-bit codes of 16 values as four packed words: nibbles q (in place) with bit s of h's bytes on top.
fn q5_code_words(q: vec4<u32>, h: vec4<u32>, s: u32) -> vec4<u32> {
  return q | (((h >> vec4<u32>(s)) & vec4<u32>(0x01010101u)) << vec4<u32>(4u));
}

// Σ q·q_x of sub-blocks sub (low nibbles of the pair's qs, bit sub of qh) and sub + 1 (high nibbles, bit sub + 1).
fn pair_qdots(b: vec2<u32>, sub: u32, xl: XQ8, xh: XQ8) -> vec2<i32> {
  let a = w_block_quad(b, {{W_QS}}u + 4u * sub);
  let c = w_block_quad(b, {{W_QS}}u + 4u * sub + 4u);
  let g = w_block_quad(b, {{W_QH}}u);
  let e = w_block_quad(b, {{W_QH}}u + 4u);
  let m = vec4<u32>(0x0f0f0f0fu);
  let four = vec4<u32>(4u);
  return vec2<i32>(
    qdot16(q5_code_words(a & m, g, sub), xl.lo) + qdot16(q5_code_words(c & m, e, sub), xl.hi),
    qdot16(q5_code_words((a >> four) & m, g, sub + 1u), xh.lo) + qdot16(q5_code_words((c >> four) & m, e, sub + 1u), xh.hi),
  );
}

#include "quant/kpair-qstep.wgsl"
#else

// The 5-bit codes of the four bytes of q (nibbles already in place) with bit s of the bytes of h on top.
fn q5_codes(q: vec4<u32>, h: u32, s: u32) -> vec4<f32> {
  return vec4<f32>(q | (((vec4<u32>(h) >> (vec4<u32>(0u, 8u, 16u, 24u) + vec4<u32>(s))) & vec4<u32>(1u)) << vec4<u32>(4u)));
}

// Σ q·x of sub-blocks sub (low nibbles) and sub + 1 (high nibbles; sub even) with those units of x:
// (a, c) their 32 bytes of qs, (g, e) the block's 32 bytes of qh.
fn q5_pair_dots(a: vec4<u32>, c: vec4<u32>, g: vec4<u32>, e: vec4<u32>, sub: u32, xl: array<vec4<f32>, 8>, xh: array<vec4<f32>, 8>) -> vec2<f32> {
  let ql = dot(q5_codes(nib_lo(a.x), g.x, sub), xl[0]) + dot(q5_codes(nib_lo(a.y), g.y, sub), xl[1])
    + dot(q5_codes(nib_lo(a.z), g.z, sub), xl[2]) + dot(q5_codes(nib_lo(a.w), g.w, sub), xl[3])
    + dot(q5_codes(nib_lo(c.x), e.x, sub), xl[4]) + dot(q5_codes(nib_lo(c.y), e.y, sub), xl[5])
    + dot(q5_codes(nib_lo(c.z), e.z, sub), xl[6]) + dot(q5_codes(nib_lo(c.w), e.w, sub), xl[7]);
  let s1 = sub + 1u;
  let qh = dot(q5_codes(nib_hi(a.x), g.x, s1), xh[0]) + dot(q5_codes(nib_hi(a.y), g.y, s1), xh[1])
    + dot(q5_codes(nib_hi(a.z), g.z, s1), xh[2]) + dot(q5_codes(nib_hi(a.w), g.w, s1), xh[3])
    + dot(q5_codes(nib_hi(c.x), e.x, s1), xh[4]) + dot(q5_codes(nib_hi(c.y), e.y, s1), xh[5])
    + dot(q5_codes(nib_hi(c.z), e.z, s1), xh[6]) + dot(q5_codes(nib_hi(c.w), e.w, s1), xh[7]);
  return vec2<f32>(ql, qh);
}

// Sub-blocks u and u + 1 (u even) of rows row0 .. row0 + rows − 1, as Q4_K's matvec_step.
fn matvec_step(xb: u32, u: u32, row0: u32, rows: u32, acc: ptr<function, array<f32, ACC>>) {
  let xl = x_unit(xb, 32u * u);
  let xh = x_unit(xb, 32u * u + 32u);
  let sl = x_halves(xl);
  let sh = x_halves(xh);
  let sub = u & 7u;
  for (var r = 0u; r < {{MV_ROW_END}}; r++) {
    if (r >= rows) { break; }
    let b = w_block(row0 + r, u >> 3u);
    let qs = {{W_QS}}u + 4u * sub;
    let q = q5_pair_dots(w_block_quad(b, qs), w_block_quad(b, qs + 4u), w_block_quad(b, {{W_QH}}u), w_block_quad(b, {{W_QH}}u + 4u), sub, xl, xh);
    (*acc)[r] += kpair_dot(b, sub, q.x, q.y, sl, sh);
  }
}
#endif
#endif
#endif
