/** Where a tensor sits in the model, read from its name: the layer (block) and the role within it. */
const BLOCK_NAME = /^blk\.(\d+)\.(.+)$/;

/** "blk.3.attn_q.weight" → layer 3, role "attn_q"; "blk.3.attn_q.bias" → role "attn_q.bias"; "output.weight" → no layer, role "output". */
export function tensorLocation(name: string): { layer: number | null; role: string } {
  const m = BLOCK_NAME.exec(name);
  const rest = m ? m[2]! : name;
  return { layer: m ? Number(m[1]) : null, role: rest.endsWith('.weight') ? rest.slice(0, -'.weight'.length) : rest };
}
