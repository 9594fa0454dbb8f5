/**
 * The model library: scans of the model folders and of other apps' stores (Ollama, LM Studio,
 * the Hugging Face cache, Jan, GPT4All; read in place, never copied), rescans when those folders
 * change on disk, adding and removing models, and the background 'hash' job that fills in each
 * file's SHA-256 (copies of the same bytes then become one model with several locations).
 *
 * A folder added by hand becomes a model folder (Settings' `modelDirs`): the library's folders and
 * the settings' are one list, so a folder added anywhere is shown in Settings, watched and rescanned.
 *
 * Scans, adds and removals run one at a time (each reads rows and then writes them), so two
 * windows listing at once cannot both insert or delete the same file. Downloads and exports add
 * their files through the same queue (libraryOf).
 */
import { stat } from 'node:fs/promises';
import { basename, resolve, sep } from 'node:path';
import type { AddModelsResult, LibraryApi, LibraryFolder, ModelSource } from '../../src-preload/api';
import { isFolder, type ScanSource } from '../node/discovery/index';
import { partsOf } from '../node/discovery/split-sets';
import { appStoreRoots } from '../node/discovery/store-paths';
import { FolderWatcher } from '../node/discovery/watch-folders';
import { addModelFiles, type KnownFile } from '../node/library/add-models';
import { deleteModelFile } from '../node/library/delete-model-file';
import { reasonOf } from '../node/library/find-gguf-files';
import { hashModels } from '../node/library/hash-models';
import { scanLibrary } from '../node/library/scan-library';
import { isScannedSource } from '../node/store/models';
import { requireModel, type BackendContext } from './context';
import { promised } from './promised';

export interface Library {
  api: LibraryApi;
  /** Adds files Gufo made ('downloaded', 'exported') through the library's queue; answers what joined. */
  addFiles(paths: string[], source: ModelSource, known?: KnownFile): Promise<AddModelsResult>;
}

type Source = ScanSource & { origin: LibraryFolder['origin'] };

const libraries = new WeakMap<BackendContext, Library>();

/** The back end's one library (its queue, hashing and watches are shared by every feature). */
export function libraryOf(ctx: BackendContext): Library {
  let library = libraries.get(ctx);
  if (!library) {
    library = createLibrary(ctx);
    libraries.set(ctx, library);
  }
  return library;
}

export function createLibraryApi(ctx: BackendContext): LibraryApi {
  return libraryOf(ctx).api;
}

