// The bindings and x loads shared by the weight kernels (matmul.wgsl, matmat.wgsl): W (also as
// vec4<u32> for the decoders' w_quad), x, y and the WeightUniform; x read one unit at a time.
// A prologue may make x from what the buffer holds as it is loaded (the mat-vec only, where every
// workgroup reads all of x anyway; one dispatch fewer than the op apart):
//   X_NORM: x = RMSNorm(X) · NW, as norm.wgsl's rms_norm (norm weight NW, eps NORM_EPS_BITS); the
//           kernel calls x_norm_begin first.
//   X_GLU:  x = act(gate) · up from a gate|up row (up P.cols after gate), as elementwise.wgsl's
//           glu; act gelu with GLU_GELU, else silu.
// Y_GLU (the GPU mat-vec of gate|up rows uploaded in pairs): y = act(gate) · up, one output per
// pair, as X_GLU makes it (matmul.wgsl's store_glu); act as X_GLU's.
@group(0) @binding(0) var<storage, read> W: array<u32>;
// W again, 16 bytes at a time, for the decoders' w_quad (W_VEC4 is always on here).
@group(0) @binding(5) var<storage, read> W4: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;
@group(0) @binding(3) var<uniform> P: WeightUniform;

// Where row `row` of the part goes among the tensor's outputs: its own place, or, for gate|up rows
// uploaded in pairs (P.glu_pairs, weights.ts), back in gate|up order: row 2i (gate i) at i, row
// 2i + 1 (up i) at total_rows / 2 + i.
fn out_row(row: u32) -> u32 {
  let r = P.row_start + row;
  if (P.glu_pairs == 0u) { return r; }
  return (r & 1u) * (P.total_rows / 2u) + (r >> 1u);
}

// Output i gets v, or v added to it (P.accumulate): a uniform rather than a compiled variant, so
// the projections that add into the residual share the others' pipelines (one compile fewer each).
fn store_y(i: u32, v: f32) {
  if (P.accumulate != 0u) {
    Y[i] += v;
  } else {
    Y[i] = v;
  }
}

// Columns c .. c + 3 clamped to the row's last (a load past the row's end is then masked to 0),
// loop-free: one select per load instead of a loop with a dynamic vector index.
fn partial_columns(c: u32) -> vec4<u32> {
  return min(vec4<u32>(c) + vec4<u32>(0u, 1u, 2u, 3u), vec4<u32>(P.cols - 1u));
}

#if X_VEC4
// x read 16 bytes at a time: token vectors start at multiples of 4 elements (matmul.ts checks).
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;

// X values c .. c + 3 of the token whose vector starts at xb (zero past the row's end).
fn raw_x4(xb: u32, c: u32) -> vec4<f32> {
  let v = X[(xb + c) >> 2u];
  if (UNIT_PARTIAL) { return select(vec4<f32>(0.0), v, c < P.cols); }
  return v;
}
#else
@group(0) @binding(1) var<storage, read> X: array<f32>;

// X values c .. c + 3 of the token whose vector starts at xb (zero past the row's end).
fn raw_x4(xb: u32, c: u32) -> vec4<f32> {
  if (UNIT_PARTIAL && c + 4u > P.cols) {
    let k = partial_columns(c);
    return select(vec4<f32>(0.0), vec4<f32>(X[xb + k.x], X[xb + k.y], X[xb + k.z], X[xb + k.w]), vec4<u32>(c) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(P.cols));
  }
  let i = xb + c;
  return vec4<f32>(X[i], X[i + 1u], X[i + 2u], X[i + 3u]);
}
#endif

// Element i of X.
fn x_at(i: u32) -> f32 {
#if X_VEC4
  return X[i >> 2u][i & 3u];
#else
  return X[i];
#endif
}

