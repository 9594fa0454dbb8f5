// Decode attention as flash decoding: one token's query heads over the whole KV cache, the key
// range split across workgroups so a long context keeps every core (or SM) busy.
//
// `attend_split` runs one workgroup per (block of query heads that share one KV head, split of the
// key range): it reads each K and V row of its split once for all its query heads and leaves, per
// head, the split's running max m, sum l = Σ exp(s − m) and acc = Σ exp(s − m)·v in `part`.
// `attend_merge` runs one workgroup per query head and combines the splits (and a sink, gpt-oss):
// out = Σ acc_s·exp(m_s − M) / (Σ l_s·exp(m_s − M) + exp(sink − M)), M the largest of them.
//
// Inside a split, keys go in tiles of TILE with four barriers a tile and none per key:
//   scores: lane i dots key i (and i + WG) with every query head of the block (a K row per lane, read once);
//   max:    LANES_PER_HEAD lanes a head each take the max of SPAN scores;
//   exp:    the same lanes turn their scores into exp(s − m) against the new running max, and sum them;
//   values: lanes own pairs of V dimensions (lane-contiguous rows, read once for every head of the
//           block) and add each key's weighted V; with narrow heads, several key groups side by side.
// Every lane keeps the running max and sum of each head itself: all compute them from the same
// numbers, so they agree without a broadcast.
//
// The cache layout is kv-store.wgsl's: [position][kvHead][headDim] elements as words of the
// caches' types KV_K and KV_V, over the KV heads of one part of the cache (split and merge run per
// part). The query is rotated by RoPE as it is loaded (position pos0). Scores are dot(q, k)·scale,
// soft-capped when softcap is set; a sliding window keeps the last `window` keys.
//
// With STORE (the engine's decode step), the workgroups whose keys include the token's own position
// first write its K (rotated) and V rows (kNew, vNew: rows of kvInStride from kOffset and vOffset)
// into the cache, then read them back as any other key, so no store_kv dispatch runs before; every
// head block of that split writes the same row. A quantized cache is written a group of two blocks
// a lane (ops.ts fuses the store only where a head is whole groups).
//
// part: word 0 holds the split count (the grid's y, which the merge cannot see), then per head and
// split [m, l, acc[headDim]].

override KV_K: u32 = KV_F16;
override KV_V: u32 = KV_F16;
override STORE: bool = false;

#struct AttentionUniform

#include "step.wgsl"

const WG: u32 = 64u;
// Query heads per workgroup at most (AttentionUniform.headBlock): the registers each lane keeps per head.
const MAX_HB: u32 = 8u;
// headBlock · headDim at most: the rotated queries in workgroup memory.
const MAX_Q: u32 = 1024u;
const MAX_HEAD_DIM: u32 = 256u;
// Partials per query head at most (splits, times LANES in the CPU shape).
const MAX_SPLITS: u32 = 64u;
// Pairs of V dimensions per lane at most (a 256-wide head over 64 lanes).
const PPL: u32 = MAX_HEAD_DIM / 2u / WG;
const TILE: u32 = 2u * WG;
const LANES_PER_HEAD: u32 = WG / MAX_HB;
const SPAN: u32 = TILE / LANES_PER_HEAD;

@group(0) @binding(0) var<uniform> p: AttentionUniform;
@group(0) @binding(1) var<uniform> step: StepUniform;
@group(0) @binding(2) var<storage, read> q: array<f32>;
@group(0) @binding(3) var<storage, read_write> kCache: array<u32>;
@group(0) @binding(4) var<storage, read_write> vCache: array<u32>;
@group(0) @binding(5) var<storage, read_write> part: array<f32>;
@group(0) @binding(6) var<storage, read> ropeTable: array<vec2<f32>>;
@group(0) @binding(9) var<storage, read> kNew: array<f32>;
@group(0) @binding(10) var<storage, read> vNew: array<f32>;

// attend_split_cpu: the same caches, a vec4 a load.
@group(0) @binding(3) var<storage, read_write> kCache4: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> vCache4: array<vec4<u32>>;

