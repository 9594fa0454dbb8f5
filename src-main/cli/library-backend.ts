/**
 * The back end the library commands work through (`gufo models`, `gufo pull`): the same database
 * and models folder as the app (GUFO_HOME, else the OS user-data folder), so what one does the
 * other sees, and a download stopped in one resumes in the other.
 */
import { createBackend, type Backend } from '../backend/index';
import { dataDir } from '../node/data-dir';
import { log } from './command';

export async function withLibrary<T>(work: (backend: Backend) => Promise<T>): Promise<T> {
  const backend = createBackend({ mode: 'browser', dataDir: dataDir() });
  for (const notice of backend.context.notices) log(notice);
  try {
    return await work(backend);
  } finally {
    await backend.close();
  }
}