#if X_NORM
@group(0) @binding(6) var<storage, read> NW: array<f32>;
// rms_norm's workgroup: its lanes' partial sums of squares, reduced in its tree order.
const NORM_LANES: u32 = 128u;
var<workgroup> norm_partial: array<f32, NORM_LANES>;
// 1 / rms of the token's x, set by x_norm_begin.
var<private> x_scale: f32;

// x_scale for the x vector at xb, summed exactly as norm.wgsl's rms_norm sums it (lane k of its 128
// adds the squares of elements k, k + 128, ... in order, then the lanes reduce as reduce_sum does),
// so the normed x is bit for bit the one rms_norm writes. Every invocation calls it (barriers).
fn x_norm_begin(xb: u32, lid: u32) {
  for (var lane = lid; lane < NORM_LANES; lane += WG) {
    var ss = 0.0;
    for (var i = lane; i < P.cols; i += NORM_LANES) {
      let v = x_at(xb + i);
      ss += v * v;
    }
    norm_partial[lane] = ss;
  }
  workgroupBarrier();
  for (var s = NORM_LANES / 2u; s > 0u; s >>= 1u) {
    for (var lane = lid; lane < s; lane += WG) {
      norm_partial[lane] += norm_partial[lane + s];
    }
    workgroupBarrier();
  }
  x_scale = inverseSqrt(norm_partial[0] / f32(P.cols) + bitcast<f32>({{NORM_EPS_BITS}}u));
}

fn norm_w4(c: u32) -> vec4<f32> {
  if (UNIT_PARTIAL && c + 4u > P.cols) {
    let k = partial_columns(c);
    return select(vec4<f32>(0.0), vec4<f32>(NW[k.x], NW[k.y], NW[k.z], NW[k.w]), vec4<u32>(c) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(P.cols));
  }
  return vec4<f32>(NW[c], NW[c + 1u], NW[c + 2u], NW[c + 3u]);
}
#endif

#if GLU_ACT
#include "glu-act.wgsl"

fn glu_act(v: f32) -> f32 {
#if GLU_GELU
  return gelu(v);
#else
  return silu(v);
#endif
}
#endif

// x values c .. c + 3 of the token whose vector starts at xb (zero past the row's end): X's, or
// what the prologue makes of them.
fn load_x4(xb: u32, c: u32) -> vec4<f32> {
#if X_NORM
  return (raw_x4(xb, c) * x_scale) * norm_w4(c);
#else
#if X_GLU
  let g = raw_x4(xb, c);
  let u = raw_x4(xb + P.cols, c);
  return vec4<f32>(glu_act(g.x), glu_act(g.y), glu_act(g.z), glu_act(g.w)) * u;
#else
  return raw_x4(xb, c);
#endif
#endif
}

// The 32 x values of the unit starting at column c of the token whose vector starts at xb, as
// eight vec4s (constant indices: the software adapters keep them in registers). With X_GLU a loop,
// so that the activation's code is there once rather than 32 times: written out (and 8 times
// more in x_block), SwiftShader took 1.2 s to compile a Q4_K SiLU mat-vec and 7.7 s a GELU one,
// and the loop decodes no slower on lavapipe or SwiftShader (gufo bench --profile).
#if X_LANES
// This thread's lane in its subgroup, set by the kernel's entry point (x_unit loads a vec4 a lane).
var<private> x_lane: u32;
#endif

#if X_STAGE
// The GPU mat-vec's x, XS_UNITS units (from unit x_stage_u0) at a time in workgroup memory:
// stage_x has the workgroup's threads load it side by side (thread t the vec4s t, t + WG, …: one
// coalesced load across a subgroup, and the prologue's norm weight and gate|up loads with it),
// after which each thread reads its own units from here. Thread t reads vec4s 8 · MV_UNITS · t
// onwards; x_stage_at's swizzle spreads eight neighbouring threads' reads over eight different
// 16-byte bank groups (without it all eight would hit the same one, an 8-way bank conflict).
// With INT_DOT the stage holds x's q8_1 blocks instead (xq_stage, XQ_VEC4S vec4s a block:
// neighbouring threads' reads 6 vec4s apart, at most two to a bank group); X_STAGE_F32: the f32 x
// is staged.
var<private> x_stage_u0: u32;
#if INT_DOT
var<workgroup> xq_stage: array<vec4<u32>, XS_UNITS * XQ_VEC4S>;
#else
var<workgroup> x_stage: array<vec4<f32>, XS_UNITS * 8u>;
const XS_SWIZZLE_SHIFT = countTrailingZeros(8u * MV_UNITS);

