// F16: IEEE halves, row after row (two per word; a row may start mid-word when cols is odd).
#include "quant/halves.wgsl"

fn half_value(h: u32) -> f32 {
  return f16_to_f32(h);
}

fn half_pair(w: u32) -> vec2<f32> {
  return f16x2(w);
}
