// How reads alone of KV rows divide them (copy.wgsl's read_rows and read_rows_texture,
// read-rows-immediates.wgsl), as CPU-shape decode attention (attention-decode.wgsl's
// attend_split_cpu) does: the source holds `positions` positions of `heads` rows (the KV cache's
// heads side by side); workgroup `group` of `groups` reads head group % heads over its share of
// the positions, [begin, end).
struct RowShare {
  head: u32,
  begin: u32,
  end: u32,
}

fn row_share(group: u32, groups: u32, positions: u32, heads: u32) -> RowShare {
  let shares = groups / heads;
  let chunk = (positions + shares - 1u) / shares;
  let begin = (group / heads) * chunk;
  return RowShare(group % heads, begin, min(begin + chunk, positions));
}
