// What the attention kernels (attention-prefill.wgsl, attention-decode.wgsl) share: the keys a
// query sees, a key's score, the rotated query, and reads of the KV cache (layout: kv-store.wgsl).
// The including file declares p (AttentionUniform), q, ropeTable, KV_K and KV_V (kv-quant.wgsl's
// types), and the caches twice: kCache, vCache as u32 words and kCache4, vCache4 as vec4<u32> (the
// same bindings). Quantized caches are decoded here, so both kernels and both shapes read them.

#include "rope.wgsl"
#include "tanh.wgsl"
#include "kv-quant.wgsl"

const NEG: f32 = -3.0e38;

// A dispatch covers one part of a split cache (kv-store.wgsl): the KV heads kvHead0 .. and their
// query heads. The query head of workgroup x of a head-indexed grid:
fn part_head(x: u32) -> u32 {
  return p.kvHead0 * (p.nHead / p.nKvHead) + x;
}

// Where KV head kvh starts in a row of the part's cache.
fn kv_head_base(kvh: u32) -> u32 {
  return (kvh - p.kvHead0) * p.headDim;
}

// The first key the token at `pos` sees: 0, or the start of its sliding window.
fn first_key(pos: u32) -> u32 {
  if (p.window != 0u && pos >= p.window) {
    return pos + 1u - p.window;
  }
  return 0u;
}

// A key's score from its dot product with the query: scaled, and soft-capped when softcap is set
// (c · tanh(s / c), as llama.cpp does for gemma2).
fn score(qk: f32) -> f32 {
  let s = qk * p.scale;
  if (p.softcap != 0.0) {
    return p.softcap * tanh_f32(s * p.invSoftcap);
  }
  return s;
}

// Element d of the query head starting at element `base` of q, rotated for position pos (and by
// K_ROT's Hadamard matrix, as the K cache).
fn query_elem(base: u32, d: u32, pos: u32) -> f32 {
  if (K_ROT == 0u) {
    return roped_query(base, d, pos);
  }
  let i = d % max(K_ROT, 1u);
  var s = 0.0;
  for (var j = 0u; j < K_ROT; j++) {
    s += hadamard_term(i, j, roped_query(base, d - i + j, pos));
  }
  return s * hadamard_scale(K_ROT);
}

fn roped_query(base: u32, d: u32, pos: u32) -> f32 {
  let x = q[base + d];
  if (d >= p.nRot) {
    return x;
  }
  let r = rope_pair(d, p.nRot, p.neox != 0u);
  return rope_rotate(x, q[base + r.partner], ropeTable[rope_cell(pos, p.nRot, r.pair)], r.first);
}

// Elements e and e + 1 (e even) of a cache.
fn k_pair(e: u32) -> vec2<f32> {
  if (KV_K == KV_F16) {
    return unpack2x16float(kCache[e >> 1u]);
  }
  if (KV_K == KV_F32) {
    return vec2<f32>(bitcast<f32>(kCache[e]), bitcast<f32>(kCache[e + 1u]));
  }
  return kv_pair(KV_K, kCache[kv_code_word(KV_K, e)], kCache[kv_scale_word(KV_K, e)], e);
}

fn v_pair(e: u32) -> vec2<f32> {
  if (KV_V == KV_F16) {
    return unpack2x16float(vCache[e >> 1u]);
  }
  if (KV_V == KV_F32) {
    return vec2<f32>(bitcast<f32>(vCache[e]), bitcast<f32>(vCache[e + 1u]));
  }
  return kv_pair(KV_V, vCache[kv_code_word(KV_V, e)], vCache[kv_scale_word(KV_V, e)], e);
}

// Elements e .. e + 7 of a cache (e a multiple of 8) through its vec4 view, for the CPU shapes,
// whose lanes load one at a time: one vec4 of halves, two of floats, or the code words and scale
// word of a quantized cache. The words are loaded (k_words, v_words: elements row + d .., row a
// multiple of 8, so that the row's part of the index is worked out once for all its d) apart from
// their decoding (oct_of), so a kernel can load a whole row before it uses any of it.
struct Oct {
  lo: vec4<f32>,
  hi: vec4<f32>,
}

// The words of an Oct: F16 `a`; F32 `a` and `b`; quantized a.x, a.y (Q8_0's second) the code
// words and a.z the scale word.
struct OctWords {
  a: vec4<u32>,
  b: vec4<u32>,
}

fn oct_of(t: u32, words: OctWords, e: u32) -> Oct {
  let w = words.a;
  if (t == KV_F16) {
    return Oct(vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y)), vec4<f32>(unpack2x16float(w.z), unpack2x16float(w.w)));
  }
  if (t == KV_F32) {
    return Oct(bitcast<vec4<f32>>(w), bitcast<vec4<f32>>(words.b));
  }
  let d = kv_scale(w.z, e);
  if (t == KV_Q8_0) {
    return Oct(kv_quad(t, w.x, 0u) * d, kv_quad(t, w.y, 0u) * d);
  }
  return Oct(kv_quad(t, w.x, 0u) * d, kv_quad(t, w.x, 4u) * d);
}

fn k_word(w: u32) -> u32 {
  return kCache4[w >> 2u][w & 3u];
}

fn v_word(w: u32) -> u32 {
  return vCache4[w >> 2u][w & 3u];
}

fn k_words(row: u32, d: u32) -> OctWords {
  if (KV_K == KV_F16) {
    return OctWords(kCache4[(row >> 3u) + d / 8u], vec4<u32>());
  }
  if (KV_K == KV_F32) {
    return OctWords(kCache4[(row >> 2u) + d / 4u], kCache4[(row >> 2u) + d / 4u + 1u]);
  }
  let e = row + d;
  let w = kv_code_word(KV_K, e);
  return OctWords(vec4<u32>(k_word(w), select(0u, k_word(w + 1u), KV_K == KV_Q8_0), k_word(kv_scale_word(KV_K, e)), 0u), vec4<u32>());
}

fn v_words(row: u32, d: u32) -> OctWords {
  if (KV_V == KV_F16) {
    return OctWords(vCache4[(row >> 3u) + d / 8u], vec4<u32>());
  }
  if (KV_V == KV_F32) {
    return OctWords(vCache4[(row >> 2u) + d / 4u], vCache4[(row >> 2u) + d / 4u + 1u]);
  }
  let e = row + d;
  let w = kv_code_word(KV_V, e);
  return OctWords(vec4<u32>(v_word(w), select(0u, v_word(w + 1u), KV_V == KV_Q8_0), v_word(kv_scale_word(KV_V, e)), 0u), vec4<u32>());
}

fn k_oct(e: u32) -> Oct {
  return oct_of(KV_K, k_words(e, 0u), e);
}

fn v_oct(e: u32) -> Oct {
  return oct_of(KV_V, v_words(e, 0u), e);
}