// merge
@group(0) @binding(2) var<storage, read> partIn: array<f32>;
@group(0) @binding(7) var<storage, read> sinks: array<f32>;
@group(0) @binding(8) var<storage, read_write> out: array<f32>;

var<workgroup> qs: array<f32, MAX_Q>;
// A tile's scores, then its weights exp(s − m), [head][key]; at the end, the key groups' sums.
var<workgroup> sc: array<f32, MAX_HB * TILE>;
var<workgroup> partMax: array<f32, WG>;
var<workgroup> partSum: array<f32, WG>;
// attend_merge: each split's factor exp(m_s − M).
var<workgroup> factor: array<f32, MAX_SPLITS>;

#include "attention-keys.wgsl"

// A split workgroup's work: its KV head, its block of query heads (h0 .. h0 + hb - 1, blocks of
// headBlock), the token's position and its keys [begin, end).
struct Split {
  kvh: u32,
  h0: u32,
  hb: u32,
  pos: u32,
  begin: u32,
  end: u32,
}

fn split_of(wid: vec3<u32>, splits: u32, headBlock: u32) -> Split {
  let group = p.nHead / p.nKvHead;
  let blocks = (group + headBlock - 1u) / headBlock;
  let kvh = p.kvHead0 + wid.x / blocks;
  let h0 = kvh * group + (wid.x % blocks) * headBlock;
  let pos = step.pos0;
  let first = first_key(pos);
  let chunk = (pos + 1u - first + splits - 1u) / splits;
  let begin = first + wid.y * chunk;
  return Split(kvh, h0, min(headBlock, kvh * group + group - h0), pos, begin, min(begin + chunk, pos + 1u));
}

// The token's K row (rotated for its position) and V row, dimensions d and d + 1 of KV head kvh.
fn new_k_pair(kvh: u32, d: u32, pos: u32) -> vec2<f32> {
  let base = p.kOffset + kvh * p.headDim;
  var k = vec2<f32>(kNew[base + d], kNew[base + d + 1u]);
  for (var c = 0u; c < 2u; c++) {
    if (d + c < p.nRot) {
      let r = rope_pair(d + c, p.nRot, p.neox != 0u);
      k[c] = rope_rotate(kNew[base + d + c], kNew[base + r.partner], ropeTable[rope_cell(pos, p.nRot, r.pair)], r.first);
    }
  }
  return k;
}

fn new_v_pair(kvh: u32, d: u32) -> vec2<f32> {
  let base = p.vOffset + kvh * p.headDim;
  return vec2<f32>(vNew[base + d], vNew[base + d + 1u]);
}

// Cache words of a pair of elements of an F16 or F32 cache: one word of two halves, or two floats.
fn cache_words(t: u32, x: vec2<f32>) -> vec2<u32> {
  if (t == KV_F16) {
    return vec2<u32>(pack2x16float(x), 0u);
  }
  return bitcast<vec2<u32>>(x);
}

// The token's K and V values of group `g` of KV head kvh's row (a head of whole groups) as a
// quantized cache holds them: rotated by K_ROT's (V_ROT's) Hadamard matrix (kv-store.wgsl's k_elem).
fn new_k_group(kvh: u32, g: u32, pos: u32) -> array<f32, KV_GROUP> {
  var x: array<f32, KV_GROUP>;
  for (var j = 0u; j < KV_GROUP; j++) {
    let d = g * KV_GROUP + j;
    if (K_ROT == 0u) {
      x[j] = new_k_pair(kvh, d & ~1u, pos)[d & 1u];
    } else {
      let i = d % max(K_ROT, 1u);
      var s = 0.0;
      for (var c = 0u; c < K_ROT; c += 2u) {
        let k = new_k_pair(kvh, d - i + c, pos);
        s += hadamard_term(i, c, k.x) + hadamard_term(i, c + 1u, k.y);
      }
      x[j] = s * hadamard_scale(K_ROT);
    }
  }
  return x;
}

