// KV cache element types (the KV_K and KV_V overrides) and the layout of the quantized ones.
//
// F32: a word per element (its bits); F16: two halves a word (pack2x16float). Q8_0 and Q4_0 take
// llama.cpp's bytes per element (34 and 18 bytes a block of 32) but not its block structs, which
// do not align to words: the cache is cut into groups of two blocks (KV_GROUP consecutive
// elements), each group its codes as words (Q8_0: int8 codes, 4 a word; Q4_0: code + 8 as 4 bits,
// 8 a word; element i of a word in its i-th byte or nibble), then one word of both blocks' f16
// scales d, the first block's low. value = code · d, as ggml's dequantize_row_q8_0 / q4_0.
// Writers quantize as ggml's quantize_row_q8_0_ref / q4_0_ref, bit for bit.
//
// llama.cpp's attention rotation (llama-kv-cache.cpp's attn_rot_k / attn_rot_v): with a quantized
// cache and heads of a multiple of 64, K and the query (chunks of K_ROT, the largest power of two
// from 64 up that divides the head) and V (chunks of V_ROT = 64) are multiplied by an orthonormal
// Walsh-Hadamard matrix before the cache, and the attention output by V's again (H·H = I): scores
// and outputs stay the same, but each block quantizes values whose outliers are spread over the
// chunk. 0: no rotation (code divides by max(K_ROT, 1u): a zero divisor fails pipeline
// creation even in a branch never taken).
override K_ROT: u32 = 0u;
override V_ROT: u32 = 0u;

const KV_F32: u32 = 0u;
const KV_F16: u32 = 1u;
const KV_Q8_0: u32 = 2u;
const KV_Q4_0: u32 = 3u;

const KV_BLOCK: u32 = 32u;
const KV_GROUP: u32 = 2u * KV_BLOCK;
// A group's words at most (Q8_0's).
const KV_MAX_GROUP_WORDS: u32 = KV_GROUP / 4u + 1u;

fn kv_quantized(t: u32) -> bool {
  return t >= KV_Q8_0;
}

fn kv_codes_per_word(t: u32) -> u32 {
  return select(8u, 4u, t == KV_Q8_0);
}

fn kv_group_words(t: u32) -> u32 {
  return KV_GROUP / kv_codes_per_word(t) + 1u;
}

// The word holding element e's code.
fn kv_code_word(t: u32, e: u32) -> u32 {
  return (e / KV_GROUP) * kv_group_words(t) + (e % KV_GROUP) / kv_codes_per_word(t);
}

// The word holding the scales of element e's group.
fn kv_scale_word(t: u32, e: u32) -> u32 {
  return (e / KV_GROUP + 1u) * kv_group_words(t) - 1u;
}

// d of element e's block, from its group's scale word.
fn kv_scale(scales: u32, e: u32) -> f32 {
  return unpack2x16float(scales)[(e / KV_BLOCK) & 1u];
}

// Element e's code (from the word holding it), signed.
fn kv_code(t: u32, word: u32, e: u32) -> f32 {
  if (t == KV_Q8_0) {
    return f32(extractBits(bitcast<i32>(word), 8u * (e & 3u), 8u));
  }
  return f32(extractBits(word, 4u * (e & 7u), 4u)) - 8.0;
}

// Elements e and e + 1 (e even).
fn kv_pair(t: u32, word: u32, scales: u32, e: u32) -> vec2<f32> {
  return vec2<f32>(kv_code(t, word, e), kv_code(t, word, e + 1u)) * kv_scale(scales, e);
}

// Four codes from element e on (e a multiple of 4), in one word.
fn kv_quad(t: u32, word: u32, e: u32) -> vec4<f32> {
  return vec4<f32>(kv_code(t, word, e), kv_code(t, word, e + 1u), kv_code(t, word, e + 2u), kv_code(t, word, e + 3u));
}

// The bits of x as an f16, rounded to nearest even as ggml's GGML_FP32_TO_FP16 (pack2x16float
// leaves the rounding to the implementation).
fn f16_bits(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  let sign = (b >> 16u) & 0x8000u;
  let a = b & 0x7fffffffu;
  let e = i32(a >> 23u) - 127;
  if (e >= 16) {
    return sign | 0x7c00u;
  }
  var m = a & 0x7fffffu;
  var s = 13u;
  var h = (u32(e + 15) << 10u);
  if (e < -14) {
    // A subnormal half: the significand with its leading 1, in units of 2^-24.
    if (e < -25) {
      return sign;
    }
    m |= 0x800000u;
    s = u32(-e - 1);
    h = 0u;
  }
  h += m >> s;
  let rest = m & ((1u << s) - 1u);
  let half = 1u << (s - 1u);
  if (rest > half || (rest == half && (h & 1u) == 1u)) {
    h += 1u;  // a carry into the exponent is right, up to infinity
  }
  return sign | h;
}

