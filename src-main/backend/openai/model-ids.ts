/**
 * Model ids as API clients name models: stable and readable, from the file name. The library's
 * numeric ids mean nothing to a script, and general.name is often missing or shared by quantizations.
 */
import { createHash } from 'node:crypto';
import type { ModelEntry } from '../../../src-preload/api';

export interface ServedModel {
  /** The API's name for it ("stories260k"). */
  id: string;
  entry: ModelEntry;
}

/**
 * The readable library models with their ids: the file name without ".gguf" (and without the
 * "-00001-of-00003" of a split set), lower-cased; Ollama's models by Ollama's name for them
 * ("llama3.2:3b"), since their files are named by hash. Models with the same name are told apart
 * by path: the first in path order keeps the plain id, each other one gets "-" and the first 8 hex
 * digits of its path's SHA-256, so an id stays put while its file does. Sorted by id.
 */
export function servedModels(entries: readonly ModelEntry[]): ServedModel[] {
  const byName = new Map<string, ModelEntry[]>();
  for (const entry of entries) {
    if (entry.error !== null) continue;
    const name = (entry.source === 'ollama' ? entry.name : entry.fileName.replace(/(-\d{5}-of-\d{5})?\.gguf$/i, '')).toLowerCase();
    byName.set(name, [...(byName.get(name) ?? []), entry]);
  }
  const served: ServedModel[] = [];
  for (const [name, group] of byName) {
    group.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    group.forEach((entry, i) => served.push({ id: i === 0 ? name : `${name}-${pathHash(entry.path)}`, entry }));
  }
  return served.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function pathHash(path: string): string {
  return createHash('sha256').update(path).digest('hex').slice(0, 8);
}