fn new_v_group(kvh: u32, g: u32) -> array<f32, KV_GROUP> {
  var x: array<f32, KV_GROUP>;
  let row = p.vOffset + kvh * p.headDim;
  for (var j = 0u; j < KV_GROUP; j++) {
    let d = g * KV_GROUP + j;
    if (V_ROT == 0u) {
      x[j] = vNew[row + d];
    } else {
      let i = d % max(V_ROT, 1u);
      var s = 0.0;
      for (var c = 0u; c < V_ROT; c++) {
        s += hadamard_term(i, c, vNew[row + d - i + c]);
      }
      x[j] = s * hadamard_scale(V_ROT);
    }
  }
  return x;
}

// Where a quantized cache's words for group g of the row starting at element `row` begin.
fn group_word(t: u32, row: u32, g: u32) -> u32 {
  return ((row + g * KV_GROUP) / KV_GROUP) * kv_group_words(t);
}

@compute @workgroup_size(WG)
fn attend_split(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let work = split_of(wid, nwg.y, p.headBlock);
  let kvh = work.kvh;
  let h0 = work.h0;
  let hb = work.hb;
  let pos = work.pos;
  let begin = work.begin;
  let end = work.end;

  if (STORE && begin <= pos && pos < end) {
    let row = pos * p.kvStride + kv_head_base(kvh);
    for (var d = 2u * lid; d < p.headDim; d += 2u * WG) {
      let k = cache_words(KV_K, new_k_pair(kvh, d, pos));
      let v = cache_words(KV_V, new_v_pair(kvh, d));
      if (KV_K == KV_F16) {
        kCache[(row + d) >> 1u] = k.x;
      } else if (KV_K == KV_F32) {
        kCache[row + d] = k.x;
        kCache[row + d + 1u] = k.y;
      }
      if (KV_V == KV_F16) {
        vCache[(row + d) >> 1u] = v.x;
      } else if (KV_V == KV_F32) {
        vCache[row + d] = v.x;
        vCache[row + d + 1u] = v.y;
      }
    }
    for (var g = lid; g < p.headDim / KV_GROUP; g += WG) {
      if (kv_quantized(KV_K)) {
        var x = new_k_group(kvh, g, pos);
        let w = kv_group(KV_K, &x);
        let at = group_word(KV_K, row, g);
        for (var i = 0u; i < kv_group_words(KV_K); i++) {
          kCache[at + i] = w[i];
        }
      }
      if (kv_quantized(KV_V)) {
        var x = new_v_group(kvh, g);
        let w = kv_group(KV_V, &x);
        let at = group_word(KV_V, row, g);
        for (var i = 0u; i < kv_group_words(KV_V); i++) {
          vCache[at + i] = w[i];
        }
      }
    }
  }
  storageBarrier();

  for (var i = lid; i < hb * p.headDim; i += WG) {
    qs[i] = query_elem(p.qkOffset + (h0 + i / p.headDim) * p.headDim, i % p.headDim, pos);
  }
  workgroupBarrier();

  let kvBase = kv_head_base(kvh);
  // The values phase: lane → (key group, first pair of V dimensions it owns).
  let pairs = p.headDim / 2u;
  let keyGroups = max(1u, WG / pairs);
  let keyGroup = select(0u, lid / pairs, pairs < WG);
  let pair0 = select(lid, lid % pairs, pairs < WG);
  let valueLane = keyGroup < keyGroups;
  // The max and exp phases: lane → (head, span of the tile).
  let mh = lid / LANES_PER_HEAD;
  let span0 = (lid % LANES_PER_HEAD) * SPAN;

  var m: array<f32, MAX_HB>;
  var l: array<f32, MAX_HB>;
  var acc: array<vec2<f32>, MAX_HB * PPL>;
  for (var g = 0u; g < MAX_HB; g++) {
    m[g] = NEG;
    l[g] = 0.0;
  }
  for (var a = 0u; a < MAX_HB * PPL; a++) {
    acc[a] = vec2<f32>(0.0);
  }

  for (var start = begin; start < end; start += TILE) {
    let count = min(TILE, end - start);
    // scores
    for (var k = 0u; k < TILE / WG; k++) {
      let i = lid + k * WG;
      var dots: array<f32, MAX_HB>;
      for (var g = 0u; g < MAX_HB; g++) {
        dots[g] = 0.0;  // explicitly: some compilers hoist the declaration's zeroing out of the loop
      }
      if (i < count) {
        let row = (start + i) * p.kvStride + kvBase;
        for (var d = 0u; d < p.headDim; d += 2u) {
          let kk = k_pair(row + d);
          for (var g = 0u; g < MAX_HB; g++) {
            if (g < hb) {
              dots[g] += qs[g * p.headDim + d] * kk.x + qs[g * p.headDim + d + 1u] * kk.y;
            }
          }
        }
      }
      for (var g = 0u; g < MAX_HB; g++) {
        var s = NEG;
        if (i < count) {
          s = score(dots[g]);
        }
        sc[g * TILE + i] = s;
      }
    }
    workgroupBarrier();
    // max
    var mx = NEG;
    for (var i = span0; i < span0 + SPAN; i++) {
      mx = max(mx, sc[mh * TILE + i]);
    }
    partMax[lid] = mx;
    workgroupBarrier();
    // exp: every lane takes the new running max of every head; a head's lanes weigh their span.
    var mNew: array<f32, MAX_HB>;
    var mMine = NEG;
    for (var g = 0u; g < MAX_HB; g++) {
      var x = m[g];
      for (var c = 0u; c < LANES_PER_HEAD; c++) {
        x = max(x, partMax[g * LANES_PER_HEAD + c]);
      }
      mNew[g] = x;
      if (g == mh) {
        mMine = x;
      }
    }
    var sum = 0.0;
    for (var i = span0; i < span0 + SPAN; i++) {
      let e = exp(sc[mh * TILE + i] - mMine);
      sc[mh * TILE + i] = e;
      sum += e;
    }
    partSum[lid] = sum;
    workgroupBarrier();
    // values
    for (var g = 0u; g < MAX_HB; g++) {
      let corr = exp(m[g] - mNew[g]);
      var tileSum = 0.0;
      for (var c = 0u; c < LANES_PER_HEAD; c++) {
        tileSum += partSum[g * LANES_PER_HEAD + c];
      }
      l[g] = l[g] * corr + tileSum;
      m[g] = mNew[g];
      for (var k = 0u; k < PPL; k++) {
        acc[g * PPL + k] *= corr;
      }
    }
    if (valueLane) {
      for (var i = keyGroup; i < count; i += keyGroups) {
        let row = (start + i) * p.kvStride + kvBase;
        for (var k = 0u; k < PPL; k++) {
          let pr = pair0 + k * WG;
          if (pr < pairs) {
            let v = v_pair(row + 2u * pr);
            for (var g = 0u; g < MAX_HB; g++) {
              if (g < hb) {
                acc[g * PPL + k] += sc[g * TILE + i] * v;
              }
            }
          }
        }
      }
    }
    workgroupBarrier();
  }

  // Narrow heads: key groups 1.. hand their sums to group 0 through sc.
  if (keyGroups > 1u) {
    if (valueLane && keyGroup > 0u) {
      for (var g = 0u; g < MAX_HB; g++) {
        let at = ((keyGroup - 1u) * MAX_HB + g) * pairs + pair0;
        sc[2u * at] = acc[g * PPL].x;
        sc[2u * at + 1u] = acc[g * PPL].y;
      }
    }
    workgroupBarrier();
    if (keyGroup == 0u) {
      for (var other = 1u; other < keyGroups; other++) {
        for (var g = 0u; g < MAX_HB; g++) {
          let at = ((other - 1u) * MAX_HB + g) * pairs + pair0;
          acc[g * PPL] += vec2<f32>(sc[2u * at], sc[2u * at + 1u]);
        }
      }
    }
  }

  if (wid.x == 0u && wid.y == 0u && lid == 0u) {
    part[0] = bitcast<f32>(nwg.y);
  }
  if (keyGroup == 0u) {
    for (var g = 0u; g < MAX_HB; g++) {
      if (g < hb) {
        let base = 1u + ((h0 + g) * nwg.y + wid.y) * (p.headDim + 2u);
        if (lid == 0u) {
          part[base] = m[g];
          part[base + 1u] = l[g];
        }
        for (var k = 0u; k < PPL; k++) {
          let pr = pair0 + k * WG;
          if (pr < pairs) {
            part[base + 2u + 2u * pr] = acc[g * PPL + k].x;
            part[base + 3u + 2u * pr] = acc[g * PPL + k].y;
          }
        }
      }
    }
  }
}

