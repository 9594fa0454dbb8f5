// y = W · x for n tokens, with W's blocks decoded in registers (never stored dequantized) and f32
// accumulation. One workgroup computes ROWS consecutive rows of one part of W for a tile of up to
// TT tokens: its WG threads stride over the 32-value units of each row, each decoding a unit once
// and using it for all the tile's tokens; the per-thread sums are then reduced across the
// workgroup (subgroup sums plus a small shared array where subgroups exist, a shared-memory tree
// otherwise).
//   mat-mat (the routed experts; a GPU's prefill runs matmat-tiled.wgsl): TT tokens per
//   workgroup, workgroup_id.z picks the token tile.
// MATVEC (decode, n = 1; TT = 1, or TT tokens with MV_PAIRS): the decoder's matvec_step does
// MV_UNITS units of x for all the rows it is given, loading x once for them: K-quants dot the
// integer codes with x and apply each sub-block's scale and min once (d·s·Σq·x − dmin·m·Σx),
// instead of decoding every value.
//   THREAD_ROWS (CPU adapters: lavapipe, SwiftShader, whose threads are SIMD lanes of a CPU):
//   each thread owns ROWS consecutive rows (the workgroup WG · ROWS) and walks them from the
//   first unit to the last, all threads in step, so the address of x is the same in every
//   thread (one load for all lanes instead of a gather per lane) and each row's sum stays in its
//   thread (no reduction, no shared memory, no barrier).
//   The steps' loops over a thread's rows run to MV_ROW_END: ROWS, a constant the compiler
//   unrolls them by, or (row-groups.ts's cpuRowLoop) `rows`, the thread's own count, which keeps
//   them loops.
//   MV_PAIRS (with the row loop): the K-quants step over a super-block a pair of sub-blocks at a
//   time (x_pair), rather than whole blocks at once (x_block), which also keeps their x small
//   enough for TT > 1: a batched decode step's 2–4 rows, one token per slot. Each step loads x
//   for the TT tokens (token_x), then each row's blocks once for all of them; per token the sums
//   are the one-token kernel's, in its order, so a row of a batch gets the bits it gets alone.
//   X_LANES (the workgroup one subgroup of 4 or 8 lanes): x is loaded a vec4 a lane and
//   broadcast (weight-io.wgsl's x_unit).
//   Otherwise (GPUs): the workgroup's ROWS rows are shared by its threads, which stride over the
//   units side by side (neighbouring threads read neighbouring blocks) and then reduce as prefill
//   does; many workgroups keep every compute unit busy.
// Workgroups beyond 65535 in x wrap into y (row group = x + y · num_workgroups.x).
// EXPERTS: W is a part of a stacked expert tensor and the tokens come routed (moe.wgsl's
// moe_group): workgroup_id.z picks a tile of up to TT (token, expert) pairs that chose the same
// expert; the rows computed are rows expert_row0 .. expert_row0 + rows of that expert's matrix,
// decoded from its own blocks only (a tile whose expert lies in another part does nothing).
// Pair p reads x vector p / x_group and writes y vector p.
// X_NORM, X_GLU (MATVEC only): x made from the buffer as it is loaded (weight-io.wgsl).
// X_STAGE (MATVEC on a GPU): x goes through workgroup memory a chunk at a time (weight-io.wgsl's
// stage_x), loaded side by side; X_STAGE_F32 where that is x itself, not INT_DOT's q8_1 blocks.
// INT_DOT (MATVEC on a GPU, types with an integer step): quantize_x writes x as q8_1 blocks
// (weight-io.wgsl's XQ) and the type's matvec_step dots its codes with them (dot4I8Packed).
// Y_GLU (MATVEC on a GPU, gate|up rows uploaded in pairs): the workgroup's rows are whole pairs;
// it writes act(gate) · up of each, one output per pair (store_glu), instead of the rows.
#if SHADER_F16
enable f16;
#endif
#if SUBGROUPS
enable subgroups;
requires subgroup_id;
#else
#if X_LANES
enable subgroups;
#endif
#endif
#include "quant/common.wgsl"
#include "quant/{{TYPE}}.wgsl"
#include "weight-io.wgsl"

const WG: u32 = {{WG}}u;
const ROWS: u32 = {{ROWS}}u;
const TT: u32 = {{TT}}u;
const ACC: u32 = ROWS * TT;
#if X_STAGE
const XS_UNITS: u32 = {{XS_UNITS}}u;
const_assert XS_UNITS % (WG * MV_UNITS) == 0u; // each thread's units in a chunk, as without staging
#endif

