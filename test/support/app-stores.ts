/**
 * Other apps' model stores, laid out as those apps lay them out, with real GGUF files:
 * Ollama (OCI-style manifests naming blobs/sha256-<hex>), the Hugging Face cache
 * (models--org--repo/{blobs,snapshots/<rev>,refs/main}, snapshot files linking to blobs), and
 * the plain publisher/repo/file.gguf folders of LM Studio.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

export interface OllamaModel {
  /** registry, namespace, model, tag. */
  name: [string, string, string, string];
  /** The GGUF file; absent for a model without weights on this machine (Ollama's cloud models). */
  gguf?: Buffer;
  /** Do not write the blob (a store damaged by hand). */
  blobMissing?: boolean;
}

/** Writes manifests and blobs as `ollama pull` leaves them; answers each model's blob path. */
export function writeOllamaStore(root: string, models: OllamaModel[]): string[] {
  mkdirSync(join(root, 'blobs'), { recursive: true });
  const blob = (bytes: Buffer, mediaType: string) => {
    const hex = sha256(bytes);
    writeFileSync(join(root, 'blobs', `sha256-${hex}`), bytes);
    return { mediaType, digest: `sha256:${hex}`, size: bytes.length };
  };
  return models.map(({ name, gguf, blobMissing }) => {
    const config = blob(
      Buffer.from(JSON.stringify({ model_format: 'gguf', model_family: 'llama' })),
      'application/vnd.docker.container.image.v1+json',
    );
    const layers = [
      blob(Buffer.from('{{ .Prompt }}'), 'application/vnd.ollama.image.template'),
      blob(Buffer.from('{"stop":["</s>"]}'), 'application/vnd.ollama.image.params'),
    ];
    let path = '';
    if (gguf) {
      const model = {
        mediaType: 'application/vnd.ollama.image.model',
        digest: `sha256:${sha256(gguf)}`,
        size: gguf.length,
      };
      path = join(root, 'blobs', `sha256-${sha256(gguf)}`);
      if (!blobMissing) writeFileSync(path, gguf);
      layers.unshift(model);
    }
    const manifest = join(root, 'manifests', ...name);
    mkdirSync(dirname(manifest), { recursive: true });
    writeFileSync(
      manifest,
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
        config,
        layers,
      }),
    );
    return path;
  });
}

/**
 * Writes a repo into a Hugging Face cache (`hub`) at `revision`, as huggingface_hub does: each
 * file once in blobs/ under its SHA-256, linked from snapshots/<revision>/<path> (relative links),
 * refs/main naming the revision when `main`. Answers the blob paths, in the order of `files`.
 */
export function writeHuggingFaceRepo(
  hub: string,
  repo: string,
  revision: string,
  files: Record<string, Buffer>,
  main = true,
): string[] {
  const repoDir = join(hub, `models--${repo.replace('/', '--')}`);
  mkdirSync(join(repoDir, 'blobs'), { recursive: true });
  if (main) {
    mkdirSync(join(repoDir, 'refs'), { recursive: true });
    writeFileSync(join(repoDir, 'refs', 'main'), revision);
  }
  return Object.entries(files).map(([path, bytes]) => {
    const blob = join(repoDir, 'blobs', sha256(bytes));
    writeFileSync(blob, bytes);
    const link = join(repoDir, 'snapshots', revision, path);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(relative(dirname(link), blob), link);
    return blob;
  });
}

/** A file at `root/rel`, folders made. */
export function writeFileAt(root: string, rel: string, bytes: Buffer): string {
  const path = join(root, rel);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
  return path;
}