#if CPU_SHAPE
// The CPU adapters' shape: a workgroup of LANES lanes (one SIMD register of the adapter: lavapipe
// 8, SwiftShader 4) side by side on consecutive keys, each lane with its own running max, sum and
// accumulator for every query head of the block, so there are no barriers and no lane waits for
// another; each lane's state is a partial of its own for the merge (split wid.y · LANES + lane).
// Every load a lane makes is a whole vec4 of its own key's row (a CPU driver loads per lane in a
// loop, so each of those loads should carry useful bytes). The head size and block are constants
// (HEAD_DIM, a multiple of 8; HEAD_BLOCK) so the loops unroll and the queries and accumulators stay
// in registers rather than in memory indexed per lane. Scores are kept for KEYS keys a lane
// between rescales of the accumulators. A K or V row's words are loaded LOAD_DIMS elements at a
// time, all before any is used (OpKernelShapes.rowLoadsFirst): SwiftShader turns each lane's load
// into a branch and keeps the values around branches in memory, so a whole row's loads ahead of
// its arithmetic leave that arithmetic in one block (HEAD_DIM there: 1.26× as fast); llvmpipe
// orders loads itself, and holding a whole row took it longer (8 there).
// With STORE, every lane writes the token's whole K and V rows itself, so the lanes that read that
// row back read their own writes and need no barrier: a barrier makes lavapipe compile the kernel
// as a coroutine, which recomputed the split's integer divisions inside the key loop (1.4× the time).
const HEAD_DIM: u32 = {{HEAD_DIM}}u;
const HEAD_BLOCK: u32 = {{HEAD_BLOCK}}u;
const LANES: u32 = {{LANES}}u;
const KEYS: u32 = {{KEYS}}u;
const Q4: u32 = HEAD_DIM / 4u;
const LOAD_OCTS: u32 = {{LOAD_DIMS}}u / 8u;

