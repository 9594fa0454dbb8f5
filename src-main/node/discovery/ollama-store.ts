/**
 * Ollama's model store: `manifests/<registry>/<namespace>/<model>/<tag>` are OCI-style JSON
 * manifests whose layer of media type `application/vnd.ollama.image.model` names the GGUF file
 * by its digest, stored as `blobs/sha256-<hex>`. The model shows as Ollama shows it ("llama3.2:latest",
 * "user/model:tag", "hf.co/org/repo:Q4_K_M"); the file is read in place, never copied.
 */
import type { Dirent } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { reasonOf, type ScanProblem } from '../library/find-gguf-files';
import type { Discovery, FoundModel } from './found-model';

const OLLAMA_MODEL_MEDIA_TYPE = 'application/vnd.ollama.image.model';
const DEFAULT_REGISTRY = 'registry.ollama.ai';
const DEFAULT_NAMESPACE = 'library';
/** Manifests are a few hundred bytes; anything far larger is not one. */
const MAX_MANIFEST_BYTES = 1 << 20;

interface Manifest {
  layers?: { mediaType?: unknown; digest?: unknown }[];
}

export async function discoverOllama(root: string): Promise<Discovery> {
  const problems: ScanProblem[] = [];
  const folders: string[] = [root];
  const manifests = await listManifests(join(root, 'manifests'), problems, folders);
  const models: FoundModel[] = [];
  const seen = new Set<string>();
  for (const manifest of manifests) {
    const found = await readManifest(root, manifest, problems);
    // Two tags of one model share its blob: the first name found stands for it.
    if (found && !seen.has(found.path)) {
      seen.add(found.path);
      models.push(found);
    }
  }
  return { models, problems, folders };
}

/** "llama3.2:latest", "user/model:tag", "hf.co/org/repo:tag": the name `ollama list` shows. */
export function ollamaModelName(segments: readonly string[]): string {
  const tag = segments.at(-1) ?? 'latest';
  let path = segments.slice(0, -1);
  if (path.length === 3 && path[0] === DEFAULT_REGISTRY)
    path = path[1] === DEFAULT_NAMESPACE ? path.slice(2) : path.slice(1);
  return `${path.join('/')}:${tag}`;
}

/** Manifest files under `dir`, sorted (so "latest" and the rest come in a stable order). */
async function listManifests(dir: string, problems: ScanProblem[], folders: string[]): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      problems.push({ path: dir, reason: `cannot read folder ${dir}: ${reasonOf(err)}` });
    return [];
  }
  folders.push(dir);
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await listManifests(path, problems, folders)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}

async function readManifest(root: string, path: string, problems: ScanProblem[]): Promise<FoundModel | null> {
  let manifest: Manifest;
  try {
    if ((await stat(path)).size > MAX_MANIFEST_BYTES) throw new Error('too large for a manifest');
    manifest = JSON.parse(await readFile(path, 'utf8')) as Manifest;
  } catch (err) {
    problems.push({ path, reason: `cannot read Ollama manifest ${path}: ${reasonOf(err)}` });
    return null;
  }
  const layers = Array.isArray(manifest.layers)
    ? manifest.layers.filter((l) => l?.mediaType === OLLAMA_MODEL_MEDIA_TYPE)
    : [];
  // Models that live elsewhere (Ollama's cloud models) have no model layer: nothing to read.
  if (layers.length === 0) return null;
  const parts: string[] = [];
  const digests: string[] = [];
  for (const layer of layers) {
    const hex = typeof layer.digest === 'string' ? /^sha256[:-]([0-9a-f]{64})$/.exec(layer.digest)?.[1] : undefined;
    if (!hex) {
      problems.push({
        path,
        reason: `${path}: the model layer's digest is not a SHA-256 (${JSON.stringify(layer.digest)})`,
      });
      return null;
    }
    const blob = await findBlob(join(root, 'blobs'), hex);
    if (!blob) {
      problems.push({ path, reason: `${path}: its model file blobs/sha256-${hex} is missing` });
      return null;
    }
    parts.push(blob);
    digests.push(hex);
  }
  return {
    path: parts[0]!,
    parts,
    source: 'ollama',
    label: ollamaModelName(relative(join(root, 'manifests'), path).split(sep)),
    fileName: basename(parts[0]!),
    sha256: digests[0]!,
  };
}

/** The blob's real path: `sha256-<hex>`, or `sha256:<hex>` as Ollama named them before 0.1.33. */
async function findBlob(blobs: string, hex: string): Promise<string | null> {
  for (const name of [`sha256-${hex}`, `sha256:${hex}`]) {
    try {
      const path = await realpath(join(blobs, name));
      if ((await stat(path)).isFile()) return path;
    } catch {
      // Not under this name.
    }
  }
  return null;
}
