// RMSNorm, as llama.cpp's rms_norm followed by the multiply with the norm weight:
//   y = x / sqrt(mean(x²) + eps) * w
// One workgroup per row; a token has rowsPerToken rows. `rms_norm` writes a separate output (or,
// with lastOnly, normalizes only the batch's last token, for the output head; with ACCUMULATE,
// adds to it: gemma's post-norms, whose output joins the residual stream); `rms_norm_inplace`
// normalizes rows of x in place (qwen3's Q/K norm, one row per head).

override ACCUMULATE: bool = false;

#struct NormUniform

#include "step.wgsl"

const WG: u32 = 128u;

@group(0) @binding(0) var<uniform> p: NormUniform;
@group(0) @binding(4) var<uniform> step: StepUniform;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> xy: array<f32>;

#include "reduce.wgsl"

fn row_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return wid.x + wid.y * nwg.x;
}

@compute @workgroup_size(WG)
fn rms_norm(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) lid: u32) {
  let row = row_index(wid, nwg);
  var rows = step.nTokens * p.rowsPerToken;
  var first = 0u;
  if (p.lastOnly != 0u) {
    first = rows - p.rowsPerToken;
    rows = p.rowsPerToken;
  }
  if (row >= rows) {
    return;
  }
  let xb = (first + row) * p.n;
  let yb = row * p.n;
  var ss = 0.0;
  for (var i = lid; i < p.n; i += WG) {
    let v = x[xb + i];
    ss += v * v;
  }
  let scale = inverseSqrt(reduce_sum(lid, ss) / f32(p.n) + p.eps);
  for (var i = lid; i < p.n; i += WG) {
    let v = (x[xb + i] * scale) * w[p.wOffset + i];
    if (ACCUMULATE) {
      y[yb + i] += v;
    } else {
      y[yb + i] = v;
    }
  }
}

@compute @workgroup_size(WG)
fn rms_norm_inplace(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                    @builtin(local_invocation_index) lid: u32) {
  let row = row_index(wid, nwg);
  if (row >= step.nTokens * p.rowsPerToken) {
    return;
  }
  let xb = row * p.n;
  var ss = 0.0;
  for (var i = lid; i < p.n; i += WG) {
    let v = xy[xb + i];
    ss += v * v;
  }
  let scale = inverseSqrt(reduce_sum(lid, ss) / f32(p.n) + p.eps);
  for (var i = lid; i < p.n; i += WG) {
    xy[xb + i] = (xy[xb + i] * scale) * w[p.wOffset + i];
  }
}
