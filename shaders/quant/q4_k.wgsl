// Q4_K, as in the file, at the words the block layout gives: W_D = f16 d | f16 dmin << 16,
// scales[12] (from W_SCALES, see kscales.wgsl), qs[128] (from W_QS). Sub-block u (32 values, one unit) reads
// qs[32 (u / 2) + l]: low nibbles for even u, high for odd; value = d · scale · q - dmin · min.
// The mat-vec steps over sub-block pairs (2j, 2j + 1), which share their 32 bytes of qs, on a GPU,
// and over whole blocks on a CPU adapter (THREAD_ROWS).
#include "quant/kscales.wgsl"
const UNIT_PARTIAL = false;
const_assert {{W_QS}}u % 4u == 0u; // qs read 16 bytes at a time (w_quad)

fn decode_unit(row: u32, u: u32, w: ptr<function, array<vec4<f32>, 8>>) {
  let sub = u & 7u;
  let b = w_block(row, u >> 3u);
  let head = kblock_head(b);
  let dm = f16x2(head[0]);
  let sm = kscale_min(vec3<u32>(head[1], head[2], head[3]), sub);
  let dl = dm.x * f32(sm.x);
  let ml = dm.y * f32(sm.y);
  let qs = {{W_QS}}u + 8u * (sub >> 1u);
  let shifts = vec4<u32>(0u, 8u, 16u, 24u) + vec4<u32>(4u * (sub & 1u));
  // Constant indices, no loop: SwiftShader keeps w in registers.
  let a = w_block_quad(b, qs);
  let c = w_block_quad(b, qs + 4u);
  (*w)[0] = dl * nibbles4(a.x, shifts) - ml;
  (*w)[1] = dl * nibbles4(a.y, shifts) - ml;
  (*w)[2] = dl * nibbles4(a.z, shifts) - ml;
  (*w)[3] = dl * nibbles4(a.w, shifts) - ml;
  (*w)[4] = dl * nibbles4(c.x, shifts) - ml;
  (*w)[5] = dl * nibbles4(c.y, shifts) - ml;
  (*w)[6] = dl * nibbles4(c.z, shifts) - ml;
  (*w)[7] = dl * nibbles4(c.w, shifts) - ml;
}

// The nibbles of the four bytes of q at `shifts` (0 or 4 past each byte's start), as floats.
fn nibbles4(q: u32, shifts: vec4<u32>) -> vec4<f32> {
  return vec4<f32>((vec4<u32>(q) >> shifts) & vec4<u32>(15u));
}

#if MATVEC
#if THREAD_ROWS
const MV_UNITS = 8u;

// Σ q·x of one unit's low nibbles, its 32 bytes of qs as two quads (a, c), with x in masked order
// (masked_dot16); for the high nibbles pass the quads shifted right by 4.
fn q4_unit_dot(a: vec4<u32>, c: vec4<u32>, x: array<vec4<f32>, 8>) -> f32 {
  return dot(masked_dot16(a, 0xfu, x[0], x[1], x[2], x[3]) + masked_dot16(c, 0xfu, x[4], x[5], x[6], x[7]), vec4<f32>(1.0));
}

// Σ q·x of sub-blocks 2j (low nibbles) and 2j + 1 (high nibbles) from their 32 bytes of qs as two
// quads (a, c), with xl, xh those units of x in masked order.
fn q4_pair_quads(a: vec4<u32>, c: vec4<u32>, xl: array<vec4<f32>, 8>, xh: array<vec4<f32>, 8>) -> vec2<f32> {
  let four = vec4<u32>(4u);
  return vec2<f32>(q4_unit_dot(a, c, xl), q4_unit_dot(a >> four, c >> four, xh));
}

#if MV_PAIRS
// A pair's 32 bytes of qs, as two quads.
struct PairCodes {
  a: vec4<u32>,
  c: vec4<u32>,
}

fn pair_codes(b: vec2<u32>, j: u32) -> PairCodes {
  return PairCodes(w_block_quad(b, {{W_QS}}u + 8u * j), w_block_quad(b, {{W_QS}}u + 8u * j + 4u));
}

fn pair_dots(w: PairCodes, j: u32, x: XPair) -> vec2<f32> {
  return q4_pair_quads(w.a, w.c, x.lo, x.hi);
}

