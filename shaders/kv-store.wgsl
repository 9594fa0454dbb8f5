// Causal self-attention with grouped-query heads over a preallocated KV cache.
//
// Cache layout, one buffer per layer for K and one for V: [position][kvHead][headDim], stored as
// u32 words. With KV_F16 (the default, as llama.cpp's F16 cache) a word holds two halves
// (pack2x16float); otherwise each f32 takes one word (its bits).
//
// `store_kv` writes the batch's K (rotated by RoPE) and V rows at positions pos0 .. pos0 + nTokens - 1.
// `attention` runs one workgroup per (head, token) of a batch (prefill; a one-token step runs
// attention-decode.wgsl's flash decoding instead): it rotates the query (position pos0 + t), which
// sees keys 0 ..= pos0 + t, or with a sliding window only the last `window` of them; without
// CAUSAL (an encoder, whose whole input is one batch) it sees every key up to the batch's last.
// Keys are visited in tiles of WG with an online softmax (running max and sum), so any context length works
// with a fixed amount of workgroup memory. Scores are dot(q, k) · scale, soft-capped as llama.cpp
// does for gemma2 (c · tanh(s / c)) when softcap is set. `attention_sinks` (gpt-oss) adds a learned
// logit per head, sinks[h], to each softmax's denominator only, as ggml_soft_max_ext does with sinks:
// it joins the running max and sum after the last tile and takes no value row.
//
// The inputs (q for attention, k and v for store_kv) are rows of inStride elements per token, each
// starting at its offset: separate q, k, v buffers, or one fused q|k|v row read three ways.

#include "rope.wgsl"

override KV_F16: bool = true;
override CAUSAL: bool = true;

#struct AttentionUniform

#include "step.wgsl"
#include "tanh.wgsl"

const WG: u32 = 64u;
const MAX_HEAD_DIM: u32 = 256u;
const DIMS_PER_THREAD: u32 = MAX_HEAD_DIM / WG;
const NEG: f32 = -3.0e38;

@group(0) @binding(0) var<uniform> p: AttentionUniform;
@group(0) @binding(1) var<uniform> step: StepUniform;

// store_kv
@group(0) @binding(2) var<storage, read> kIn: array<f32>;
@group(0) @binding(3) var<storage, read> vIn: array<f32>;
@group(0) @binding(4) var<storage, read_write> kStore: array<u32>;
@group(0) @binding(5) var<storage, read_write> vStore: array<u32>;
@group(0) @binding(6) var<storage, read> ropeTable: array<vec2<f32>>;

// attention
@group(0) @binding(2) var<storage, read> q: array<f32>;
@group(0) @binding(3) var<storage, read> kCache: array<u32>;
@group(0) @binding(4) var<storage, read> vCache: array<u32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
@group(0) @binding(7) var<storage, read> sinks: array<f32>;

// Elements of cached rows; `e` is an element index into the cache (even for pairs).
fn k_pair(e: u32) -> vec2<f32> {
  if (KV_F16) {
    return unpack2x16float(kCache[e >> 1u]);
  }
  return vec2<f32>(bitcast<f32>(kCache[e]), bitcast<f32>(kCache[e + 1u]));
}

fn v_elem(e: u32) -> f32 {
  if (KV_F16) {
    return unpack2x16float(vCache[e >> 1u])[e & 1u];
  }
  return bitcast<f32>(vCache[e]);
}

// Dimension d of the K row of one head starting at element `base` of kIn, rotated for position pos.
fn rope_k(base: u32, d: u32, pos: u32) -> f32 {
  if (d >= p.nRot) {
    return kIn[base + d];
  }
  let r = rope_pair(d, p.nRot, p.neox != 0u);
  return rope_rotate(kIn[base + d], kIn[base + r.partner], ropeTable[pos * (p.nRot / 2u) + r.pair], r.first);
}

