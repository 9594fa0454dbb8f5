// Mixture-of-experts routing and combining, as llama.cpp's build_moe_ffn. A token's pairs are its
// `used` (token, expert) choices, pair index = token · used + slot.
//   moe_route:          one workgroup per token. Softmax gating: softmax of the router logits, the
//                       `used` most probable experts in descending order (ties to the lower id)
//                       into ids, their probabilities into weights, divided by their sum (clamped
//                       below at 2^-14, as llama.cpp) when `norm` is set. softmax_weight gating
//                       (gpt-oss): the `used` largest logits, weighted by the softmax of those alone.
//   moe_group:          one workgroup: groups the batch's pairs by expert into the routing table
//                       the expert matmul reads (matmul.wgsl, EXPERTS): [0] the tile count; tile i
//                       at 4 + 3i: (expert, first pair entry, pairs); each expert's pairs in order
//                       from pairs_at, cut into tiles of `tile`.
//   moe_combine:        x[t] += Σ_slot weights · down[pair], summed in slot order as llama.cpp adds.
//   moe_combine_shared: the same plus shared[t] · sigmoid(gate[t]) (qwen2moe's shared expert).
//   moe_add_bias:       rows[pair] += bias[expert of the pair] (gpt-oss's expert biases), rows of `width`.
// The token count comes from the step uniform.

#struct MoeUniform

#include "step.wgsl"

const WG: u32 = 64u;
// Most experts per layer (hparams.ts MAX_EXPERTS).
const MAX_EXPERTS: u32 = 512u;
// Below every logit and probability: a chosen expert's score, then the lowest a search starts from.
const CHOSEN: f32 = -3.0e38;
const LOWEST: f32 = -3.4e38;

@group(0) @binding(0) var<uniform> p: MoeUniform;
@group(0) @binding(1) var<uniform> step: StepUniform;
// moe_route
@group(0) @binding(2) var<storage, read> logits: array<f32>;
@group(0) @binding(3) var<storage, read_write> ids: array<u32>;
@group(0) @binding(4) var<storage, read_write> weights: array<f32>;
// moe_group
@group(0) @binding(3) var<storage, read> chosen: array<u32>;
@group(0) @binding(5) var<storage, read_write> table: array<u32>;
// moe_combine
@group(0) @binding(4) var<storage, read> pair_weights: array<f32>;
@group(0) @binding(6) var<storage, read_write> x: array<f32>;
@group(0) @binding(7) var<storage, read> down: array<f32>;
@group(0) @binding(8) var<storage, read> shared_out: array<f32>;
@group(0) @binding(9) var<storage, read> shared_gate: array<f32>;
// moe_add_bias (with chosen)
@group(0) @binding(10) var<storage, read_write> rows: array<f32>;
@group(0) @binding(11) var<storage, read> bias: array<f32>;

#include "reduce.wgsl"

var<workgroup> probs: array<f32, MAX_EXPERTS>;
var<workgroup> best_p: array<f32, WG>;
var<workgroup> best_e: array<u32, WG>;

@compute @workgroup_size(WG)
fn moe_route(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let t = wid.x;
  if (t >= step.nTokens) {
    return;
  }
  let base = t * p.experts;
  if (p.gating == 0u) {
    softmax_logits(base, lid);
  } else {
    for (var e = lid; e < p.experts; e += WG) {
      probs[e] = logits[base + e];
    }
  }
  workgroupBarrier();

  // `used` rounds of argmax; a chosen expert's score is set to CHOSEN, below all others.
  let out = t * p.used;
  for (var k = 0u; k < p.used; k++) {
    var bp = LOWEST;
    var be = 0u;
    for (var e = lid; e < p.experts; e += WG) {
      if (probs[e] > bp) {
        bp = probs[e];
        be = e;
      }
    }
    best_p[lid] = bp;
    best_e[lid] = be;
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
      if (lid < stride) {
        let op = best_p[lid + stride];
        let oe = best_e[lid + stride];
        if (op > best_p[lid] || (op == best_p[lid] && oe < best_e[lid])) {
          best_p[lid] = op;
          best_e[lid] = oe;
        }
      }
      workgroupBarrier();
    }
    if (lid == 0u) {
      ids[out + k] = best_e[0];
      weights[out + k] = best_p[0];
      probs[best_e[0]] = CHOSEN;
    }
    workgroupBarrier();
  }
  if (lid == 0u && p.gating == 1u) {
    softmax_chosen(out);
  }
  if (lid == 0u && p.norm != 0u) {
    var sum = 0.0;
    for (var k = 0u; k < p.used; k++) {
      sum += weights[out + k];
    }
    sum = max(sum, 6.103515625e-5);
    for (var k = 0u; k < p.used; k++) {
      weights[out + k] = weights[out + k] / sum;
    }
  }
}

