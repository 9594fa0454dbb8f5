// Token sampling on the GPU: one workgroup reads the logits and writes the chosen token id, so
// only that id (4 bytes) goes back to the CPU per step. Follows llama.cpp's sampler chain:
//   penalties -> top-k -> top-p -> min-p -> temperature -> draw
// temperature <= 0 is greedy (the first largest logit after penalties).
//
// With top-k on and k <= 256 (llama.cpp's default chain has top-k 40), the k candidates are
// gathered into workgroup memory, sorted, and top-p, min-p and the draw walk that short list in
// order of probability, as llama.cpp does.
// Otherwise filters keep every token whose logit is at least a threshold, found without sorting
// the vocabulary, on "keys" (f32 bits mapped to u32 so that key order is float order):
//   top-k: the key of the k-th largest logit, by a 4-digitPass radix select (8 bits a digitPass);
//   top-p: the largest key whose tail mass (tokens at or above it) still reaches p of the
//          total, by bisection over the key space (32 passes);
//   min-p: logit >= max + ln(min_p).
// The draw walks the kept tokens in id order, so it is deterministic for a given seed and step.
//
// The random draw of a step is a hash of the seed and the position the chosen token will take
// (pos0 + nTokens), so a run is reproducible from its seed.
//
// Penalties use a ring of recent token ids in `state` (prompt tokens are put there by the CPU;
// each sampled token is appended here), as llama.cpp's penalties sampler counts them.
//
// Constrained output (JSON mode): the *_masked entry points read a bit mask of the allowed ids
// (written by the CPU before each step) and give every other token the logit NEG after the
// penalties, before any filter; the filters then keep nothing at or below NEG (`floor`), so every
// path draws only allowed tokens. top_logprobs reads the raw logits: OpenAI's log-probabilities
// are those of the model, not of the constrained distribution.
//
// With log-probabilities asked for, top_logprobs runs first and leaves the raw logits' log-sum-exp
// in out[1]; the draw then turns it into the chosen token's own log-probability, so a token drawn
// from outside the top list still gets its true value.

#struct SampleUniform

#include "step.wgsl"

const WG: u32 = 256u;
const RING: u32 = 256u;
const NEG: f32 = -3.0e38;

@group(0) @binding(0) var<uniform> p: SampleUniform;
@group(0) @binding(1) var<uniform> step: StepUniform;
@group(0) @binding(2) var<storage, read> logits: array<f32>;
// sample
@group(0) @binding(3) var<storage, read_write> work: array<f32>;
// state: [0] tokens in the ring (<= RING), [1] next write slot, [2 ..] the ring
@group(0) @binding(4) var<storage, read_write> state: array<u32>;
// out: [0] the chosen token, [1] its raw log-probability bits (with top_logprobs); top_logprobs
// writes [2 + 2r] = id, [3 + 2r] = log-probability bits
@group(0) @binding(5) var<storage, read_write> out: array<u32>;
// *_masked: bit i of mask[i / 32] set = token i allowed
@group(0) @binding(6) var<storage, read> mask: array<u32>;

// (red: array<f32, WG> comes with reduce.wgsl.)
var<workgroup> redU: array<u32, WG>;
var<workgroup> hist: array<atomic<u32>, 256>;
var<workgroup> recent: array<u32, RING>;
var<workgroup> shared0: u32;
var<workgroup> shared1: u32;
var<workgroup> candCount: atomic<u32>;
var<workgroup> candZ: array<f32, WG>;
var<workgroup> candId: array<u32, WG>;

fn key_of(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  if ((b >> 31u) != 0u) {
    return ~b;
  }
  return b | 0x80000000u;
}

#include "reduce.wgsl"

// (value, index) argmax: larger value wins, then the smaller index. Entries not `before` the
// previous pick (pv, pi) are excluded, so repeated calls walk the ranking.
fn better(v: f32, i: u32, bv: f32, bi: u32) -> bool {
  return v > bv || (v == bv && i < bi);
}

fn reduce_argmax(lid: u32, v: f32, i: u32) -> u32 {
  red[lid] = v;
  redU[lid] = i;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (lid < s && better(red[lid + s], redU[lid + s], red[lid], redU[lid])) {
      red[lid] = red[lid + s];
      redU[lid] = redU[lid + s];
    }
    workgroupBarrier();
  }
  let r = redU[0];
  workgroupBarrier();
  return r;
}

fn hash(x: u32) -> u32 {
  // PCG output permutation (O'Neill), a good 32-bit integer hash.
  let s = x * 747796405u + 2891336453u;
  let w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
  return (w >> 22u) ^ w;
}

