// Prefill attention as tiled flash attention: a batch's query heads over the KV cache (the batch's
// own K and V rows already stored by kv-store.wgsl), with an online softmax (running max m, sum
// l = Σ exp(s − m) and acc = Σ exp(s − m)·v), so any context length runs in fixed memory.
//
// A workgroup takes a tile of ROWS query rows, consecutive tokens of one query head (wid.x the
// head among the cache part's, wid.y the tile), and walks only the keys its rows see: from its
// first token's first key (0, or the sliding window's start) to its last token's own position. The
// fully masked tiles of the causal triangle are never visited, and each K and V row read serves
// every row of the tile.
// Without CAUSAL (an encoder, whose whole input is one batch) every row sees the whole batch.
//
// Two shapes, as decode attention has:
//   attend_tile (GPUs): 64 lanes over 8 rows and key tiles of 64, four barriers a tile: scores (a
//     lane per key, dotting its K row with the tile's rotated queries in workgroup memory), max and
//     exp (8 lanes a row, 8 keys each), values (8 lanes a row, each owning headDim / 16 pairs of V).
//   attend_tile_cpu (CPU adapters, CPU_SHAPE): 8 lanes, a lane per row, walking the same keys in
//     lockstep: every lane reads the same K and V row (the same cache lines for all lanes; lavapipe
//     still loads a loop-indexed address lane by lane), no barriers, no workgroup memory; HEAD_DIM
//     is a constant (a multiple of 8) so the query and accumulator stay in registers. Scores are
//     kept for KEYS keys between rescales of the accumulator.
// Rows past the batch's end repeat its last token and store nothing.
//
// Scores are dot(q, k) · scale, soft-capped when softcap is set. With SINKS (gpt-oss) a learned
// logit per head, sinks[h], joins each softmax's denominator only, as ggml_soft_max_ext does.

// The caches' types (kv-quant.wgsl).
override KV_K: u32 = KV_F16;
override KV_V: u32 = KV_F16;
override CAUSAL: bool = true;
override SINKS: bool = false;

#struct AttentionUniform

#include "step.wgsl"

@group(0) @binding(0) var<uniform> p: AttentionUniform;
@group(0) @binding(1) var<uniform> step: StepUniform;
@group(0) @binding(2) var<storage, read> q: array<f32>;
@group(0) @binding(3) var<storage, read> kCache: array<u32>;
@group(0) @binding(4) var<storage, read> vCache: array<u32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
@group(0) @binding(6) var<storage, read> ropeTable: array<vec2<f32>>;
// Read only with SINKS; another buffer stands in otherwise.
@group(0) @binding(7) var<storage, read> sinks: array<f32>;

// attend_tile_cpu: the same caches, a vec4 a load.
@group(0) @binding(3) var<storage, read> kCache4: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> vCache4: array<vec4<u32>>;

#include "attention-keys.wgsl"

// A workgroup's rows: tokens t0 .. tEnd − 1 of the batch, and the keys [begin, end) any of them sees.
struct Tile {
  t0: u32,
  tEnd: u32,
  begin: u32,
  end: u32,
}

fn tile_of(y: u32, rows: u32) -> Tile {
  let t0 = y * rows;
  let tEnd = min(t0 + rows, step.nTokens);
  var end = step.pos0 + step.nTokens;
  if (CAUSAL) {
    end = step.pos0 + tEnd;
  }
  return Tile(t0, tEnd, first_key(step.pos0 + t0), end);
}

// The token of the tile's row r (the batch's last for rows past its end).
fn row_token(tile: Tile, r: u32) -> u32 {
  return min(tile.t0 + r, tile.tEnd - 1u);
}

// Whether the token at `pos` sees key `key`.
fn sees(pos: u32, key: u32) -> bool {
  var last = step.pos0 + step.nTokens - 1u;
  if (CAUSAL) {
    last = pos;
  }
  return first_key(pos) <= key && key <= last;
}

// The first KV row element of query head h's KV head.
fn kv_base(h: u32) -> u32 {
  return kv_head_base(h / (p.nHead / p.nKvHead));
}

