/**
 * The model library: scans of the model folders, adding and removing models, and the background
 * 'hash' job that fills in each file's SHA-256.
 *
 * Scans, adds and removals run one at a time (each reads rows and then writes them), so two
 * windows listing at once cannot both insert or delete the same file.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { LibraryApi, LibraryFolder } from '../../src-preload/api';
import { addModelFiles } from '../node/library/add-models';
import { deleteModelFile } from '../node/library/delete-model-file';
import { reasonOf } from '../node/library/find-gguf-files';
import { hashModels } from '../node/library/hash-models';
import { scanLibrary } from '../node/library/scan-library';
import { requireModel, type BackendContext } from './context';

export function createLibraryApi(ctx: BackendContext): LibraryApi {
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;
  let hashJob: string | null = null;
  let hashing = false;

  /** Runs `work` after every library change queued before it. */
  function serial<T>(work: () => Promise<T>): Promise<T> {
    const run = queue.then(() => {
      if (closed) throw new Error('the library is closed (Gufo is shutting down)');
      return work();
    });
    queue = run.catch(() => {});
    return run;
  }

  const announce = () => ctx.events.emit({ type: 'library-changed' });

  function folders(): Omit<LibraryFolder, 'problem'>[] {
    const all: Omit<LibraryFolder, 'problem'>[] = [
      { path: ctx.modelsDir, origin: 'data' },
      ...ctx.envModelDirs.map((path) => ({ path, origin: 'env' as const })),
      ...ctx.settings.get().modelDirs.map((path) => ({ path: resolve(path), origin: 'settings' as const })),
    ];
    return all.filter((folder, i) => all.findIndex((f) => f.path === folder.path) === i);
  }

  function scan(full: boolean) {
    return serial(async () => {
      const { changed } = await scanLibrary(ctx.models, folders().map((f) => f.path), { full });
      if (changed) announce();
      startHashing();
      return ctx.models.list();
    });
  }

  /** Starts the 'hash' job unless it is running or there is nothing to hash. */
  function startHashing(): void {
    if (closed || hashing || ctx.models.needingHash().length === 0) return;
    hashing = true;
    const idle = () => (hashing = false);
    hashJob = ctx.jobs.start({ kind: 'hash', title: 'Computing SHA-256 of models', unit: 'bytes' }, async (job) => {
      try {
        return await hashModels(ctx.models, { signal: job.signal, progress: job.progress, onHashed: announce, onIdle: idle });
      } finally {
        idle();
      }
    });
  }

  ctx.onClose(async () => {
    closed = true;
    await queue;
    if (hashJob === null) return;
    if (ctx.jobs.get(hashJob)?.status === 'running') ctx.jobs.cancel(hashJob);
    await ctx.jobs.wait(hashJob);
  });

  return {
    listModels: () => scan(false),

    rescanLibrary: () => scan(true),

    async getModel(id) {
      return requireModel(ctx, id);
    },

    addModels(paths) {
      // The bindings pass JSON from outside: say what is wrong rather than fail inside the scan.
      if (!Array.isArray(paths) || !paths.every((p) => typeof p === 'string' && p !== '')) {
        return Promise.reject(new Error('addModels needs a list of file or folder paths'));
      }
      return serial(async () => {
        const result = await addModelFiles(ctx.models, paths);
        if (result.added.length > 0) {
          announce();
          startHashing();
        }
        return result;
      });
    },

    removeModel(id, options) {
      return serial(async () => {
        const model = requireModel(ctx, id);
        if (options?.deleteFile === true) await deleteModelFile(model.path);
        ctx.models.remove(model.id, model.path);
        announce();
      });
    },

    async libraryFolders() {
      return Promise.all(
        folders().map(async (folder) => {
          try {
            const info = await stat(folder.path);
            return { ...folder, problem: info.isDirectory() ? null : 'not a folder' };
          } catch (err) {
            return { ...folder, problem: reasonOf(err) };
          }
        }),
      );
    },
  };
}
