/**
 * A library model's SHA-256 for a result that names its file's bytes (a benchmark run, a quality
 * report): the hash the library knows, else computed now and given to the library.
 */
import type { ModelEntry } from '../../../src-preload/api';
import type { ModelStore } from '../store/models';
import { sha256File, type HashOptions } from './sha256-file';

export async function modelSha256(
  store: ModelStore,
  model: ModelEntry,
  options: HashOptions = {},
): Promise<{ sha256: string; computed: boolean }> {
  const known = store.get(model.id)?.sha256;
  if (known) return { sha256: known, computed: false };
  const sha256 = await sha256File(model.path, options);
  store.setSha256(model.id, sha256, model.mtimeMs);
  return { sha256, computed: true };
}