#if THREAD_ROWS
#else
#if SUBGROUPS
// One slot per subgroup (subgroups have at least 4 invocations).
var<workgroup> partial: array<f32, ACC * (WG / 4u)>;
#else
var<workgroup> partial: array<f32, ACC * WG>;
#endif
#endif
#if Y_GLU
#if SUBGROUPS
// The rows' sums, for the pairs' products.
var<workgroup> row_sums: array<f32, ACC>;
#endif
#endif

#if MATVEC
// Σ x over each half (16 values) of a unit: the factors of the sub-blocks' mins or offsets,
// taken once per step for all rows.
fn x_halves(x: array<vec4<f32>, 8>) -> vec2<f32> {
  let one = vec4<f32>(1.0);
  return vec2<f32>(dot(x[0] + x[1] + x[2] + x[3], one), dot(x[4] + x[5] + x[6] + x[7], one));
}

// A unit of x in the order of codes masked in place (K-quant nibbles on CPU adapters): element
// 4h + k holds values 16h + 4i + k (i = 0..3, one per lane: byte k of word i of a 16-byte quad of
// codes) times 2^-8k, so the code masked at bits 8k.. of each word (q · 2^8k, exact as a float)
// times it is q · x exactly, with no shift per value.
fn x_masked_order(x: array<vec4<f32>, 8>) -> array<vec4<f32>, 8> {
  let s = vec4<f32>(1.0, 0.00390625, 1.52587890625e-5, 5.9604644775390625e-8);
  return array<vec4<f32>, 8>(
    s.x * vec4<f32>(x[0].x, x[1].x, x[2].x, x[3].x), s.y * vec4<f32>(x[0].y, x[1].y, x[2].y, x[3].y),
    s.z * vec4<f32>(x[0].z, x[1].z, x[2].z, x[3].z), s.w * vec4<f32>(x[0].w, x[1].w, x[2].w, x[3].w),
    s.x * vec4<f32>(x[4].x, x[5].x, x[6].x, x[7].x), s.y * vec4<f32>(x[4].y, x[5].y, x[6].y, x[7].y),
    s.z * vec4<f32>(x[4].z, x[5].z, x[6].z, x[7].z), s.w * vec4<f32>(x[4].w, x[5].w, x[6].w, x[7].w),
  );
}

#if MV_PAIRS
// Two units of one token's x for the K-quant steps on CPU adapters (at columns c and c2): in masked
// order, and Σx over each 16 values (sums: the first unit's two halves, then the second's).
struct XPair {
  lo: array<vec4<f32>, 8>,
  hi: array<vec4<f32>, 8>,
  sums: vec4<f32>,
}

fn x_pair(xb: u32, c: u32, c2: u32) -> XPair {
  let lo = x_unit(xb, c);
  let hi = x_unit(xb, c2);
  return XPair(x_masked_order(lo), x_masked_order(hi), vec4<f32>(x_halves(lo), x_halves(hi)));
}

#else
// The whole-block steps (K-quants on CPU adapters): the 8 units of x of a 256-value super-block
// from column c, and Σ x per unit (unit j at [j / 4][j % 4]). With X_GLU a loop, as x_unit's.
fn x_block(xb: u32, c: u32) -> array<array<vec4<f32>, 8>, 8> {
#if X_GLU
  var x: array<array<vec4<f32>, 8>, 8>;
  for (var j = 0u; j < 8u; j++) {
    x[j] = x_unit(xb, c + 32u * j);
  }
  return x;
#else
  return array<array<vec4<f32>, 8>, 8>(
    x_unit(xb, c), x_unit(xb, c + 32u), x_unit(xb, c + 64u), x_unit(xb, c + 96u),
    x_unit(xb, c + 128u), x_unit(xb, c + 160u), x_unit(xb, c + 192u), x_unit(xb, c + 224u),
  );
#endif
}

fn x_unit_sums(x: array<array<vec4<f32>, 8>, 8>) -> array<vec4<f32>, 2> {
  return array<vec4<f32>, 2>(
    vec4<f32>(x_sum(x[0]), x_sum(x[1]), x_sum(x[2]), x_sum(x[3])),
    vec4<f32>(x_sum(x[4]), x_sum(x[5]), x_sum(x[6]), x_sum(x[7])),
  );
}

// A whole super-block's x in masked order (x_masked_order per 32-value unit), for the K-quant steps.
fn x_block_masked(x: array<array<vec4<f32>, 8>, 8>) -> array<array<vec4<f32>, 8>, 8> {
  return array<array<vec4<f32>, 8>, 8>(
    x_masked_order(x[0]), x_masked_order(x[1]), x_masked_order(x[2]), x_masked_order(x[3]),
    x_masked_order(x[4]), x_masked_order(x[5]), x_masked_order(x[6]), x_masked_order(x[7]),
  );
}

