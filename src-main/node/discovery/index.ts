/**
 * Finds the models in the library's folders and in other apps' stores. A file reachable from
 * several of them (a link, a folder inside another) is found once, from the first that reaches it.
 */
import { stat } from 'node:fs/promises';
import type { ModelSource } from '../../../src-preload/api';
import { discoverFolder } from './folder-store';
import type { Discovery, FoundModel } from './found-model';
import { discoverHuggingFace } from './huggingface-store';
import { discoverOllama } from './ollama-store';
import type { StoreRoot } from './store-paths';

export interface ScanSource {
  path: string;
  source: ModelSource;
  layout: StoreRoot['layout'];
  /** An app's default store: often absent, which is no problem. */
  optional: boolean;
}

export async function discoverModels(sources: readonly ScanSource[]): Promise<Discovery> {
  const models = new Map<string, FoundModel>();
  const result: Discovery = { models: [], problems: [], folders: [] };
  for (const source of sources) {
    if (source.optional && !(await isFolder(source.path))) continue;
    const found = await discover(source);
    for (const model of found.models) if (!models.has(model.path)) models.set(model.path, model);
    result.problems.push(...found.problems);
    result.folders.push(...found.folders);
  }
  return { ...result, models: [...models.values()], folders: [...new Set(result.folders)] };
}

function discover(source: ScanSource): Promise<Discovery> {
  if (source.layout === 'ollama') return discoverOllama(source.path);
  if (source.layout === 'huggingface') return discoverHuggingFace(source.path);
  return discoverFolder(source.path, source.source);
}

export async function isFolder(path: string): Promise<boolean> {
  return stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );
}