// probs = softmax of the router logits of the token at `base`.
fn softmax_logits(base: u32, lid: u32) {
  var m = LOWEST;
  for (var e = lid; e < p.experts; e += WG) {
    m = max(m, logits[base + e]);
  }
  m = reduce_max(lid, m);
  var s = 0.0;
  for (var e = lid; e < p.experts; e += WG) {
    let v = exp(logits[base + e] - m);
    probs[e] = v;
    s += v;
  }
  // As ggml_soft_max: the exponentials times the inverse of their sum.
  let inv = 1.0 / reduce_sum(lid, s);
  for (var e = lid; e < p.experts; e += WG) {
    probs[e] = probs[e] * inv;
  }
}

// The chosen logits at weights[out..] become their softmax (ggml_soft_max over the `used` of them).
fn softmax_chosen(out: u32) {
  var m = weights[out];
  for (var k = 1u; k < p.used; k++) {
    m = max(m, weights[out + k]);
  }
  var s = 0.0;
  for (var k = 0u; k < p.used; k++) {
    let v = exp(weights[out + k] - m);
    weights[out + k] = v;
    s += v;
  }
  let inv = 1.0 / s;
  for (var k = 0u; k < p.used; k++) {
    weights[out + k] = weights[out + k] * inv;
  }
}

var<workgroup> counts: array<u32, MAX_EXPERTS>;
var<workgroup> firsts: array<u32, MAX_EXPERTS>;
var<workgroup> tiles_before: array<u32, MAX_EXPERTS>;

@compute @workgroup_size(WG)
fn moe_group(@builtin(local_invocation_index) lid: u32) {
  let pairs = step.nTokens * p.used;
  for (var e = lid; e < p.experts; e += WG) {
    var c = 0u;
    for (var q = 0u; q < pairs; q++) {
      c += select(0u, 1u, chosen[q] == e);
    }
    counts[e] = c;
  }
  workgroupBarrier();
  if (lid == 0u) {
    var at = p.pairs_at;
    var tiles = 0u;
    for (var e = 0u; e < p.experts; e++) {
      firsts[e] = at;
      tiles_before[e] = tiles;
      at += counts[e];
      tiles += (counts[e] + p.tile - 1u) / p.tile;
    }
    table[0] = tiles;
  }
  workgroupBarrier();
  for (var e = lid; e < p.experts; e += WG) {
    var j = firsts[e];
    for (var q = 0u; q < pairs; q++) {
      if (chosen[q] == e) {
        table[j] = q;
        j++;
      }
    }
    let c = counts[e];
    for (var i = 0u; i * p.tile < c; i++) {
      let at = 4u + 3u * (tiles_before[e] + i);
      table[at] = e;
      table[at + 1u] = firsts[e] + i * p.tile;
      table[at + 2u] = min(p.tile, c - i * p.tile);
    }
  }
}

fn index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return gid.x + gid.y * nwg.x * WG;
}

// Σ over token t's slots of weight · down output, element c.
fn experts_sum(t: u32, c: u32) -> f32 {
  let first = t * p.used;
  var acc = pair_weights[first] * down[first * p.width + c];
  for (var k = 1u; k < p.used; k++) {
    acc += pair_weights[first + k] * down[(first + k) * p.width + c];
  }
  return acc;
}

@compute @workgroup_size(WG)
fn moe_combine(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= step.nTokens * p.width) {
    return;
  }
  x[i] = x[i] + experts_sum(i / p.width, i % p.width);
}

@compute @workgroup_size(WG)
fn moe_combine_shared(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= step.nTokens * p.width) {
    return;
  }
  let t = i / p.width;
  let gate = 1.0 / (1.0 + exp(-shared_gate[t]));
  x[i] = x[i] + (experts_sum(t, i % p.width) + shared_out[i] * gate);
}

@compute @workgroup_size(WG)
fn moe_add_bias(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= step.nTokens * p.used * p.width) {
    return;
  }
  let pair = i / p.width;
  rows[i] = rows[i] + bias[chosen[pair] * p.width + i % p.width];
}
