// Element-wise ops of the transformer block, in place on the first operand:
//   swiglu:   gate = silu(gate) * up           (llama.cpp: silu(x) = x / (1 + exp(-x)))
//   add:      x = x + y                        (residual connections)
//   add_bias: x[t][i] = x[t][i] + b[i]         (qwen2's Q/K/V biases)
// Sizes are per token; the token count comes from the step uniform.

struct Params {
  width: u32,   // elements per token
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

#include "step.wgsl"

const WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(3) var<uniform> step: Step;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read> y: array<f32>;

fn index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return gid.x + gid.y * nwg.x * WG;
}

@compute @workgroup_size(WG)
fn swiglu(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= step.nTokens * p.width) {
    return;
  }
  let g = x[i];
  x[i] = g / (1.0 + exp(-g)) * y[i];
}

@compute @workgroup_size(WG)
fn add(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= step.nTokens * p.width) {
    return;
  }
  x[i] = x[i] + y[i];
}

@compute @workgroup_size(WG)
fn add_bias(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= step.nTokens * p.width) {
    return;
  }
  x[i] = x[i] + y[i % p.width];
}
