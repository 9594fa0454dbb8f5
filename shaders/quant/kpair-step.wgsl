// The decode mat-vec's step on lavapipe (matmul.wgsl's MV_PAIRS) for Q4_K and Q5_K, whose
// sub-blocks 2j and 2j + 1 share their 32 bytes of qs (low and high nibbles): a whole super-block
// u / 8 of rows row0 .. row0 + rows − 1, a pair at a time. Each token's two units of x (x_pair)
// are prepared once for all the rows; per row, the pair's scales and mins (kpair) and its codes
// are read once, then for every token d · (s · Σ q·x + s' · Σ q·x') − dmin · (m · Σx + m' · Σx').
// The type gives
//   struct PairCodes                                                what a row's pair j dots with
//   fn pair_codes(b: vec2<u32>, j: u32) -> PairCodes                 read from the block at b
//   fn pair_dots(w: PairCodes, j: u32, x: XPair) -> vec2<f32>        Σ q·x of sub-blocks 2j, 2j + 1
fn matvec_step(xb: u32, u: u32, row0: u32, rows: u32, acc: ptr<function, array<f32, ACC>>) {
  for (var j = 0u; j < 4u; j++) {
    let c = 32u * u + 64u * j;
    #unroll T 0 {{TT}} 1
    let x{{T}} = x_pair(token_x(xb, {{T}}u), c, c + 32u);
    #endunroll
    for (var r = 0u; r < {{MV_ROW_END}}; r++) {
      if (r >= rows) { break; }
      let b = w_block(row0 + r, u >> 3u);
      let k = kpair(b, 2u * j);
      let w = pair_codes(b, j);
      #unroll T 0 {{TT}} 1
      {
        let q = pair_dots(w, j, x{{T}});
        (*acc)[r * TT + {{T}}u] += kpair_sum(k, q.x, q.y, x{{T}}.sums.xy, x{{T}}.sums.zw);
      }
      #endunroll
    }
  }
}