fn x_stage_at(j: u32) -> u32 {
  return j ^ ((j >> XS_SWIZZLE_SHIFT) & 7u);
}
#endif

// Stages units u0 .. u0 + XS_UNITS − 1 (those before P.units) of the token whose vector starts at
// xb. Every thread calls it (barriers): the first waits for the previous chunk's readers.
fn stage_x(xb: u32, u0: u32, lid: u32) {
  workgroupBarrier();
  x_stage_u0 = u0;
  let units = min(XS_UNITS, P.units - u0);
#if INT_DOT
  for (var j = lid; j < XQ_VEC4S * units; j += WG) {
    xq_stage[j] = XQ[XQ_VEC4S * u0 + j];
  }
#else
  for (var j = lid; j < 8u * units; j += WG) {
    x_stage[x_stage_at(j)] = load_x4(xb, 32u * u0 + 4u * j);
  }
#endif
  workgroupBarrier();
}
#endif

fn x_unit(xb: u32, c: u32) -> array<vec4<f32>, 8> {
#if X_STAGE_F32
  let j = (c >> 2u) - 8u * x_stage_u0;
  return array<vec4<f32>, 8>(
    x_stage[x_stage_at(j)], x_stage[x_stage_at(j + 1u)], x_stage[x_stage_at(j + 2u)], x_stage[x_stage_at(j + 3u)],
    x_stage[x_stage_at(j + 4u)], x_stage[x_stage_at(j + 5u)], x_stage[x_stage_at(j + 6u)], x_stage[x_stage_at(j + 7u)],
  );
#else
#if X_LANES
  var x: array<vec4<f32>, 8>;
  #unroll L 0 {{X_LOADS}} 1
  {
    let v = load_x4(xb, c + 4u * ({{X_LANES}}u * {{L}}u + x_lane));
    #unroll K 0 {{X_LANES}} 1
    x[{{X_LANES}}u * {{L}}u + {{K}}u] = subgroupBroadcast(v, {{K}}u);
    #endunroll
  }
  #endunroll
  return x;
#else
#if X_GLU
  var x: array<vec4<f32>, 8>;
  for (var i = 0u; i < 8u; i++) {
    x[i] = load_x4(xb, c + 4u * i);
  }
  return x;
#else
  return array<vec4<f32>, 8>(
    load_x4(xb, c), load_x4(xb, c + 4u), load_x4(xb, c + 8u), load_x4(xb, c + 12u),
    load_x4(xb, c + 16u), load_x4(xb, c + 20u), load_x4(xb, c + 24u), load_x4(xb, c + 28u),
  );
#endif
#endif
#endif
}

#if INT_DOT
// x as q8_1 blocks of 32 values, as llama.cpp's integer mat-vec (mul_mat_vecq) reads it: written
// once per token by matmul.wgsl's quantize_x, then read by the types' integer steps, which dot
// their codes with it four bytes at a time (dot4I8Packed). Block b is XQ[3b .. 3b + 2]: its 32
// int8 codes as 8 packed words (word i: values 4i .. 4i + 3, low byte first), then d and
// s = d · Σ q as f32 bits. As ggml's quantize_row_q8_1: d = max |x| / 127, q = round(x / d), half
// away from zero (d and s kept in f32 rather than f16).
@group(0) @binding(7) var<storage, read_write> XQ: array<vec4<u32>>;
// A block's vec4s in XQ, as matmul.ts sizes the buffer (XQ_BLOCK_BYTES): codes 0–15, 16–31, then d and s.
const XQ_VEC4S = {{XQ_VEC4S}}u;
const_assert XQ_VEC4S == 3u;