@compute @workgroup_size(LANES)
fn attend_split_cpu(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let work = split_of(wid, nwg.y, HEAD_BLOCK);
  let kvh = work.kvh;
  let h0 = work.h0;
  let hb = work.hb;
  let pos = work.pos;
  let begin = work.begin;
  let end = work.end;
  let kvBase = kv_head_base(kvh);

  if (STORE && begin <= pos && pos < end) {
    let row = pos * p.kvStride + kvBase;
    for (var d = 0u; d < HEAD_DIM; d += 2u) {
      let k = cache_words(KV_K, new_k_pair(kvh, d, pos));
      let v = cache_words(KV_V, new_v_pair(kvh, d));
      if (KV_K == KV_F16) {
        let w = (row + d) >> 1u;
        kCache4[w >> 2u][w & 3u] = k.x;
      } else if (KV_K == KV_F32) {
        let w = row + d;
        kCache4[w >> 2u][w & 3u] = k.x;
        kCache4[(w + 1u) >> 2u][(w + 1u) & 3u] = k.y;
      }
      if (KV_V == KV_F16) {
        let w = (row + d) >> 1u;
        vCache4[w >> 2u][w & 3u] = v.x;
      } else if (KV_V == KV_F32) {
        let w = row + d;
        vCache4[w >> 2u][w & 3u] = v.x;
        vCache4[(w + 1u) >> 2u][(w + 1u) & 3u] = v.y;
      }
    }
    for (var g = 0u; g < HEAD_DIM / KV_GROUP; g++) {
      if (kv_quantized(KV_K)) {
        var x = new_k_group(kvh, g, pos);
        let w = kv_group(KV_K, &x);
        let at = group_word(KV_K, row, g);
        for (var i = 0u; i < kv_group_words(KV_K); i++) {
          kCache4[(at + i) >> 2u][(at + i) & 3u] = w[i];
        }
      }
      if (kv_quantized(KV_V)) {
        var x = new_v_group(kvh, g);
        let w = kv_group(KV_V, &x);
        let at = group_word(KV_V, row, g);
        for (var i = 0u; i < kv_group_words(KV_V); i++) {
          vCache4[(at + i) >> 2u][(at + i) & 3u] = w[i];
        }
      }
    }
  }

  var qh: array<vec4<f32>, HEAD_BLOCK * Q4>;
  var acc: array<vec4<f32>, HEAD_BLOCK * Q4>;
  var m: array<f32, HEAD_BLOCK>;
  var l: array<f32, HEAD_BLOCK>;
  for (var g = 0u; g < HEAD_BLOCK; g++) {
    m[g] = NEG;
    l[g] = 0.0;
    let qBase = p.qkOffset + (h0 + min(g, hb - 1u)) * HEAD_DIM;
    for (var j = 0u; j < Q4; j++) {
      let d = 4u * j;
      qh[g * Q4 + j] = vec4<f32>(query_elem(qBase, d, pos), query_elem(qBase, d + 1u, pos), query_elem(qBase, d + 2u, pos), query_elem(qBase, d + 3u, pos));
      acc[g * Q4 + j] = vec4<f32>(0.0);
    }
  }
  // The dot products and the weighted V sum are written out per eighth of a row and per query head
  // (#unroll), so qh and acc are indexed by constants: CPU drivers keep such arrays in registers
  // or fixed stack slots, while a variable index makes each access a loop over the lanes (2.6× the
  // time on lavapipe, 2× on SwiftShader). The loops over keys stay loops: written out too, they
  // slow lavapipe down.
  for (var start = begin; start < end; start += LANES * KEYS) {
    var s: array<f32, HEAD_BLOCK * KEYS>;
    var top: array<f32, HEAD_BLOCK>;
    for (var g = 0u; g < HEAD_BLOCK; g++) {
      top[g] = m[g];
    }
    for (var k = 0u; k < KEYS; k++) {
      let key = start + k * LANES + lid;
      let row = min(key, end - 1u) * p.kvStride + kvBase;
      var dots: array<f32, HEAD_BLOCK>;
      for (var g = 0u; g < HEAD_BLOCK; g++) {
        dots[g] = 0.0;  // explicitly: some compilers hoist the declaration's zeroing out of the loop
      }
      #unroll H 0 {{HEAD_DIM}} {{LOAD_DIMS}}
      {
        var words: array<OctWords, LOAD_OCTS>;
        #unroll D 0 {{LOAD_DIMS}} 8
        words[{{D}}u / 8u] = k_words(row, {{H}}u + {{D}}u);
        #endunroll
        #unroll D 0 {{LOAD_DIMS}} 8
        {
          let kk = oct_of(KV_K, words[{{D}}u / 8u], row + {{H}}u + {{D}}u);
          let j = ({{H}}u + {{D}}u) / 4u;
          #unroll G 0 {{HEAD_BLOCK}} 1
          dots[{{G}}] += dot(qh[{{G}}u * Q4 + j], kk.lo) + dot(qh[{{G}}u * Q4 + j + 1u], kk.hi);
          #endunroll
        }
        #endunroll
      }
      #endunroll
      for (var g = 0u; g < HEAD_BLOCK; g++) {
        let x = select(NEG, score(dots[g]), key < end);
        s[g * KEYS + k] = x;
        top[g] = max(top[g], x);
      }
    }
    // Written out too: SwiftShader keeps the loops over heads and dimensions, so acc's index would
    // be variable (1.2× the kernel's time).
    #unroll G 0 {{HEAD_BLOCK}} 1
    {
      let corr = exp(m[{{G}}] - top[{{G}}]);
      l[{{G}}] *= corr;
      #unroll D 0 {{HEAD_DIM}} 4
      acc[{{G}}u * Q4 + {{D}}u / 4u] *= corr;
      #endunroll
      m[{{G}}] = top[{{G}}];
    }
    #endunroll
    for (var k = 0u; k < KEYS; k++) {
      let key = start + k * LANES + lid;
      let row = min(key, end - 1u) * p.kvStride + kvBase;
      var w: array<f32, HEAD_BLOCK>;
      for (var g = 0u; g < HEAD_BLOCK; g++) {
        w[g] = select(0.0, exp(s[g * KEYS + k] - m[g]), key < end);
        l[g] += w[g];
      }
      #unroll H 0 {{HEAD_DIM}} {{LOAD_DIMS}}
      {
        var words: array<OctWords, LOAD_OCTS>;
        #unroll D 0 {{LOAD_DIMS}} 8
        words[{{D}}u / 8u] = v_words(row, {{H}}u + {{D}}u);
        #endunroll
        #unroll D 0 {{LOAD_DIMS}} 8
        {
          let vv = oct_of(KV_V, words[{{D}}u / 8u], row + {{H}}u + {{D}}u);
          let j = ({{H}}u + {{D}}u) / 4u;
          #unroll G 0 {{HEAD_BLOCK}} 1
          acc[{{G}}u * Q4 + j] += w[{{G}}] * vv.lo;
          acc[{{G}}u * Q4 + j + 1u] += w[{{G}}] * vv.hi;
          #endunroll
        }
        #endunroll
      }
      #endunroll
    }
  }

  let splits = nwg.y * LANES;
  if (wid.x == 0u && wid.y == 0u && lid == 0u) {
    part[0] = bitcast<f32>(splits);
  }
  for (var g = 0u; g < hb; g++) {
    let base = 1u + ((h0 + g) * splits + wid.y * LANES + lid) * (HEAD_DIM + 2u);
    part[base] = m[g];
    part[base + 1u] = l[g];
    for (var j = 0u; j < Q4; j++) {
      for (var c = 0u; c < 4u; c++) {
        part[base + 2u + 4u * j + c] = acc[g * Q4 + j][c];
      }
    }
  }
}
#endif

