import { readFileSync } from 'node:fs';
import { imatrixFromGguf, parseLegacyImatrix, type ImportanceMatrix } from '../core/imatrix';
import { openGguf } from './gguf-io';

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
