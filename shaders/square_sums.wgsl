// Importance-matrix statistics (llama-imatrix's in_sum2 and in_sum): for each input column j of a
// matmul, sums[j] += x[t][j]² and sums[width + j] += x[t][j] over the batch's tokens t, in token
// order (as llama.cpp adds them on the CPU), rows `stride` elements apart.

#struct SquareSumUniform

#include "step.wgsl"

const WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: SquareSumUniform;
@group(0) @binding(1) var<uniform> step: StepUniform;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> sums: array<f32>;

@compute @workgroup_size(WG)
fn square_sums(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let j = gid.x + gid.y * nwg.x * WG;
  if (j >= p.width) {
    return;
  }
  var s2 = sums[j];
  var s = sums[p.width + j];
  for (var t = 0u; t < step.nTokens; t++) {
    let v = x[t * p.stride + j];
    s2 += v * v;
    s += v;
  }
  sums[j] = s2;
  sums[p.width + j] = s;
}