@compute @workgroup_size(WG)
fn attend_merge(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  merge(part_head(wid.x), lid, NEG);
}

@compute @workgroup_size(WG)
fn attend_merge_sinks(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let h = part_head(wid.x);
  merge(h, lid, sinks[h]);
}

// Head h's output from its splits; `sink` joins the denominator (NEG: none). Each split's factor
// exp(m_s − M) is worked out once, by one lane, rather than by every lane for every dimension.
fn merge(h: u32, lid: u32, sink: f32) {
  let splits = bitcast<u32>(partIn[0]);
  let stride = p.headDim + 2u;
  let base = 1u + h * splits * stride;
  var top = sink;
  for (var s = 0u; s < splits; s++) {
    top = max(top, partIn[base + s * stride]);
  }
  for (var s = lid; s < splits; s += WG) {
    factor[s] = exp(partIn[base + s * stride] - top);
  }
  workgroupBarrier();
  var denom = exp(sink - top);
  for (var s = 0u; s < splits; s++) {
    denom += partIn[base + s * stride + 1u] * factor[s];
  }
  for (var d = lid; d < p.headDim; d += WG) {
    var o = 0.0;
    for (var s = 0u; s < splits; s++) {
      o += partIn[base + s * stride + 2u + d] * factor[s];
    }
    out[h * p.headDim + d] = o / denom;
  }
}
