/**
 * Where `gufo bench` and `gufo kld` keep their results when GUFO_HOME is set, and `gufo quantize`
 * its exports always: the app's database, in the rows the app writes for the same things, so the
 * app shows them with its own. The files join the library (as files added by hand) when they are not in it.
 *
 * The store is opened on its own, not through a whole back end (library-backend.ts): a back end
 * would also treat the exports and downloads of an app running on the same folder as its own.
 */
import { mkdirSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { version } from '../../package.json';
import type { ModelEntry } from '../../src-preload/api';
import type { MeasuredModel } from '../backend/quality/record';
import { dataDir, databasePath } from '../node/data-dir';
import { addModelFiles } from '../node/library/add-models';
import { modelSha256 } from '../node/library/model-sha256';
import { openStore, type Db } from '../node/store/database';
import { ModelStore } from '../node/store/models';
import { CliError, log } from './command';

/** For the commands' --help. */
export const STORE_HELP = `With GUFO_HOME set, the result is also stored in the database there (GUFO_HOME/gufo.db), as
the app stores its own, and the model files join the app's library if they are not in it.`;

export interface ResultsStore {
  db: Db;
  appVersion: string;
  /** The library's model for the file at `path` (added when missing), with its SHA-256. */
  model(path: string): Promise<MeasuredModel>;
  /** The same without its SHA-256 (the app's background job computes it). */
  entry(path: string): Promise<ModelEntry>;
}

/** Runs `work` on the database when GUFO_HOME is set; does nothing otherwise. */
export async function storeResults(work: (store: ResultsStore) => void | Promise<void>): Promise<void> {
  if (process.env.GUFO_HOME) await openResults(dataDir(), work);
}

/**
 * Runs `work` on the app's database: GUFO_HOME's, else the one the app uses by default (the OS
 * user-data folder, node/data-dir.ts). Without GUFO_HOME a failure is only reported: the result
 * it records is the command's by-product, not what was asked for.
 */
export async function storeInAppData(work: (store: ResultsStore) => void | Promise<void>): Promise<void> {
  if (process.env.GUFO_HOME) return openResults(dataDir(), work);
  try {
    await openResults(dataDir(), work);
  } catch (err) {
    log(`not recorded in ${databasePath(dataDir())}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function openResults(dir: string, work: (store: ResultsStore) => void | Promise<void>): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const path = databasePath(dir);
  const { db, notices } = openStore(path);
  for (const notice of notices) log(notice);
  try {
    const models = new ModelStore(db);
    await work({
      db,
      appVersion: version,
      model: (file) => measuredModel(models, file),
      entry: (file) => libraryEntry(models, file),
    });
  } finally {
    db.close();
  }
  log(`stored in ${path}`);
}

async function measuredModel(models: ModelStore, path: string): Promise<MeasuredModel> {
  const entry = await libraryEntry(models, path);
  const { sha256, computed } = await modelSha256(models, entry);
  // Its hash may show it to be a copy of a model the library has: then it is that model.
  if (computed) models.mergeCopies();
  return { entry: models.byPath(entry.path) ?? entry, sha256 };
}

async function libraryEntry(models: ModelStore, path: string): Promise<ModelEntry> {
  const { added, skipped } = await addModelFiles(models, [path]);
  // A file that is no readable GGUF is listed too, with its error: it is no model to store results of.
  const entry = added[0] ?? models.byPath(await realpath(path));
  if (!entry || entry.error !== null)
    throw new CliError(`cannot store the result: ${skipped[0]?.reason ?? `${path} did not join the library`}`);
  return entry;
}
