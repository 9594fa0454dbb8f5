/**
 * `DELETE /api/delete` and `POST /api/copy` on the app's library. Delete does what the library's
 * Remove does: a model whose files are all in Gufo's models folder (pulled, copied, created,
 * downloaded, exported) is deleted from disk; any other (your folders, other apps' stores) is
 * removed from the library and its file left where it is. Copy writes a new file (new-model.ts).
 */
import { realpathSync } from 'node:fs';
import { sep } from 'node:path';
import { invalidParam } from '../openai/errors';
import type { OpenAiService } from '../openai/service';
import { resolveOllamaModel } from './models';
import { checkNameFree, newModelStem, writeNewModel } from './new-model';

export async function deleteModel(service: OpenAiService, name: string): Promise<void> {
  const model = await resolveOllamaModel(service, name);
  const own = realpathSync(service.ctx.modelsDir) + sep;
  const deleteFile = model.entry.locations.every((l) => l.path.startsWith(own));
  // After the requests queued for it, and out of its engine, so nothing reads a deleted file.
  await service.queues.run(model.id, () => service.engines.unload(model.entry.path));
  await service.library.removeModel(model.entry.id, { deleteFile });
}

export async function copyModel(service: OpenAiService, source: string, destination: string): Promise<void> {
  const stem = newModelStem(destination, 'destination');
  const model = await resolveOllamaModel(service, source);
  if (model.entry.parts > 1)
    throw invalidParam(
      'source',
      `"${source}" is a split GGUF set (${model.entry.parts} files); Gufo copies single files`,
    );
  await checkNameFree(service, stem, 'destination');
  await writeNewModel(service, model.entry.path, stem, 'destination');
}
