// What the attention kernels (attention-prefill.wgsl, attention-decode.wgsl) share: the keys a
// query sees, a key's score, the rotated query, and reads of the KV cache (layout: kv-store.wgsl).
// The including file declares p (AttentionUniform), q, ropeTable, KV_F16, and the caches twice:
// kCache, vCache as u32 words and kCache4, vCache4 as vec4<u32> (the same bindings).

#include "rope.wgsl"
#include "tanh.wgsl"

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

// Element d of the query head starting at element `base` of q, rotated for position pos.
fn query_elem(base: u32, d: u32, pos: u32) -> f32 {
  let x = q[base + d];
  if (d >= p.nRot) {
    return x;
  }
  let r = rope_pair(d, p.nRot, p.neox != 0u);
  return rope_rotate(x, q[base + r.partner], ropeTable[pos * (p.nRot / 2u) + r.pair], r.first);
}

// Elements e and e + 1 (e even) of a cache.
fn k_pair(e: u32) -> vec2<f32> {
  if (KV_F16) {
    return unpack2x16float(kCache[e >> 1u]);
  }
  return vec2<f32>(bitcast<f32>(kCache[e]), bitcast<f32>(kCache[e + 1u]));
}

fn v_pair(e: u32) -> vec2<f32> {
  if (KV_F16) {
    return unpack2x16float(vCache[e >> 1u]);
  }
  return vec2<f32>(bitcast<f32>(vCache[e]), bitcast<f32>(vCache[e + 1u]));
}

// Elements e .. e + 7 of a cache (e a multiple of 8), from one vec4 word of halves or two of floats:
// whole-vector loads for the CPU shapes, whose lanes load one at a time.
struct Oct {
  lo: vec4<f32>,
  hi: vec4<f32>,
}

fn oct(words: vec4<u32>, next: vec4<u32>) -> Oct {
  if (KV_F16) {
    return Oct(vec4<f32>(unpack2x16float(words.x), unpack2x16float(words.y)), vec4<f32>(unpack2x16float(words.z), unpack2x16float(words.w)));
  }
  return Oct(bitcast<vec4<f32>>(words), bitcast<vec4<f32>>(next));
}

fn k_oct(e: u32) -> Oct {
  if (KV_F16) {
    return oct(kCache4[e >> 3u], vec4<u32>());
  }
  return oct(kCache4[e >> 2u], kCache4[(e >> 2u) + 1u]);
}

fn v_oct(e: u32) -> Oct {
  if (KV_F16) {
    return oct(vCache4[e >> 3u], vec4<u32>());
  }
  return oct(vCache4[e >> 2u], vCache4[(e >> 2u) + 1u]);
}