@compute @workgroup_size(WG)
fn store_kv(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  // One invocation per pair of elements of one token's K (and V) row.
  let pairsPerRow = p.kvStride / 2u;
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= step.nTokens * pairsPerRow) {
    return;
  }
  let t = i / pairsPerRow;
  let j = i % pairsPerRow;
  let src = t * p.inStride + p.vOffset + 2u * j;
  let dst = (step.pos0 + t) * p.kvStride + 2u * j;  // element index in the cache
  let headBase = t * p.inStride + p.qkOffset + (2u * j / p.headDim) * p.headDim;
  let d = (2u * j) % p.headDim;
  let k = vec2<f32>(rope_k(headBase, d, step.pos0 + t), rope_k(headBase, d + 1u, step.pos0 + t));
  let v = vec2<f32>(vIn[src], vIn[src + 1u]);
  if (KV_F16) {
    kStore[dst >> 1u] = pack2x16float(k);
    vStore[dst >> 1u] = pack2x16float(v);
  } else {
    kStore[dst] = bitcast<u32>(k.x);
    kStore[dst + 1u] = bitcast<u32>(k.y);
    vStore[dst] = bitcast<u32>(v.x);
    vStore[dst + 1u] = bitcast<u32>(v.y);
  }
}

var<workgroup> qs: array<f32, MAX_HEAD_DIM>;
var<workgroup> probs: array<f32, WG>;
#include "reduce.wgsl"

@compute @workgroup_size(WG)
fn attention(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  attend(wid.x, wid.y, lid, NEG);
}

@compute @workgroup_size(WG)
fn attention_sinks(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  attend(wid.x, wid.y, lid, sinks[wid.x]);
}

// Head h of token t; `sink` joins the softmax's denominator (NEG: none).
fn attend(h: u32, t: u32, lid: u32, sink: f32) {
  let kvh = h / (p.nHead / p.nKvHead);
  let qBase = t * p.inStride + p.qkOffset + h * p.headDim;
  let outBase = t * p.qStride + h * p.headDim;
  let pos = step.pos0 + t;       // the query's position
  var last = pos;                // the last key it sees: itself, or the batch's last without CAUSAL
  if (!CAUSAL) {
    last = step.pos0 + step.nTokens - 1u;
  }
  var first = 0u;                // the first key it sees
  if (p.window != 0u && pos >= p.window) {
    first = pos + 1u - p.window;
  }
  for (var d = lid; d < p.headDim; d += WG) {
    var x = q[qBase + d];
    if (d < p.nRot) {
      let r = rope_pair(d, p.nRot, p.neox != 0u);
      x = rope_rotate(x, q[qBase + r.partner], ropeTable[pos * (p.nRot / 2u) + r.pair], r.first);
    }
    qs[d] = x;
  }
  workgroupBarrier();

  let kvBase = kvh * p.headDim;  // element offset of this kv head within a cached row
  var m = NEG;                   // running max of the scores
  var l = 0.0;                   // running sum of exp(score - m)
  var acc: array<f32, DIMS_PER_THREAD>;
  for (var start = first; start <= last; start += WG) {
    let j = start + lid;
    var s = NEG;
    if (j <= last) {
      let row = j * p.kvStride + kvBase;
      var dot = 0.0;
      for (var d = 0u; d < p.headDim; d += 2u) {
        let k = k_pair(row + d);
        dot += qs[d] * k.x + qs[d + 1u] * k.y;
      }
      s = dot * p.scale;
      if (p.softcap != 0.0) {
        s = p.softcap * tanh_f32(s * p.invSoftcap);
      }
    }
    let mNew = max(m, reduce_max(lid, s));
    var e = 0.0;
    if (j <= last) {
      e = exp(s - mNew);
    }
    probs[lid] = e;
    let corr = exp(m - mNew);
    l = l * corr + reduce_sum(lid, e);  // the barriers in reduce_sum also publish probs
    let count = min(WG, last + 1u - start);
    for (var c = 0u; c < DIMS_PER_THREAD; c++) {
      let d = lid + c * WG;
      if (d < p.headDim) {
        var a = acc[c] * corr;
        for (var jj = 0u; jj < count; jj++) {
          a += probs[jj] * v_elem((start + jj) * p.kvStride + kvBase + d);
        }
        acc[c] = a;
      }
    }
    m = mNew;
    workgroupBarrier();  // probs is rewritten by the next tile
  }
  let mSink = max(m, sink);
  let corr = exp(m - mSink);
  let denom = l * corr + exp(sink - mSink);
  for (var c = 0u; c < DIMS_PER_THREAD; c++) {
    let d = lid + c * WG;
    if (d < p.headDim) {
      out[outBase + d] = acc[c] * corr / denom;
    }
  }
}
