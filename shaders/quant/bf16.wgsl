// BF16: the top halves of f32s, row after row (two per word; a row may start mid-word when cols is odd).
#include "quant/halves.wgsl"

fn half_value(h: u32) -> f32 {
  return bitcast<f32>(h << 16u);
}

fn half_pair(w: u32) -> vec2<f32> {
  return bf16x2(w);
}
