// Importance-matrix statistics of a stacked expert matmul (llama-imatrix's MUL_MAT_ID case): expert
// e's columns see only the rows routed to it. One thread per (column j, expert e):
//   sums[e·width + j]             += x[row][j]²   (in_sum2, [expert][column])
//   sums[(experts + e)·width + j] += x[row][j]    (in_sum)
//   counts[e]                     += the rows seen (thread j = 0)
// over the batch's pairs q = t·used + slot with ids[q] = e, slot by slot and tokens in order within
// a slot, as llama.cpp adds them. A row is the pair's own (per_pair = 1: the down projection reads
// one input per pair) or its token's (the gate and up projections share the token's input); rows
// `stride` elements apart.

#struct SquareSumMoeUniform

#include "step.wgsl"

const WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: SquareSumMoeUniform;
@group(0) @binding(1) var<uniform> step: StepUniform;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read> ids: array<u32>;
@group(0) @binding(4) var<storage, read_write> sums: array<f32>;
@group(0) @binding(5) var<storage, read_write> counts: array<u32>;

@compute @workgroup_size(WG)
fn square_sums_moe(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = gid.x + gid.y * nwg.x * WG;
  if (i >= p.width * p.experts) {
    return;
  }
  let e = i / p.width;
  let j = i % p.width;
  let at2 = e * p.width + j;
  let at1 = (p.experts + e) * p.width + j;
  var s2 = sums[at2];
  var s = sums[at1];
  var n = 0u;
  for (var slot = 0u; slot < p.used; slot++) {
    for (var t = 0u; t < step.nTokens; t++) {
      let q = t * p.used + slot;
      if (ids[q] != e) {
        continue;
      }
      let row = select(t, q, p.per_pair != 0u);
      let v = x[row * p.stride + j];
      s2 += v * v;
      s += v;
      n++;
    }
  }
  sums[at2] = s2;
  sums[at1] = s;
  if (j == 0u) {
    counts[e] += n;
  }
}
