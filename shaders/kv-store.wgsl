// The KV cache and its writer.
//
// Cache layout, per layer one buffer for K and one for V, or where those outgrow one binding, a
// pair per part of whole KV heads: [position][kvHead][headDim] over the part's KV heads, stored as
// u32 words of the cache's type (KV_K, KV_V: kv-quant.wgsl's F32, F16 (the default, as llama.cpp's),
// Q8_0 or Q4_0; K and V each their own). The attention kernels (attention-prefill.wgsl,
// attention-decode.wgsl) read it through attention-keys.wgsl.
//
// `store_kv` writes the batch's K (rotated by RoPE) and V rows at positions pos0 .. pos0 + nTokens - 1,
// reading them from rows of inStride elements per token (k from qkOffset, v from vOffset, at the
// part's first KV head) and writing rows of kvStride elements (the part's heads): separate k and v
// buffers, or one fused q|k|v row read twice; it writes the F32 and F16 caches, a pair of elements an
// invocation. `store_kv_quant` writes the quantized ones, a group of two blocks an invocation (blocks
// outside the batch's rows, where a group straddles its edge, are kept). (A one-token decode step
// stores its own row inside attention-decode.wgsl instead.)

#include "rope.wgsl"
#include "kv-quant.wgsl"

override KV_K: u32 = KV_F16;
override KV_V: u32 = KV_F16;

#struct AttentionUniform

#include "step.wgsl"

const WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: AttentionUniform;
@group(0) @binding(1) var<uniform> step: StepUniform;
@group(0) @binding(2) var<storage, read> kIn: array<f32>;
@group(0) @binding(3) var<storage, read> vIn: array<f32>;
@group(0) @binding(4) var<storage, read_write> kStore: array<u32>;
@group(0) @binding(5) var<storage, read_write> vStore: array<u32>;
@group(0) @binding(6) var<storage, read> ropeTable: array<vec2<f32>>;

// Dimension d of the K row of one head starting at element `base` of kIn, rotated for position pos.
fn rope_k(base: u32, d: u32, pos: u32) -> f32 {
  if (d >= p.nRot) {
    return kIn[base + d];
  }
  let r = rope_pair(d, p.nRot, p.neox != 0u);
  return rope_rotate(kIn[base + d], kIn[base + r.partner], ropeTable[rope_cell(pos, p.nRot, r.pair)], r.first);
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
  if (KV_K == KV_F16) {
    kStore[dst >> 1u] = pack2x16float(k);
  } else if (KV_K == KV_F32) {
    kStore[dst] = bitcast<u32>(k.x);
    kStore[dst + 1u] = bitcast<u32>(k.y);
  }
  if (KV_V == KV_F16) {
    vStore[dst >> 1u] = pack2x16float(v);
  } else if (KV_V == KV_F32) {
    vStore[dst] = bitcast<u32>(v.x);
    vStore[dst + 1u] = bitcast<u32>(v.y);
  }
}

// Cache element e (of the batch's rows) of K or V, as store_kv_quant writes it: rotated by RoPE,
// and by K_ROT's (V_ROT's) Hadamard matrix.
fn k_elem(e: u32) -> f32 {
  let t = e / p.kvStride - step.pos0;
  let j = e % p.kvStride;
  let base = t * p.inStride + p.qkOffset + (j / p.headDim) * p.headDim;
  let d = j % p.headDim;
  if (K_ROT == 0u) {
    return rope_k(base, d, step.pos0 + t);
  }
  let i = d % max(K_ROT, 1u);
  var s = 0.0;
  for (var c = 0u; c < K_ROT; c++) {
    s += hadamard_term(i, c, rope_k(base, d - i + c, step.pos0 + t));
  }
  return s * hadamard_scale(K_ROT);
}

fn v_elem(e: u32) -> f32 {
  let row = (e / p.kvStride - step.pos0) * p.inStride + p.vOffset;
  let j = e % p.kvStride;
  if (V_ROT == 0u) {
    return vIn[row + j];
  }
  let i = j % max(V_ROT, 1u);
  var s = 0.0;
  for (var c = 0u; c < V_ROT; c++) {
    s += hadamard_term(i, c, vIn[row + j - i + c]);
  }
  return s * hadamard_scale(V_ROT);
}

// A block's cache words, its scale merged into the group's scale word (whose other half stays).
struct StoredBlock {
  codes: array<u32, 8>,
  scales: u32,
}

fn stored_block(t: u32, e: u32, x: ptr<function, array<f32, KV_BLOCK>>, oldScales: u32) -> StoredBlock {
  let q = kv_quantize(t, x);
  let shift = 16u * ((e / KV_BLOCK) & 1u);
  return StoredBlock(q.codes, (oldScales & ~(0xffffu << shift)) | (q.d << shift));
}

@compute @workgroup_size(WG)
fn store_kv_quant(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let begin = step.pos0 * p.kvStride;
  let end = begin + step.nTokens * p.kvStride;
  let group = begin / KV_GROUP + gid.x + gid.y * nwg.x * WG;
  if (group * KV_GROUP >= end) {
    return;
  }
  for (var c = 0u; c < 2u; c++) {
    let e0 = group * KV_GROUP + c * KV_BLOCK;
    if (e0 < begin || e0 >= end) {
      continue;
    }
    var x: array<f32, KV_BLOCK>;
    if (kv_quantized(KV_K)) {
      for (var j = 0u; j < KV_BLOCK; j++) {
        x[j] = k_elem(e0 + j);
      }
      let s = kv_scale_word(KV_K, e0);
      let b = stored_block(KV_K, e0, &x, kStore[s]);
      for (var w = 0u; w < KV_BLOCK / kv_codes_per_word(KV_K); w++) {
        kStore[kv_code_word(KV_K, e0) + w] = b.codes[w];
      }
      kStore[s] = b.scales;
    }
    if (kv_quantized(KV_V)) {
      for (var j = 0u; j < KV_BLOCK; j++) {
        x[j] = v_elem(e0 + j);
      }
      let s = kv_scale_word(KV_V, e0);
      let b = stored_block(KV_V, e0, &x, vStore[s]);
      for (var w = 0u; w < KV_BLOCK / kv_codes_per_word(KV_V); w++) {
        vStore[kv_code_word(KV_V, e0) + w] = b.codes[w];
      }
      vStore[s] = b.scales;
    }
  }
}
