// Element-wise ops of the transformer block, in place on the first operand:
//   glu:         gate = act(gate) * up            (gated FFN; act below)
//   glu_packed:  the same on rows holding gate | up (2·width per token; phi3's fused ffn_up),
//                the result over the gate half
//   gelu_inplace: x = gelu(x)                      (BERT's FFN, no gate)
//   swiglu_oai:  gate = g / (1 + exp(a · -g)) · (clamp(up, -b, b) + 1), g = min(gate, b)
//                                                 (gpt-oss's experts: a = alpha, b = limit; as
//                                                 ggml's CPU swiglu_oai)
//   add:         x = x + y                        (residual connections)
//   add_bias:    x[t][i] = x[t][i] + b[i]         (qwen2's Q/K/V biases)
//   scale:       x = x · a                        (gemma's embedding scale)
//   softcap:     x = a · tanh(x · b), b = 1/a     (gemma2's final logit soft-cap, as llama.cpp)
//   hadamard_v:  x = x · H in chunks of V_ROT     (attention's output back from a rotated V cache,
//                                                 kv-quant.wgsl; an invocation a chunk)
// Sizes are per token; the token count comes from the step uniform unless `rows` fixes it.
// act: silu, or gelu with GELU (glu-act.wgsl).

override GELU: bool = false;

#struct ElementwiseUniform

#include "step.wgsl"
#include "tanh.wgsl"
#include "glu-act.wgsl"
#include "kv-quant.wgsl"

const WG: u32 = 64u;

@group(0) @binding(0) var<uniform> p: ElementwiseUniform;
@group(0) @binding(3) var<uniform> step: StepUniform;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read> y: array<f32>;

fn index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return gid.x + gid.y * nwg.x * WG;
}

fn count() -> u32 {
  return select(step.nTokens, p.rows, p.rows != 0u) * p.width;
}

fn act(v: f32) -> f32 {
  if (GELU) {
    return gelu(v);
  }
  return silu(v);
}

@compute @workgroup_size(WG)
fn glu(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= count()) {
    return;
  }
  x[i] = act(x[i]) * y[i];
}

@compute @workgroup_size(WG)
fn glu_packed(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= count()) {
    return;
  }
  let g = (i / p.width) * 2u * p.width + i % p.width;
  x[g] = act(x[g]) * x[g + p.width];
}

@compute @workgroup_size(WG)
fn gelu_inplace(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= count()) {
    return;
  }
  x[i] = gelu(x[i]);
}

@compute @workgroup_size(WG)
fn swiglu_oai(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= count()) {
    return;
  }
  let g = min(x[i], p.b);
  let u = clamp(y[i], -p.b, p.b);
  x[i] = g / (1.0 + exp(p.a * -g)) * (u + 1.0);
}

@compute @workgroup_size(WG)
fn add(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= count()) {
    return;
  }
  x[i] = x[i] + y[i];
}

@compute @workgroup_size(WG)
fn add_bias(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= count()) {
    return;
  }
  x[i] = x[i] + y[i % p.width];
}

@compute @workgroup_size(WG)
fn scale(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= count()) {
    return;
  }
  x[i] = x[i] * p.a;
}

@compute @workgroup_size(WG)
fn softcap(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = index(gid, nwg);
  if (i >= count()) {
    return;
  }
  x[i] = p.a * tanh_f32(x[i] * p.b);
}

@compute @workgroup_size(WG)
fn hadamard_v(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let c0 = V_ROT * index(gid, nwg);
  if (c0 >= count()) {
    return;
  }
  var chunk: array<f32, 256>;
  for (var j = 0u; j < V_ROT; j++) {
    chunk[j] = x[c0 + j];
  }
  for (var i = 0u; i < V_ROT; i++) {
    var s = 0.0;
    for (var j = 0u; j < V_ROT; j++) {
      s += hadamard_term(i, j, chunk[j]);
    }
    x[c0 + i] = s * hadamard_scale(V_ROT);
  }
}
