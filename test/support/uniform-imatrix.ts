/** An importance matrix file that weighs every input of every block matrix of a model alike. */
import { imatrixGguf } from '../../src-main/core/imatrix';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';

/** Writes to `out` a one-chunk imatrix GGUF for `model` whose every weight is 4 (`dataset` names where it came from). */
export async function writeUniformImatrix(model: string, out: string, dataset = 'test'): Promise<void> {
  const { gguf, file } = openGguf(model);
  const weights = gguf.tensors
    .filter((t) => t.name.startsWith('blk.') && t.ne.length >= 2)
    .map((t) => ({
      weight: t.name,
      sums: new Float32Array(Number(t.ne[0])).fill(4),
      inSums: new Float32Array(Number(t.ne[0])),
      counts: [4],
    }));
  file.close();
  const { spec, data } = imatrixGguf({ datasets: [dataset], chunkCount: 1, chunkSize: 4, weights });
  await writeGguf(out, spec, (i) => [new Uint8Array(data[i]!.buffer)]);
}