// The softmax's denominator for a row's running max and sum, with head h's sink when SINKS; and
// the factor its accumulator takes: out = acc · corr / denom.
struct Finish {
  corr: f32,
  denom: f32,
}

fn finish(h: u32, m: f32, l: f32) -> Finish {
  var sink = NEG;
  if (SINKS) {
    sink = sinks[h];
  }
  let top = max(m, sink);
  let corr = exp(m - top);
  return Finish(corr, l * corr + exp(sink - top));
}

#if CPU_SHAPE
const HEAD_DIM: u32 = {{HEAD_DIM}}u;
const Q4: u32 = HEAD_DIM / 4u;
const LANES: u32 = 8u;
const KEYS: u32 = 8u;

@compute @workgroup_size(LANES)
fn attend_tile_cpu(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let h = part_head(wid.x);
  let tile = tile_of(wid.y, LANES);
  let t = row_token(tile, lid);
  let pos = step.pos0 + t;
  let kvBase = kv_base(h);
  let qBase = t * p.inStride + p.qkOffset + h * HEAD_DIM;

  var qh: array<vec4<f32>, Q4>;
  var acc: array<vec4<f32>, Q4>;
  for (var j = 0u; j < Q4; j++) {
    let d = 4u * j;
    qh[j] = vec4<f32>(query_elem(qBase, d, pos), query_elem(qBase, d + 1u, pos), query_elem(qBase, d + 2u, pos), query_elem(qBase, d + 3u, pos));
    acc[j] = vec4<f32>(0.0);
  }
  var m = NEG;
  var l = 0.0;
  for (var start = tile.begin; start < tile.end; start += KEYS) {
    var s: array<f32, KEYS>;
    var top = m;
    for (var k = 0u; k < KEYS; k++) {
      let key = start + k;
      let row = min(key, tile.end - 1u) * p.kvStride + kvBase;
      var qk = 0.0;
      for (var j = 0u; j < Q4; j += 2u) {
        let kk = k_oct(row + 4u * j);
        qk += dot(qh[j], kk.lo) + dot(qh[j + 1u], kk.hi);
      }
      let x = select(NEG, score(qk), key < tile.end && sees(pos, key));
      s[k] = x;
      top = max(top, x);
    }
    let corr = exp(m - top);
    l *= corr;
    for (var j = 0u; j < Q4; j++) {
      acc[j] *= corr;
    }
    m = top;
    for (var k = 0u; k < KEYS; k++) {
      let row = min(start + k, tile.end - 1u) * p.kvStride + kvBase;
      let w = select(0.0, exp(s[k] - m), s[k] > NEG);  // NEG: a key the row does not see
      l += w;
      for (var j = 0u; j < Q4; j += 2u) {
        let vv = v_oct(row + 4u * j);
        acc[j] += w * vv.lo;
        acc[j + 1u] += w * vv.hi;
      }
    }
  }

  if (tile.t0 + lid < tile.tEnd) {
    let f = finish(h, m, l);
    let outBase = t * p.qStride + h * HEAD_DIM;
    for (var j = 0u; j < Q4; j++) {
      let o = acc[j] * f.corr / f.denom;
      for (var c = 0u; c < 4u; c++) {
        out[outBase + 4u * j + c] = o[c];
      }
    }
  }
}
#else
const WG: u32 = 64u;
const ROWS: u32 = 8u;
const TILE: u32 = 64u;
// Lanes a row in the max, exp and values phases, and the keys each takes in the first two.
const ROW_LANES: u32 = WG / ROWS;
const SPAN: u32 = TILE / ROW_LANES;
const MAX_HEAD_DIM: u32 = 256u;
// Pairs of V dimensions a lane owns at most (a 256-wide head over a row's 8 lanes).
const PPL: u32 = MAX_HEAD_DIM / 2u / ROW_LANES;

var<workgroup> qs: array<f32, ROWS * MAX_HEAD_DIM>;
// A tile's scores, then its weights exp(s − m), [row][key].
var<workgroup> sc: array<f32, ROWS * TILE>;
var<workgroup> partMax: array<f32, WG>;
var<workgroup> partSum: array<f32, WG>;