fn uniform01(seed: u32, counter: u32) -> f32 {
  return f32(hash(hash(seed) ^ counter) >> 8u) / 16777216.0;
}

// Number of kept tokens (key >= threshold) and their mass exp(logit - m).
fn tail_mass(lid: u32, threshold: u32, m: f32) -> f32 {
  var s = 0.0;
  for (var i = lid; i < p.vocab; i += WG) {
    let z = work[i];
    if (key_of(z) >= threshold) {
      s += exp(z - m);
    }
  }
  return reduce_sum(lid, s);
}

fn apply_penalties(lid: u32) {
  let stored = min(state[0], RING);
  let n = min(stored, p.lastN);
  let next = state[1];
  // The n most recent ids, oldest first.
  if (lid < n) {
    recent[lid] = state[2u + (next + RING - n + lid) % RING];
  }
  workgroupBarrier();
  if (lid < n) {
    let tok = recent[lid];
    var first = true;
    var count = 0u;
    for (var j = 0u; j < n; j++) {
      if (recent[j] == tok) {
        count++;
        if (j < lid) {
          first = false;
        }
      }
    }
    if (first && tok < p.vocab) {
      var z = work[tok];
      if (z <= 0.0) {
        z *= p.repeatPenalty;
      } else {
        z /= p.repeatPenalty;
      }
      work[tok] = z - f32(count) * p.frequencyPenalty - p.presencePenalty;
    }
  }
  storageBarrier();
}

// The key of the k-th largest logit in `work`.
fn radix_select(lid: u32, k: u32) -> u32 {
  var prefix = 0u;
  var mask = 0u;
  var remaining = k;
  for (var digitPass = 0u; digitPass < 4u; digitPass++) {
    let shift = 24u - 8u * digitPass;
    atomicStore(&hist[lid], 0u);
    workgroupBarrier();
    for (var i = lid; i < p.vocab; i += WG) {
      let key = key_of(work[i]);
      if ((key & mask) == prefix) {
        atomicAdd(&hist[(key >> shift) & 255u], 1u);
      }
    }
    workgroupBarrier();
    if (lid == 0u) {
      var cum = 0u;
      var b = 255i;
      for (; b >= 0i; b--) {
        let c = atomicLoad(&hist[u32(b)]);
        if (cum + c >= remaining) {
          break;
        }
        cum += c;
      }
      shared0 = prefix | (u32(max(b, 0i)) << shift);
      shared1 = remaining - cum;
    }
    workgroupBarrier();
    prefix = shared0;
    remaining = shared1;
    mask |= 255u << shift;
    workgroupBarrier();
  }
  return prefix;
}

// Gathers the tokens with key >= threshold into candZ/candId, sorted by logit (then id); returns
// how many there are, or 0xffffffff when more than WG tie at the threshold (no short list then).
fn gather_candidates(lid: u32, threshold: u32) -> u32 {
  if (lid == 0u) {
    atomicStore(&candCount, 0u);
  }
  candZ[lid] = NEG;
  candId[lid] = 0xffffffffu;
  workgroupBarrier();
  for (var i = lid; i < p.vocab; i += WG) {
    let z = work[i];
    if (key_of(z) >= threshold) {
      let slot = atomicAdd(&candCount, 1u);
      if (slot < WG) {
        candZ[slot] = z;
        candId[slot] = i;
      }
    }
  }
  workgroupBarrier();
  if (lid == 0u) {
    shared0 = atomicLoad(&candCount);
  }
  let count = workgroupUniformLoad(&shared0);
  if (count > WG) {
    return 0xffffffffu;
  }
  // Bitonic sort, one element per invocation: larger logit first, then smaller id.
  for (var k = 2u; k <= WG; k <<= 1u) {
    for (var j = k >> 1u; j > 0u; j >>= 1u) {
      let other = lid ^ j;
      if (other > lid) {
        let ascending = (lid & k) == 0u;  // this block's direction: "ascending" = best first
        let swap = better(candZ[other], candId[other], candZ[lid], candId[lid]) == ascending;
        if (swap) {
          let z = candZ[lid];
          let id = candId[lid];
          candZ[lid] = candZ[other];
          candId[lid] = candId[other];
          candZ[other] = z;
          candId[other] = id;
        }
      }
      workgroupBarrier();
    }
  }
  return count;
}

