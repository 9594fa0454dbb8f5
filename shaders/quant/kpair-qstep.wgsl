// The integer mat-vec's step (matmul.wgsl's INT_DOT) for Q4_K and Q5_K: sub-blocks u and u + 1
// (u even) of rows row0 .. row0 + rows − 1, whose 32 bytes of qs hold both (low and high nibbles),
// with x as q8_1 (weight-io.wgsl's xq_block). Per row the type's codes are dotted with the two
// blocks of x exactly in integers, then kpair_sum takes d_x · Σ q·q_x for the dots and
// s_x = d_x · Σ q_x for the sums of x. The type gives
//   fn pair_qdots(b: vec2<u32>, sub: u32, xl: XQ8, xh: XQ8) -> vec2<i32>   Σ q·q_x of sub and sub + 1
fn matvec_step(xb: u32, u: u32, row0: u32, rows: u32, acc: ptr<function, array<f32, ACC>>) {
  let xl = xq_block(u);
  let xh = xq_block(u + 1u);
  let sub = u & 7u;
  for (var r = 0u; r < {{MV_ROW_END}}; r++) {
    if (r >= rows) { break; }
    let b = w_block(row0 + r, u >> 3u);
    let q = pair_qdots(b, sub, xl, xh);
    (*acc)[r] += kpair_dot(b, sub, xl.d * f32(q.x), xh.d * f32(q.y), vec2<f32>(xl.s, 0.0), vec2<f32>(xh.s, 0.0));
  }
}