// x · H[i][j] but for the scale: Sylvester's Hadamard matrix is (−1)^popcount(i & j) / √n.
fn hadamard_term(i: u32, j: u32, x: f32) -> f32 {
  return select(x, -x, (countOneBits(i & j) & 1u) == 1u);
}

// H's scale, 1/√n as llama.cpp's 1.0 / sqrtf(n).
fn hadamard_scale(n: u32) -> f32 {
  return 1.0 / sqrt(f32(n));
}

// x rounded half away from zero, as C's roundf.
fn round_away(x: f32) -> f32 {
  let a = abs(x);
  let t = trunc(a);
  return sign(x) * select(t, t + 1.0, a - t >= 0.5);
}

// a − c·b, exactly but for the last rounding (Dekker's product): which of two quotients is nearer.
fn residual(a: f32, c: f32, b: f32) -> f32 {
  let p = c * b;
  let ch = 4097.0 * c - (4097.0 * c - c);
  let bh = 4097.0 * b - (4097.0 * b - b);
  let cl = c - ch;
  let bl = b - bh;
  let err = ((ch * bh - p) + ch * bl + cl * bh) + cl * bl;
  return (a - p) - err;
}

// a / b rounded to nearest, as a CPU divides: WGSL's division may miss by an ulp or two, so the
// quotient's neighbours are tried against the exact remainder.
fn div_rn(a: f32, b: f32) -> f32 {
  let q = a / b;
  var best = q;
  var r = abs(residual(a, q, b));
  for (var s = 0u; s < 2u; s++) {
    let c = bitcast<f32>(select(bitcast<u32>(q) - 1u, bitcast<u32>(q) + 1u, s == 1u));
    let rc = abs(residual(a, c, b));
    if (rc < r) {
      best = c;
      r = rc;
    }
  }
  return best;
}

// One block quantized: its code words (Q4_0: the first 4) and its scale's f16 bits.
struct KvBlock {
  codes: array<u32, 8>,
  d: u32,
}

fn kv_quantize(t: u32, x: ptr<function, array<f32, KV_BLOCK>>) -> KvBlock {
  var amax = 0.0;
  var signedMax = 0.0;
  for (var j = 0u; j < KV_BLOCK; j++) {
    let a = abs((*x)[j]);
    if (a > amax) {
      amax = a;
      signedMax = (*x)[j];
    }
  }
  var d = signedMax / -8.0;
  if (t == KV_Q8_0) {
    d = div_rn(amax, 127.0);
  }
  let id = select(0.0, div_rn(1.0, d), d != 0.0);
  var out: KvBlock;
  out.d = f16_bits(d);
  for (var j = 0u; j < 8u; j++) {
    out.codes[j] = 0u;
  }
  for (var j = 0u; j < KV_BLOCK; j++) {
    let y = (*x)[j] * id;
    if (t == KV_Q8_0) {
      out.codes[j / 4u] |= (u32(i32(round_away(y))) & 0xffu) << (8u * (j & 3u));
    } else {
      // C's (int8_t)(y + 8.5f): truncation, of a sum rounded to f32 first.
      let z = y + 8.5;
      out.codes[j / 8u] |= min(15u, u32(z)) << (4u * (j & 7u));
    }
  }
  return out;
}

// A whole group's words (codes, then the scale word) from its 64 values.
fn kv_group(t: u32, x: ptr<function, array<f32, KV_GROUP>>) -> array<u32, KV_MAX_GROUP_WORDS> {
  var out: array<u32, KV_MAX_GROUP_WORDS>;
  let half = kv_group_words(t) / 2u;
  var scales = 0u;
  for (var c = 0u; c < 2u; c++) {
    var block: array<f32, KV_BLOCK>;
    for (var j = 0u; j < KV_BLOCK; j++) {
      block[j] = (*x)[c * KV_BLOCK + j];
    }
    let q = kv_quantize(t, &block);
    for (var w = 0u; w < half; w++) {
      out[c * half + w] = q.codes[w];
    }
    scales |= q.d << (16u * c);
  }
  out[2u * half] = scales;
  return out;
}