function createLibrary(ctx: BackendContext): Library {
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;
  let hashJob: string | null = null;
  let hashing = false;
  /** Models whose hashing the user cancelled: scans leave them unhashed until a full rescan. */
  const hashCancelled = new Set<number>();
  const watcher = new FolderWatcher(() => void scan(false).catch(() => {}));

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

  /** Gufo's folders (its own, GUFO_MODELS_DIRS, the settings'), then the other apps' stores; each once. */
  function sources(): Source[] {
    const folder = (path: string, origin: Source['origin']): Source => ({
      path,
      origin,
      source: 'folder',
      layout: 'folder',
      optional: false,
    });
    const all: Source[] = [
      folder(ctx.modelsDir, 'data'),
      ...ctx.envModelDirs.map((path) => folder(path, 'env')),
      ...ctx.settings.get().modelDirs.map((path) => folder(resolve(path), 'settings')),
      ...appStoreRoots({ env: ctx.env, platform: process.platform }).map((root): Source => ({
        ...root,
        origin: root.source,
        optional: true,
      })),
    ];
    return all.filter((source, i) => all.findIndex((s) => s.path === source.path) === i);
  }

  /** The apps' stores are scanned first: a store inside a scanned folder still says whose it is. */
  const scanOrder = () => sources().sort((a, b) => Number(a.source === 'folder') - Number(b.source === 'folder'));

  /** Brings the library up to date with its sources and watches them; call it inside `serial`. */
  async function scanNow(full: boolean) {
    const order = scanOrder();
    const { changed, folders } = await scanLibrary(ctx.models, order, { full });
    if (changed) announce();
    startHashing();
    await watch(order, folders);
    return ctx.models.list();
  }

  const scan = (full: boolean) => serial(() => scanNow(full));

  /**
   * Makes the folders among `paths` model folders (Settings' `modelDirs`), unless Gufo already
   * scans them (its own, GUFO_MODELS_DIRS, the settings', or one inside those); answers those added.
   */
  async function keepFolders(paths: readonly string[]): Promise<string[]> {
    const scanned = sources()
      .filter((s) => s.source === 'folder')
      .map((s) => s.path);
    const fresh: string[] = [];
    for (const path of paths.map((p) => resolve(p))) {
      if (!(await isFolder(path))) continue;
      if ([...scanned, ...fresh].some((dir) => path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep)))
        continue;
      fresh.push(path);
    }
    if (fresh.length > 0) {
      const settings = ctx.settings.update({ modelDirs: [...ctx.settings.get().modelDirs, ...fresh] });
      ctx.events.emit({ type: 'settings-changed', settings });
    }
    return fresh;
  }

  async function watch(order: Source[], folders: string[]): Promise<void> {
    if (!watcher.recursive) return watcher.watch(folders);
    const roots: string[] = [];
    for (const source of order) if (await isFolder(source.path)) roots.push(source.path);
    watcher.watch(roots);
  }

  /** Starts the 'hash' job unless it is running or there is nothing to hash. */
  function startHashing(): void {
    if (closed || hashing || ctx.models.needingHash().every((m) => hashCancelled.has(m.id))) return;
    hashing = true;
    const idle = () => (hashing = false);
    const hashed = () => {
      ctx.models.mergeCopies();
      announce();
    };
    hashJob = ctx.jobs.start({ kind: 'hash', title: 'Computing SHA-256 of models', unit: 'bytes' }, async (job) => {
      try {
        return await hashModels(ctx.models, {
          signal: job.signal,
          skip: hashCancelled,
          progress: (done, total) => job.progress(done, total),
          onHashed: hashed,
          onIdle: idle,
        });
      } catch (err) {
        // Cancelled from the jobs list (closing cancels too): the next scan must not start it again.
        if (job.signal.aborted && !closed) for (const m of ctx.models.needingHash()) hashCancelled.add(m.id);
        throw err;
      } finally {
        idle();
      }
    });
  }

  /** Adds the files (or folders' files); call it inside `serial`. */
  async function addNow(paths: readonly string[], source: ModelSource, known?: KnownFile) {
    const result = await addModelFiles(ctx.models, paths, source, known);
    if (result.added.length > 0) {
      if (ctx.models.mergeCopies().length > 0) result.added = result.added.map((m) => ctx.models.byPath(m.path) ?? m);
      announce();
      startHashing();
    }
    return result;
  }

  const addFiles = (paths: string[], source: ModelSource, known?: KnownFile) =>
    serial(() => addNow(paths, source, known));

  ctx.onClose(async () => {
    closed = true;
    watcher.close();
    await queue;
    if (hashJob === null) return;
    if (ctx.jobs.get(hashJob)?.status === 'running') ctx.jobs.cancel(hashJob);
    await ctx.jobs.wait(hashJob);
  });

  const api = promised<LibraryApi>({
    listModels: () => scan(false),

    rescanLibrary: () => {
      hashCancelled.clear();
      return scan(true);
    },

    getModel(id) {
      return requireModel(ctx, id);
    },

    addModels(paths) {
      // The bindings pass JSON from outside: say what is wrong rather than fail inside the scan.
      if (!Array.isArray(paths) || !paths.every((p) => typeof p === 'string' && p !== '')) {
        return Promise.reject(new Error('addModels needs a list of file or folder paths'));
      }
      return serial(async () => {
        // The files first: a scan of the new folder would find them and report them as known.
        const result = await addNow(paths, 'added');
        result.folders = await keepFolders(paths);
        if (result.folders.length > 0) await scanNow(false); // watches the new folders
        return result;
      });
    },

    removeModel(id, options) {
      return serial(async () => {
        const model = requireModel(ctx, id);
        if (options?.deleteFile === true) {
          const theirs = model.locations.find((l) => l.source !== 'folder' && isScannedSource(l.source));
          if (theirs)
            throw new Error(
              `not deleting ${theirs.path}: it belongs to ${APP_NAMES[theirs.source]}; delete the model there`,
            );
          for (const location of model.locations)
            for (const part of partsOf(location.path, basename(location.path), model.parts))
              await deleteModelFile(part);
        }
        ctx.models.remove(model.id);
        announce();
      });
    },

    async libraryFolders() {
      return Promise.all(
        sources().map(async ({ path, origin }) => {
          try {
            const info = await stat(path);
            return { path, origin, problem: info.isDirectory() ? null : 'not a folder' };
          } catch (err) {
            return { path, origin, problem: reasonOf(err) };
          }
        }),
      );
    },
  });

  return { api, addFiles };
}

const APP_NAMES: Partial<Record<ModelSource, string>> = {
  ollama: 'Ollama (ollama rm)',
  lmstudio: 'LM Studio',
  huggingface: 'the Hugging Face cache (huggingface-cli delete-cache)',
  jan: 'Jan',
  gpt4all: 'GPT4All',
};
