/**
 * A model that Ollama's copy and create add to the library: a GGUF file written to Gufo's models
 * folder as `<name>.gguf` (a temporary file renamed into place, never over a file there), with
 * the source's tensors and its metadata changed by `kvs`. The library names a model by its file,
 * so the Ollama name becomes the file name; and it counts identical bytes as one model, so a copy
 * is a model of its own because its `general.name` is the new name.
 */
import { join } from 'node:path';
import type { GgufKv } from '../../core/gguf/values';
import { GgufType } from '../../core/gguf/values';
import { FileExistsError } from '../../node/atomic-write';
import { openGguf, tensorChunks, writeGguf } from '../../node/gguf-io';
import { libraryOf } from '../library';
import { OpenAiError, invalidParam } from '../openai/errors';
import { servedModels } from '../openai/model-ids';
import type { OpenAiService } from '../openai/service';

/** A file name's stem that the library shows as it is (no split-set suffix, nothing a file system refuses). */
const STEM = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const SPLIT_SUFFIX = /-\d{5}-of-\d{5}$|\.gguf$/i;

/** The file stem for an Ollama name ("mine" or "mine:latest"); a 400 naming `param` for any other. */
export function newModelStem(name: string, param: string): string {
  const stem = name.replace(/:latest$/i, '');
  if (stem.includes(':'))
    throw invalidParam(
      param,
      `"${name}": Gufo names a model by its file name and tags every model :latest; give a name without another tag ("${stem.replace(/:/g, '-')}")`,
    );
  if (!STEM.test(stem) || SPLIT_SUFFIX.test(stem))
    throw invalidParam(
      param,
      `"${name}" cannot be a model's file name: use letters, digits, ".", "_" and "-" (no "/"), starting with a letter or digit`,
    );
  return stem;
}

/** A 409 when the library has a model of that name already (Gufo never replaces one). */
export async function checkNameFree(service: OpenAiService, stem: string, param: string): Promise<void> {
  const id = stem.toLowerCase();
  const taken = servedModels(await service.library.listModels()).some((m) => m.id === id || m.id === `${id}:latest`);
  if (taken) throw nameTaken(stem, param);
}

function nameTaken(stem: string, param: string): OpenAiError {
  return new OpenAiError(
    409,
    'invalid_request_error',
    'model_exists',
    `a model named "${stem}" is in the library already; Gufo does not replace it: delete it first or choose another name`,
    param,
  );
}

export const stringKv = (key: string, value: string): GgufKv => ({ key, type: GgufType.STRING, value });

/**
 * Writes `<models folder>/<stem>.gguf` from `source` with `general.name` set to `stem` and `kvs`
 * added or replacing those of the same key, then adds it to the library.
 */
export async function writeNewModel(
  service: OpenAiService,
  source: string,
  stem: string,
  param: string,
  kvs: GgufKv[] = [],
): Promise<void> {
  const path = join(service.ctx.modelsDir, `${stem}.gguf`);
  const { gguf, file } = openGguf(source);
  try {
    const changed = [stringKv('general.name', stem), ...kvs];
    const replaced = new Set(changed.map((kv) => kv.key));
    await writeGguf(
      path,
      {
        version: gguf.version === 2 ? 2 : 3,
        kvs: [...gguf.kvs.filter((kv) => !replaced.has(kv.key)), ...changed],
        tensors: gguf.tensors,
      },
      (i) => tensorChunks(gguf, gguf.tensors[i]!),
      { overwrite: false },
    );
  } catch (err) {
    if (err instanceof FileExistsError)
      throw new OpenAiError(
        409,
        'invalid_request_error',
        'model_exists',
        `${path} exists; Gufo does not replace it`,
        param,
      );
    throw err;
  } finally {
    file.close();
  }
  await libraryOf(service.ctx).addFiles([path], 'exported');
}
