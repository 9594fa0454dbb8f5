import { readFileSync } from 'node:fs';
import {
  imatrixFromGguf,
  imatrixGguf,
  parseLegacyImatrix,
  type ImatrixRun,
  type ImportanceMatrix,
} from '../core/imatrix';
import { openGguf, writeGguf } from './gguf-io';

/** Loads an importance matrix in either of llama-imatrix's formats (GGUF, or the legacy .dat). */
export function loadImatrix(path: string): ImportanceMatrix {
  const bytes = readFileSync(path);
  if (bytes.subarray(0, 4).toString('latin1') !== 'GGUF') return parseLegacyImatrix(bytes, path);
  const { gguf, file } = openGguf(path);
  try {
    return imatrixFromGguf(gguf);
  } finally {
    file.close();
  }
}

/** Writes llama-imatrix's GGUF file for `run` (through a temporary file, renamed into place). */
export async function writeImatrixFile(path: string, run: ImatrixRun, signal?: AbortSignal): Promise<void> {
  const { spec, data } = imatrixGguf(run);
  await writeGguf(path, spec, (i) => [new Uint8Array(data[i]!.buffer)], signal ? { signal } : {});
}
