/**
 * Model ids as API clients name models: stable and readable, the library's name for the model. The
 * library's numeric ids mean nothing to a script, and general.name is often missing or shared by quantizations.
 */
import { createHash } from 'node:crypto';
import type { ModelEntry } from '../../../src-preload/api';

export interface ServedModel {
  /** The API's name for it ("stories260k"). */
  id: string;
  entry: ModelEntry;
}

/**
 * Every library model with its id: its library name (the file name without ".gguf" and a split
 * set's "-00001-of-00003"; Ollama's "llama3.2:3b"; the Hugging Face cache's "org/repo/file"),
 * lower-cased. Models with the same name are told apart by path: the first in path order keeps
 * the plain id, each other one gets "-" and the first 8 hex digits of its path's SHA-256, so an id
 * stays put while its file does. Sorted by id. Models Gufo cannot run keep their ids, so a request
 * naming one is told why (see runnableModels).
 */
export function servedModels(entries: readonly ModelEntry[]): ServedModel[] {
  const byName = new Map<string, ModelEntry[]>();
  for (const entry of entries) {
    const name = entry.name.toLowerCase();
    byName.set(name, [...(byName.get(name) ?? []), entry]);
  }
  const served: ServedModel[] = [];
  for (const [name, group] of byName) {
    group.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    group.forEach((entry, i) => served.push({ id: i === 0 ? name : `${name}-${pathHash(entry.path)}`, entry }));
  }
  return served.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The models the API lists and serves: those Gufo can run. */
export function runnableModels(entries: readonly ModelEntry[]): ServedModel[] {
  return servedModels(entries).filter((m) => m.entry.notRunnable === null);
}

function pathHash(path: string): string {
  return createHash('sha256').update(path).digest('hex').slice(0, 8);
}
