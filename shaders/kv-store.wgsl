// The KV cache and its writer.
//
// Cache layout, per layer one buffer for K and one for V, or where those outgrow one binding, a
// pair per part of whole KV heads: [position][kvHead][headDim] over the part's KV heads, stored as
// u32 words. With KV_F16 (the default, as llama.cpp's F16 cache) a word holds two halves
// (pack2x16float); otherwise each f32 takes one word (its bits). The attention kernels
// (attention-prefill.wgsl, attention-decode.wgsl) read it through attention-keys.wgsl.
//
// `store_kv` writes the batch's K (rotated by RoPE) and V rows at positions pos0 .. pos0 + nTokens - 1,
// reading them from rows of inStride elements per token (k from qkOffset, v from vOffset, at the
// part's first KV head) and writing rows of kvStride elements (the part's heads): separate
// k and v buffers, or one fused q|k|v row read twice. (A one-token decode step stores its own row
// inside attention-decode.wgsl instead.)

#include "rope.wgsl"

override KV_F16: bool = true;

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