struct XQ8 {
  // codes of values 0 .. 15 and 16 .. 31
  lo: vec4<u32>,
  hi: vec4<u32>,
  d: f32,
  s: f32,
}

fn xq_block(b: u32) -> XQ8 {
#if X_STAGE
  let i = XQ_VEC4S * (b - x_stage_u0);
  let ds = xq_stage[i + 2u];
  return XQ8(xq_stage[i], xq_stage[i + 1u], bitcast<f32>(ds.x), bitcast<f32>(ds.y));
#else
  let i = XQ_VEC4S * b;
  let ds = XQ[i + 2u];
  return XQ8(XQ[i], XQ[i + 1u], bitcast<f32>(ds.x), bitcast<f32>(ds.y));
#endif
}

// C's roundf: to the nearest integer, halves away from zero (WGSL's round takes halves to even).
// v − trunc(v) is exact, so the comparison decides the tie as roundf does.
fn round_away(v: vec4<f32>) -> vec4<f32> {
  let t = trunc(v);
  return t + select(vec4<f32>(0.0), sign(v), abs(v - t) >= vec4<f32>(0.5));
}

// Block b of the token's x at xb (load_x4: with the prologue) into XQ.
fn quantize_block(xb: u32, b: u32) {
  var x: array<vec4<f32>, 8>;
  var amax = vec4<f32>(0.0);
  for (var i = 0u; i < 8u; i++) {
    x[i] = load_x4(xb, 32u * b + 4u * i);
    amax = max(amax, abs(x[i]));
  }
  let d = max(max(amax.x, amax.y), max(amax.z, amax.w)) / 127.0;
  let id = select(0.0, 1.0 / d, d != 0.0);
  var words: array<u32, 8>;
  var sum = vec4<i32>(0);
  for (var i = 0u; i < 8u; i++) {
    let q = vec4<i32>(round_away(x[i] * id));
    sum += q;
    words[i] = pack4xI8(q);
  }
  let i = XQ_VEC4S * b;
  XQ[i] = vec4<u32>(words[0], words[1], words[2], words[3]);
  XQ[i + 1u] = vec4<u32>(words[4], words[5], words[6], words[7]);
  XQ[i + 2u] = vec4<u32>(bitcast<u32>(d), bitcast<u32>(f32(sum.x + sum.y + sum.z + sum.w) * d), 0u, 0u);
}

// Σ of the codes of 16 values (four packed words), for the steps that take x's sum per 16.
fn xq_sum16(w: vec4<u32>) -> i32 {
  let one = 0x01010101u;
  return dot4I8Packed(w.x, one) + dot4I8Packed(w.y, one) + dot4I8Packed(w.z, one) + dot4I8Packed(w.w, one);
}

// Σ q·x over 16 values: q four words of int8 codes (a type's unsigned codes are below 128), x the
// block's words beside them.
fn qdot16(q: vec4<u32>, x: vec4<u32>) -> i32 {
  return dot4I8Packed(q.x, x.x) + dot4I8Packed(q.y, x.y) + dot4I8Packed(q.z, x.z) + dot4I8Packed(q.w, x.w);
}
#endif

// Σ w · x over a unit, w its eight decoded vec4s.
fn unit_dot(w: array<vec4<f32>, 8>, x: array<vec4<f32>, 8>) -> f32 {
  return dot(w[0], x[0]) + dot(w[1], x[1]) + dot(w[2], x[2]) + dot(w[3], x[3])
    + dot(w[4], x[4]) + dot(w[5], x[5]) + dot(w[6], x[6]) + dot(w[7], x[7]);
}