// top-k (the first k), top-p, min-p, temperature and the draw over the sorted short list, by one
// invocation: at most WG entries.
fn draw_from_candidates(count: u32) -> u32 {
  let n = min(count, p.topK);
  let m = candZ[0];
  var keep = n;
  if (p.topP < 1.0) {
    var z = 0.0;
    for (var i = 0u; i < n; i++) {
      z += exp(candZ[i] - m);
    }
    var cum = 0.0;
    for (var i = 0u; i < n; i++) {
      cum += exp(candZ[i] - m) / z;
      if (cum >= p.topP) {
        keep = i + 1u;
        break;
      }
    }
  }
  if (p.minP > 0.0) {
    let floor = log(p.minP);
    var i = 1u;
    while (i < keep && candZ[i] - m >= floor) {
      i++;
    }
    keep = i;
  }
  let invT = 1.0 / p.temperature;
  var total = 0.0;
  for (var i = 0u; i < keep; i++) {
    total += exp((candZ[i] - m) * invT);
  }
  let goal = uniform01(p.seed, step.pos0 + step.nTokens) * total;
  var acc = 0.0;
  for (var i = 0u; i < keep; i++) {
    acc += exp((candZ[i] - m) * invT);
    if (acc > goal) {
      return candId[i];
    }
  }
  return candId[keep - 1u];
}

// The full-vocabulary path: thresholds on keys (top-k by radix select, top-p by bisection, min-p),
// then a draw in id order over the kept tokens. `m` is the largest logit; no key below `floor` is kept.
fn sample_vocabulary(lid: u32, m: f32, floor: u32) -> u32 {
  var threshold = floor;
  if (p.topK > 0u && p.topK < p.vocab) {
    threshold = max(threshold, radix_select(lid, p.topK));
  }
  if (p.topP < 1.0) {
    let goal = p.topP * tail_mass(lid, threshold, m);
    var lo = threshold;
    var hi = key_of(m);
    for (var it = 0u; it < 32u; it++) {
      let mid = lo + (hi - lo + 1u) / 2u;
      let ok = tail_mass(lid, mid, m) >= goal;
      lo = select(lo, mid, ok);
      hi = select(mid - 1u, hi, ok);
    }
    threshold = lo;
  }
  if (p.minP > 0.0) {
    threshold = max(threshold, key_of(m + log(p.minP)));
  }
  threshold = min(threshold, key_of(m));  // the most likely token always stays

  // Draw: each invocation owns a contiguous chunk of ids; the chunk sums are scanned in order.
  let chunk = (p.vocab + WG - 1u) / WG;
  let begin = min(lid * chunk, p.vocab);
  let end = min(begin + chunk, p.vocab);
  let invT = 1.0 / p.temperature;
  var s = 0.0;
  for (var i = begin; i < end; i++) {
    let z = work[i];
    if (key_of(z) >= threshold) {
      s += exp((z - m) * invT);
    }
  }
  red[lid] = s;
  workgroupBarrier();
  if (lid == 0u) {
    var total = 0.0;
    for (var c = 0u; c < WG; c++) {
      total += red[c];
    }
    let goal = uniform01(p.seed, step.pos0 + step.nTokens) * total;
    var acc = 0.0;
    var owner = 0u;
    for (var c = 0u; c < WG; c++) {
      if (red[c] > 0.0) {
        owner = c;  // the last chunk with mass, in case rounding leaves goal past the end
        if (acc + red[c] > goal) {
          break;
        }
        acc += red[c];
      }
    }
    shared0 = owner;
    red[0] = goal - acc;  // what is left to walk inside the owner's chunk
  }
  workgroupBarrier();
  let owner = shared0;
  let left = red[0];
  workgroupBarrier();
  if (lid == owner) {
    var acc = 0.0;
    var pick = 0xffffffffu;
    for (var i = begin; i < end; i++) {
      let z = work[i];
      if (key_of(z) >= threshold) {
        pick = i;
        acc += exp((z - m) * invT);
        if (acc > left) {
          break;
        }
      }
    }
    shared1 = pick;
  }
  workgroupBarrier();
  return shared1;
}

// The logits with penalties applied, into work[].
fn prepare(lid: u32) {
  for (var i = lid; i < p.vocab; i += WG) {
    work[i] = logits[i];
  }
  storageBarrier();
  if (p.lastN > 0u && (p.repeatPenalty != 1.0 || p.frequencyPenalty != 0.0 || p.presencePenalty != 0.0)) {
    apply_penalties(lid);
  }
}

fn largest_logit(lid: u32) -> f32 {
  var mx = NEG;
  for (var i = lid; i < p.vocab; i += WG) {
    mx = max(mx, work[i]);
  }
  return reduce_max(lid, mx);
}