fn x_sum(x: array<vec4<f32>, 8>) -> f32 {
  return dot(x[0] + x[1] + x[2] + x[3] + x[4] + x[5] + x[6] + x[7], vec4<f32>(1.0));
}
#endif

// Σ q·x over 16 values, lane by lane (a dot with 1 finishes it): q a quad of codes, one per byte,
// each below m + 1 (m = 2^bits − 1, at most 6 bits), x0 .. x3 their x in masked order. Per byte k
// of the words: mask in place, convert, multiply-add four lanes at a time; no shift per value.
// The masked codes stay below 2^31, so the conversion is the signed one (one instruction on CPUs).
fn masked_dot16(q: vec4<u32>, m: u32, x0: vec4<f32>, x1: vec4<f32>, x2: vec4<f32>, x3: vec4<f32>) -> vec4<f32> {
  let k = vec4<u32>(m);
  return vec4<f32>(bitcast<vec4<i32>>(q & k)) * x0 + vec4<f32>(bitcast<vec4<i32>>(q & (k << vec4<u32>(8u)))) * x1
    + vec4<f32>(bitcast<vec4<i32>>(q & (k << vec4<u32>(16u)))) * x2 + vec4<f32>(bitcast<vec4<i32>>(q & (k << vec4<u32>(24u)))) * x3;
}

// Where token t of the step's x starts, xb being token 0's; past the last token the last one's
// (the steps' token loops always run TT times, to constant indices; store skips those tokens).
// From the uniform only, so the address is the same in every thread.
fn token_x(xb: u32, t: u32) -> u32 {
  return xb + min(t, P.n - 1u) * P.x_stride;
}
#endif

// The tile of this workgroup: its token count (0: nothing to do), the part row its row 0 is, and
// per token, where its x vector starts and where its y vector's row 0 goes.
var<private> tile_tokens: u32;
var<private> tile_row: u32;
var<private> tile_x: array<u32, TT>;
var<private> tile_y: array<u32, TT>;

#if EXPERTS
// The routing table (moe.wgsl): [0] tile count; tile i at 4 + 3i: expert, index of its first
// pair entry, pairs; pair entries are pair indices, token · experts per token + slot.
@group(0) @binding(4) var<storage, read> ROUTE: array<u32>;

fn begin_tile(z: u32) {
  tile_tokens = 0u;
  if (z < ROUTE[0]) {
    let row = ROUTE[4u + 3u * z] * P.expert_rows + P.expert_row0;
    if (row >= P.row_start && row < P.row_start + P.part_rows) {
      tile_row = row - P.row_start;
      let first = ROUTE[4u + 3u * z + 1u];
      tile_tokens = min(TT, ROUTE[4u + 3u * z + 2u]);
      for (var t = 0u; t < tile_tokens; t++) {
        let pair = ROUTE[first + t];
        tile_x[t] = P.x_offset + (pair / P.x_group) * P.x_stride;
        tile_y[t] = P.y_offset + pair * P.y_stride;
      }
    }
  }
}
#else
fn begin_tile(z: u32) {
  let first = z * TT;
  tile_row = 0u;
  tile_tokens = select(0u, min(TT, P.n - first), first < P.n);
  for (var t = 0u; t < tile_tokens; t++) {
    tile_x[t] = P.x_offset + (first + t) * P.x_stride;
    tile_y[t] = P.y_offset + (first + t) * P.y_stride;
  }
}
#endif

@compute @workgroup_size(WG)
fn main(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) nwg: vec3<u32>,
  @builtin(local_invocation_index) lid: u32,
#if SUBGROUPS
  @builtin(subgroup_id) sg_id: u32,
  @builtin(num_subgroups) sg_count: u32,
