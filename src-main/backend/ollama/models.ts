/**
 * Models as Ollama's API names and describes them. Ollama names are "name:tag": a Gufo id that has
 * a tag (a model found in Ollama's own store, "llama3.2:3b") keeps it, any other gets ":latest", and
 * a request naming "x:latest" or "x" finds the id "x" or "x:latest", as Ollama reads a name without a tag.
 */
import type { ModelEntry } from '../../../src-preload/api';
import { chatTemplateFor } from '../../core/chat-template';
import { OpenAiError } from '../openai/errors';
import type { ServedModel } from '../openai/model-ids';
import type { OpenAiService } from '../openai/service';

const LATEST = ':latest';

/** Ollama's "forever" (a model kept loaded until its engine is needed for another). */
const NEVER_EXPIRES = '0001-01-01T00:00:00Z';

export function ollamaName(id: string): string {
  return id.includes(':') ? id : id + LATEST;
}

/** The model an Ollama request names (404 in Ollama's words when there is none). */
export async function resolveOllamaModel(service: OpenAiService, name: string): Promise<ServedModel> {
  const id = name.toLowerCase();
  const other = id.endsWith(LATEST) ? id.slice(0, -LATEST.length) : id + LATEST;
  for (const candidate of [id, other]) {
    try {
      return await service.resolve(candidate);
    } catch (err) {
      if (!(err instanceof OpenAiError && err.code === 'model_not_found')) throw err;
    }
  }
  throw new OpenAiError(
    404,
    'not_found_error',
    'model_not_found',
    `model "${name}" not found: GET /api/tags lists the models Gufo serves`,
    'model',
  );
}

/** `GET /api/tags`: every model Gufo can run. */
export async function tags(service: OpenAiService): Promise<object> {
  return {
    models: (await service.models()).map(({ id, entry }) => ({
      ...summary(id, entry),
      modified_at: new Date(entry.mtimeMs).toISOString(),
    })),
  };
}

/** `GET /api/ps`: the models loaded in an engine now, with the memory they hold (all of it on the GPU). */
export async function running(service: OpenAiService): Promise<object> {
  const models = await service.models();
  return {
    models: service.engines.loaded().flatMap(({ path, ctx, memory }) => {
      const model = models.find((m) => m.entry.path === path);
      if (!model) return [];
      const bytes = memory.residentWeightBytes + memory.kvBytes + memory.scratchBytes;
      return [
        {
          ...summary(model.id, model.entry),
          size: bytes,
          size_vram: bytes,
          context_length: ctx,
          expires_at: NEVER_EXPIRES,
        },
      ];
    }),
  };
}

/** `POST /api/show`: the model's details, its chat template (Jinja, as in the file) and a few facts from its metadata. */
export async function show(service: OpenAiService, model: ServedModel): Promise<object> {
  const { entry } = model;
  const { template, thinks } = await service.texts.use(entry.path, entry.mtimeMs, async (text) => ({
    template: chatTemplateFor(text.vocab, { architecture: text.architecture }).text,
    thinks: text.thinks,
  }));
  const info: Record<string, unknown> = {
    'general.architecture': entry.architecture,
    'general.parameter_count': entry.parameters,
  };
  if (entry.architecture && entry.contextLength !== null)
    info[`${entry.architecture}.context_length`] = entry.contextLength;
  return {
    license: '',
    modelfile: `# Served by Gufo from its library\nFROM ${entry.path}\n`,
    parameters: '',
    template,
    system: '',
    details: details(entry),
    model_info: info,
    // "thinking": the request's `think` is honoured (clients check before sending it).
    capabilities: thinks ? ['completion', 'thinking'] : ['completion'],
    modified_at: new Date(entry.mtimeMs).toISOString(),
  };
}

function summary(id: string, entry: ModelEntry) {
  const name = ollamaName(id);
  return { name, model: name, size: entry.bytes, digest: entry.sha256 ?? '', details: details(entry) };
}

function details(entry: ModelEntry) {
  return {
    parent_model: '',
    format: 'gguf',
    family: entry.architecture ?? '',
    families: entry.architecture ? [entry.architecture] : null,
    parameter_size: entry.parameters === null ? '' : parameterSize(entry.parameters),
    quantization_level: entry.fileType ?? '',
  };
}

/** As Ollama writes it: "8.0B", "494.0M", "260.1K". */
function parameterSize(n: number): string {
  for (const [unit, scale] of [
    ['B', 1e9],
    ['M', 1e6],
    ['K', 1e3],
  ] as const)
    if (n >= scale) return `${(n / scale).toFixed(1)}${unit}`;
  return String(n);
}
