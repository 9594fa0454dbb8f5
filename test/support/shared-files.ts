import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { MODELS } from './paths';

/** Every GGUF file in ../shared/models and its subfolders. */
export function sharedGgufFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.gguf') ? [join(dir, e.name)] : [],
    );
  return walk(MODELS).sort();
}