#endif
) {
#if THREAD_ROWS
  let row0 = ((wid.x + wid.y * nwg.x) * WG + lid) * ROWS;
#else
  let row0 = (wid.x + wid.y * nwg.x) * ROWS;
#endif
  begin_tile(wid.z);
#if X_LANES
  x_lane = lid;
#endif
#if X_NORM
#if INT_DOT
#else
  // The mat-vec's one token (weight-io.wgsl's prologue).
  x_norm_begin(P.x_offset, lid);
#endif
#endif
  var acc: array<f32, ACC>;
#if MATVEC
  let rows = select(0u, min(ROWS, P.rows - row0), row0 < P.rows && tile_tokens != 0u);
#if THREAD_ROWS
  // The unit loop is the same for every thread (x's address stays uniform); a thread past the
  // last row skips the rows inside the step.
#if EXPERTS
  let xb = tile_x[0];
#else
  // Straight from the uniform (not through tile_x), so the compiler sees it is the same in every thread.
  let xb = P.x_offset;
#endif
  for (var u = 0u; u < P.units; u += MV_UNITS) {
    matvec_step(xb, u, tile_row + row0, rows, &acc);
  }
  for (var r = 0u; r < rows; r++) {
    for (var t = 0u; t < TT; t++) { store(row0, r * TT + t, acc[r * TT + t]); }
  }
#else
#if X_STAGE
  // x a chunk at a time through workgroup memory (weight-io.wgsl's stage_x); each thread takes the
  // same units, in the same order, as without.
  for (var u0 = 0u; u0 < P.units; u0 += XS_UNITS) {
    stage_x(tile_x[0], u0, lid);
    for (var u = u0 + lid * MV_UNITS; u < min(u0 + XS_UNITS, P.units); u += WG * MV_UNITS) {
      matvec_step(tile_x[0], u, tile_row + row0, rows, &acc);
    }
  }
#else
  for (var u = lid * MV_UNITS; u < P.units; u += WG * MV_UNITS) {
    matvec_step(tile_x[0], u, tile_row + row0, rows, &acc);
  }
#endif
#endif
#else
  for (var r = 0u; r < ROWS; r++) {
    let row = row0 + r;
    if (row >= P.rows || tile_tokens == 0u) { break; }
    for (var u = lid; u < P.units; u += WG) {
      var w: array<vec4<f32>, 8>;
      decode_unit(tile_row + row, u, &w);
      let c0 = 32u * u;
      for (var t = 0u; t < TT; t++) {
        if (t >= tile_tokens) { break; }
        let xb = tile_x[t];
        var s = 0.0;
        for (var i = 0u; i < 8u; i++) {
          s += dot(w[i], load_x4(xb, c0 + 4u * i));
        }
        acc[r * TT + t] += s;
      }
    }
  }
#endif

#if THREAD_ROWS
#else
#if SUBGROUPS
  for (var k = 0u; k < ACC; k++) {
    let s = subgroupAdd(acc[k]);
    if (subgroupElect()) { partial[k * (WG / 4u) + sg_id] = s; }
  }
  workgroupBarrier();
  if (lid < ACC) {
    var sum = 0.0;
    for (var j = 0u; j < sg_count; j++) { sum += partial[lid * (WG / 4u) + j]; }
#if Y_GLU
    row_sums[lid] = sum;
#else
    store(row0, lid, sum);
#endif
  }
#if Y_GLU
  workgroupBarrier();
  if (lid < ACC / 2u) { store_glu(row0, lid, row_sums[2u * lid], row_sums[2u * lid + 1u]); }
#endif
#else
  for (var k = 0u; k < ACC; k++) { partial[k * WG + lid] = acc[k]; }
  for (var stride = WG / 2u; stride > 0u; stride >>= 1u) {
    workgroupBarrier();
    if (lid < stride) {
      for (var k = 0u; k < ACC; k++) { partial[k * WG + lid] += partial[k * WG + lid + stride]; }
    }
  }
  workgroupBarrier();
#if Y_GLU
  if (lid < ACC / 2u) { store_glu(row0, lid, partial[2u * lid * WG], partial[(2u * lid + 1u) * WG]); }
#else
  if (lid < ACC) { store(row0, lid, partial[lid * WG]); }
#endif
#endif
#endif
}

#if INT_DOT
// The integer mat-vec's first dispatch: the token's x (with the prologue) as q8_1 blocks in XQ,
// a block a thread; main's steps then read XQ instead of x.
const_assert TT == 1u;
@compute @workgroup_size(WG)
fn quantize_x(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
#if X_NORM
  x_norm_begin(P.x_offset, lid);
#endif
  for (var b = gid.x; b < P.units; b += nwg.x * WG) {
    quantize_block(P.x_offset, b);
  }
}
#endif

// Output k of this workgroup (row k / TT, token k % TT of the tile).
fn store(row0: u32, k: u32, v: f32) {
  let row = row0 + k / TT;
  let t = k % TT;
  if (row < P.rows && t < tile_tokens) {
#if EXPERTS
    let i = tile_y[t] + row;
#else
    let i = tile_y[t] + out_row(row);
#endif
    store_y(i, v);
  }
}

#if Y_GLU
// act(gate) · up of pair k of this workgroup (gate row row0 + 2k, its sum g; up the next, u), at
// output i of gate|up pair i (the one token's; ROWS and every part's rows are even).
fn store_glu(row0: u32, k: u32, g: f32, u: f32) {
  let row = row0 + 2u * k;
  if (row < P.rows && tile_tokens != 0u) {
    Y[tile_y[0] + (P.row_start + row) / 2u] = glu_act(g) * u;
  }
}
#endif
