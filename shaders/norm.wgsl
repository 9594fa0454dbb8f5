// RMSNorm, as llama.cpp's rms_norm followed by the multiply with the norm weight:
//   y = x / sqrt(mean(x²) + eps) * w
// One workgroup per row; a token has rowsPerToken rows. `rms_norm` writes a separate output (or,
// with lastOnly, normalizes only the batch's last token, for the output head; with ACCUMULATE,
// adds to it: gemma's post-norms, whose output joins the residual stream); `rms_norm_inplace`
// normalizes rows of x in place (qwen3's Q/K norm, one row per head).
// x's rows may lie inside wider token rows (tokenStride, e.g. the Q and K heads of a fused q|k|v
// row), and a token's rows from wSplit on take the weight's next n values (K's norm after Q's).
// `layer_norm_inplace` is ggml_norm then the weight and bias (BERT's LayerNorms), in place:
//   x = (x - mean(x)) / sqrt(mean((x - mean(x))²) + eps) * w + b

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
@group(0) @binding(5) var<storage, read> b: array<f32>;

#include "reduce.wgsl"

fn row_index(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
  return wid.x + wid.y * nwg.x;
}

// Where row `row` (counted over the batch) starts in x, and its weight in w.
fn x_base(row: u32) -> u32 {
  let stride = select(p.rowsPerToken * p.n, p.tokenStride, p.tokenStride != 0u);
  return (row / p.rowsPerToken) * stride + (row % p.rowsPerToken) * p.n;
}

fn w_base(row: u32) -> u32 {
  let split = p.wSplit != 0u && row % p.rowsPerToken >= p.wSplit;
  return p.wOffset + select(0u, p.n, split);
}

// 1 / sqrt(mean((xy - center)²) + eps) over the row of xy at xb: RMSNorm's scale with center 0, LayerNorm's with the mean.
fn inverse_deviation(xb: u32, center: f32, lid: u32) -> f32 {
  var ss = 0.0;
  for (var i = lid; i < p.n; i += WG) {
    let v = xy[xb + i] - center;
    ss += v * v;
  }
  return inverseSqrt(reduce_sum(lid, ss) / f32(p.n) + p.eps);
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
  let xb = x_base(first + row);
  let wb = w_base(first + row);
  let yb = row * p.n;
  var ss = 0.0;
  for (var i = lid; i < p.n; i += WG) {
    let v = x[xb + i];
    ss += v * v;
  }
  let scale = inverseSqrt(reduce_sum(lid, ss) / f32(p.n) + p.eps);
  for (var i = lid; i < p.n; i += WG) {
    let v = (x[xb + i] * scale) * w[wb + i];
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
  let xb = x_base(row);
  let wb = w_base(row);
  let scale = inverse_deviation(xb, 0.0, lid);
  for (var i = lid; i < p.n; i += WG) {
    xy[xb + i] = (xy[xb + i] * scale) * w[wb + i];
  }
}

@compute @workgroup_size(WG)
fn layer_norm_inplace(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                      @builtin(local_invocation_index) lid: u32) {
  let row = row_index(wid, nwg);
  if (row >= step.nTokens * p.rowsPerToken) {
    return;
  }
  let xb = x_base(row);
  let wb = w_base(row);
  var s = 0.0;
  for (var i = lid; i < p.n; i += WG) {
    s += xy[xb + i];
  }
  let mean = reduce_sum(lid, s) / f32(p.n);
  let scale = inverse_deviation(xb, mean, lid);
  for (var i = lid; i < p.n; i += WG) {
    xy[xb + i] = ((xy[xb + i] - mean) * scale) * w[wb + i] + b[wb + i];
  }
}
