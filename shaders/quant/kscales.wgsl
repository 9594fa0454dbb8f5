// Q4_K/Q5_K: the 6-bit scale and min of sub-block j (0..7) from scales[12] (from word W_SCALES
// of the block): for j < 4 the low 6 bits of bytes j (scale) and j + 4 (min); for j >= 4
// the nibbles of byte j + 4 (low: scale, high: min) plus the top 2 bits of bytes j - 4 (scale) and j (min).
fn kscale_byte(b: u32, i: u32) -> u32 {
  return (W[b + {{W_SCALES}}u + (i >> 2u)] >> ((i & 3u) * 8u)) & 0xffu;
}

// (scale, min) of sub-block j of the block starting at word b.
fn kscale_min(b: u32, j: u32) -> vec2<u32> {
  if (j < 4u) {
    return vec2<u32>(kscale_byte(b, j) & 63u, kscale_byte(b, j + 4u) & 63u);
  }
  let c = kscale_byte(b, j + 4u);
  return vec2<u32>((c & 15u) | ((kscale_byte(b, j - 4u) >> 6u) << 4u), (c >> 4u) | ((kscale_byte(b, j) >> 6u) << 4u));
}
