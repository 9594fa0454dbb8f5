import { unlink } from 'node:fs/promises';
import { isGgufName, reasonOf } from './find-gguf-files';

/**
 * Deletes a model's file from disk. Only .gguf files: a library row pointing at anything else
 * (a hand-edited database, a file added under another name) never makes Gufo delete it.
 * A file already gone is not an error: what the user asked for is done.
 */
export async function deleteModelFile(path: string): Promise<void> {
  if (!isGgufName(path)) throw new Error(`not deleting ${path}: Gufo only deletes .gguf files from disk`);
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new Error(`cannot delete ${path}: ${reasonOf(err)}`);
  }
}