#include "quant/kpair-step.wgsl"
#else
// Whole super-block u / 8 of rows row0 .. row0 + rows − 1 (CPU adapters, threads own their rows):
// the block's x (in masked order) and Σx per unit prepared once for all the rows; per row, the
// head (d, dmin, the 8 scales and mins) decoded once and qs read as 8 quads:
// d · Σ_j s_j · Σ q·x − dmin · Σ_j m_j · Σx.
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
    let q01 = q4_pair_quads(w_block_quad(b, qs), w_block_quad(b, qs + 4u), xm[0], xm[1]);
    let q23 = q4_pair_quads(w_block_quad(b, qs + 8u), w_block_quad(b, qs + 12u), xm[2], xm[3]);
    let q45 = q4_pair_quads(w_block_quad(b, qs + 16u), w_block_quad(b, qs + 20u), xm[4], xm[5]);
    let q67 = q4_pair_quads(w_block_quad(b, qs + 24u), w_block_quad(b, qs + 28u), xm[6], xm[7]);
    // Inline: a helper taking the dots as arrays (kblock_dot) measured slower on SwiftShader (2026-12-02).
    (*acc)[r] += dm.x * (dot(k.sc[0], vec4<f32>(q01, q23)) + dot(k.sc[1], vec4<f32>(q45, q67)))
      - dm.y * (dot(k.mn[0], xs[0]) + dot(k.mn[1], xs[1]));
  }
}
#endif
#else
const MV_UNITS = 2u;

#if INT_DOT
// Σ q·q_x of sub-blocks sub (low nibbles of the pair's 32 bytes of qs) and sub + 1 (high nibbles).
fn pair_qdots(b: vec2<u32>, sub: u32, xl: XQ8, xh: XQ8) -> vec2<i32> {
  let a = w_block_quad(b, {{W_QS}}u + 4u * sub);
  let c = w_block_quad(b, {{W_QS}}u + 4u * sub + 4u);
  let m = vec4<u32>(0x0f0f0f0fu);
  let four = vec4<u32>(4u);
  return vec2<i32>(qdot16(a & m, xl.lo) + qdot16(c & m, xl.hi), qdot16((a >> four) & m, xh.lo) + qdot16((c >> four) & m, xh.hi));
}

#include "quant/kpair-qstep.wgsl"
#else

// Σ q·x of the low nibbles (unit 2j) and of the high nibbles (unit 2j + 1) of a pair's 32 bytes of
// qs, (a, c), with those units of x.
fn q4_pair_dots(a: vec4<u32>, c: vec4<u32>, xl: array<vec4<f32>, 8>, xh: array<vec4<f32>, 8>) -> vec2<f32> {
  let ql = dot(vec4<f32>(nib_lo(a.x)), xl[0]) + dot(vec4<f32>(nib_lo(a.y)), xl[1])
    + dot(vec4<f32>(nib_lo(a.z)), xl[2]) + dot(vec4<f32>(nib_lo(a.w)), xl[3])
    + dot(vec4<f32>(nib_lo(c.x)), xl[4]) + dot(vec4<f32>(nib_lo(c.y)), xl[5])
    + dot(vec4<f32>(nib_lo(c.z)), xl[6]) + dot(vec4<f32>(nib_lo(c.w)), xl[7]);
  let qh = dot(vec4<f32>(nib_hi(a.x)), xh[0]) + dot(vec4<f32>(nib_hi(a.y)), xh[1])
    + dot(vec4<f32>(nib_hi(a.z)), xh[2]) + dot(vec4<f32>(nib_hi(a.w)), xh[3])
    + dot(vec4<f32>(nib_hi(c.x)), xh[4]) + dot(vec4<f32>(nib_hi(c.y)), xh[5])
    + dot(vec4<f32>(nib_hi(c.z)), xh[6]) + dot(vec4<f32>(nib_hi(c.w)), xh[7]);
  return vec2<f32>(ql, qh);
}

// Sub-blocks u and u + 1 (u even) of rows row0 .. row0 + rows − 1: per row
// d · (s_u · Σ q·x + s_u+1 · Σ q·x) − dmin · (m_u · Σx + m_u+1 · Σx).
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
    let q = q4_pair_dots(w_block_quad(b, qs), w_block_quad(b, qs + 4u), xl, xh);
    (*acc)[r] += kpair_dot(b, sub, q.x, q.y, sl, sh);
  }
}
#endif
#endif
#endif