@compute @workgroup_size(WG)
fn attend_tile(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let h = part_head(wid.x);
  let tile = tile_of(wid.y, ROWS);
  let kvBase = kv_base(h);
  for (var i = lid; i < ROWS * p.headDim; i += WG) {
    let r = i / p.headDim;
    let t = row_token(tile, r);
    qs[r * MAX_HEAD_DIM + i % p.headDim] = query_elem(t * p.inStride + p.qkOffset + h * p.headDim, i % p.headDim, step.pos0 + t);
  }
  workgroupBarrier();

  // This lane's row and place in it in the max, exp and values phases.
  let r = lid / ROW_LANES;
  let c = lid % ROW_LANES;
  let pairs = p.headDim / 2u;
  var m = NEG;
  var l = 0.0;
  var acc: array<vec2<f32>, PPL>;
  for (var k = 0u; k < PPL; k++) {
    acc[k] = vec2<f32>(0.0);
  }
  for (var start = tile.begin; start < tile.end; start += TILE) {
    let count = min(TILE, tile.end - start);
    // scores: lane i dots key start + i with every row's query.
    let key = start + lid;
    var dots: array<f32, ROWS>;
    for (var g = 0u; g < ROWS; g++) {
      dots[g] = 0.0;  // explicitly: some compilers hoist the declaration's zeroing out of the loop
    }
    if (lid < count) {
      let row = key * p.kvStride + kvBase;
      for (var d = 0u; d < p.headDim; d += 2u) {
        let kk = k_pair(row + d);
        for (var g = 0u; g < ROWS; g++) {
          dots[g] += qs[g * MAX_HEAD_DIM + d] * kk.x + qs[g * MAX_HEAD_DIM + d + 1u] * kk.y;
        }
      }
    }
    for (var g = 0u; g < ROWS; g++) {
      sc[g * TILE + lid] = select(NEG, score(dots[g]), lid < count && sees(step.pos0 + row_token(tile, g), key));
    }
    workgroupBarrier();
    // max
    var mx = NEG;
    for (var i = c * SPAN; i < c * SPAN + SPAN; i++) {
      mx = max(mx, sc[r * TILE + i]);
    }
    partMax[lid] = mx;
    workgroupBarrier();
    // exp: a row's lanes all take its new running max, and weigh their span against it.
    var mNew = m;
    for (var i = 0u; i < ROW_LANES; i++) {
      mNew = max(mNew, partMax[r * ROW_LANES + i]);
    }
    var sum = 0.0;
    for (var i = c * SPAN; i < c * SPAN + SPAN; i++) {
      let s = sc[r * TILE + i];
      let e = select(0.0, exp(s - mNew), s > NEG);
      sc[r * TILE + i] = e;
      sum += e;
    }
    partSum[lid] = sum;
    workgroupBarrier();
    // values
    var tileSum = 0.0;
    for (var i = 0u; i < ROW_LANES; i++) {
      tileSum += partSum[r * ROW_LANES + i];
    }
    let corr = exp(m - mNew);
    l = l * corr + tileSum;
    m = mNew;
    for (var k = 0u; k < PPL; k++) {
      acc[k] *= corr;
    }
    for (var i = 0u; i < count; i++) {
      let w = sc[r * TILE + i];
      let row = (start + i) * p.kvStride + kvBase;
      for (var k = 0u; k < PPL; k++) {
        let pr = c + k * ROW_LANES;
        if (pr < pairs) {
          acc[k] += w * v_pair(row + 2u * pr);
        }
      }
    }
    workgroupBarrier();  // sc is rewritten by the next tile
  }

  if (tile.t0 + r < tile.tEnd) {
    let f = finish(h, m, l);
    let outBase = (tile.t0 + r) * p.qStride + h * p.headDim;
    for (var k = 0u; k < PPL; k++) {
      let pr = c + k * ROW_LANES;
      if (pr < pairs) {
        let o = acc[k] * f.corr / f.denom;
        out[outBase + 2u * pr] = o.x;
        out[outBase + 2u * pr + 1u] = o.y;
      }
    }
  }
}
#endif
