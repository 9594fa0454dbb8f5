// The GLU's activations, as llama.cpp's CPU kernels compute them on f32 (shared by elementwise.wgsl's
// glu and the mat-vec that computes ffn_down's input while loading it, weight-io.wgsl's X_GLU):
//   silu(x) = x / (1 + exp(-x))
//   gelu(x) = 0 for x <= -10, x for x >= 10, else the tanh approximation looked up in a table of
//             halves: x rounded to f16, 0.5·x·(1 + tanh(sqrt(2/π)·x·(1 + 0.044715·x²))) rounded
//             to f16 (ggml's GGML_GELU_FP16 table).
#include "tanh.wgsl"

fn half_round(v: f32) -> f32 {
  return unpack2x16float(pack2x16float(vec2<f32>(v, 0.0))).x;
}

fn gelu(v: f32) -> f32 {
  if (v <= -10.0) {
    return 0.0;
  }
  if (v >= 10.0) {
    return v;
  }
  let h = half_round(v);
  return half_round(0.5 * h * (1.0 + tanh_f32(0.79788456080286535587989211986876 * h * (1.0 + 0.044715 * h * h))));
}

fn silu(v: f32) -> f32 {
  return v / (1.0 + exp(-v));
}