// Publishes the chosen token and appends it to the penalty ring.
fn finish(lid: u32, chosen: u32) {
  if (lid == 0u) {
    out[0] = chosen;
    if (p.nLogprobs > 0u) {
      out[1] = bitcast<u32>(logits[chosen] - bitcast<f32>(out[1]));
    }
    let next = state[1];
    state[2u + next] = chosen;
    state[1] = (next + 1u) % RING;
    state[0] = min(state[0] + 1u, RING);
  }
}

// Tokens the mask does not allow get NEG (after the penalties, which could not push it further).
fn apply_mask(lid: u32) {
  for (var i = lid; i < p.vocab; i += WG) {
    if ((mask[i >> 5u] & (1u << (i & 31u))) == 0u) {
      work[i] = NEG;
    }
  }
  storageBarrier();
}

// Keys a masked draw keeps: above NEG's.
fn masked_floor() -> u32 {
  return key_of(NEG) + 1u;
}

// temperature <= 0.
fn pick_greedy(lid: u32) -> u32 {
  var bv = NEG;
  var bi = 0xffffffffu;
  for (var i = lid; i < p.vocab; i += WG) {
    let z = work[i];
    if (better(z, i, bv, bi)) {
      bv = z;
      bi = i;
    }
  }
  return reduce_argmax(lid, bv, bi);
}

// 0 < topK <= WG: the short sorted list.
fn pick_top_k(lid: u32, floor: u32) -> u32 {
  let m = largest_logit(lid);
  let count = gather_candidates(lid, max(floor, radix_select(lid, p.topK)));
  if (count == 0xffffffffu) {
    return sample_vocabulary(lid, m, floor);  // more than WG tokens tie at the k-th logit
  }
  if (lid == 0u) {
    shared1 = draw_from_candidates(count);
  }
  return workgroupUniformLoad(&shared1);
}

// Six entry points, one per path with and without a mask, so each pipeline holds only the code
// (and the bindings) it uses; the host picks one per generation from the same parameters.

@compute @workgroup_size(WG)
fn sample_greedy(@builtin(local_invocation_index) lid: u32) {
  prepare(lid);
  finish(lid, pick_greedy(lid));
}

@compute @workgroup_size(WG)
fn sample_top_k(@builtin(local_invocation_index) lid: u32) {
  prepare(lid);
  finish(lid, pick_top_k(lid, 0u));
}

// Any other setting.
@compute @workgroup_size(WG)
fn sample_vocab(@builtin(local_invocation_index) lid: u32) {
  prepare(lid);
  finish(lid, sample_vocabulary(lid, largest_logit(lid), 0u));
}

@compute @workgroup_size(WG)
fn sample_greedy_masked(@builtin(local_invocation_index) lid: u32) {
  prepare(lid);
  apply_mask(lid);
  finish(lid, pick_greedy(lid));
}

@compute @workgroup_size(WG)
fn sample_top_k_masked(@builtin(local_invocation_index) lid: u32) {
  prepare(lid);
  apply_mask(lid);
  finish(lid, pick_top_k(lid, masked_floor()));
}

@compute @workgroup_size(WG)
fn sample_vocab_masked(@builtin(local_invocation_index) lid: u32) {
  prepare(lid);
  apply_mask(lid);
  finish(lid, sample_vocabulary(lid, largest_logit(lid), masked_floor()));
}

// The nLogprobs most likely tokens of the raw logits, with their natural-log probabilities, and
// the log-sum-exp (out[1]) from which the draw after it gives the chosen token's.
@compute @workgroup_size(WG)
fn top_logprobs(@builtin(local_invocation_index) lid: u32) {
  var mx = NEG;
  for (var i = lid; i < p.vocab; i += WG) {
    mx = max(mx, logits[i]);
  }
  let m = reduce_max(lid, mx);
  var s = 0.0;
  for (var i = lid; i < p.vocab; i += WG) {
    s += exp(logits[i] - m);
  }
  let logZ = m + log(reduce_sum(lid, s));
  if (lid == 0u) {
    out[1] = bitcast<u32>(logZ);
  }
  var pv = 3.0e38;
  var pi = 0xffffffffu;
  for (var r = 0u; r < p.nLogprobs; r++) {
    var bv = NEG;
    var bi = 0xffffffffu;
    for (var i = lid; i < p.vocab; i += WG) {
      let z = logits[i];
      // Strictly after the previous pick in the ranking.
      let after = z < pv || (z == pv && (pi == 0xffffffffu || i > pi));
      if (after && better(z, i, bv, bi)) {
        bv = z;
        bi = i;
      }
    }
    let best = reduce_argmax(lid, bv, bi);
    pv = logits[best];
    pi = best;
    if (lid == 0u) {
      out[2u + 2u * r] = best;
      out[3u + 2u * r] = bitcast<u32>(pv - logZ);
    }
  }
}
