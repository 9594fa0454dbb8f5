/**
 * `POST /api/show`: a model as Ollama describes it. `capabilities` from the same signs Ollama reads
 * (a pooling type makes an embedding model, else it completes; a template that renders `tools`
 * calls tools; a thinking switch or block thinks), told by Gufo's own rules for them, and
 * `model_info` the file's GGUF metadata, its arrays (the tokenizer's) null unless `verbose`.
 */
import { chatTemplateFor } from '../../core/chat-template';
import { arrayItem, ggufValueToJson } from '../../core/gguf/json';
import type { GgufFile } from '../../core/gguf/gguf-file';
import { whyNoGeneration } from '../../core/runnable';
import { openGguf } from '../../node/gguf-io';
import type { ServedModel } from '../openai/model-ids';
import type { OpenAiService } from '../openai/service';
import { modelDefaults, OLLAMA_DEFAULT_KEYS, parametersText, type ModelDefaults } from './model-defaults';
import { details } from './models';

/** Keys Ollama leaves out of model_info: the template is `template`, the name is the model's. */
const NOT_INFO = new Set(['general.name', 'tokenizer.chat_template', ...Object.values(OLLAMA_DEFAULT_KEYS)]);

export async function show(service: OpenAiService, model: ServedModel, verbose: boolean): Promise<object> {
  const { entry } = model;
  const { template, rendersTools, thinks } = await service.texts.use(entry.path, entry.mtimeMs, (text) => ({
    template: chatTemplateFor(text.vocab, { architecture: text.architecture }),
    rendersTools: text.toolCalls.rendersTools,
    thinks: text.thinks,
  }));
  const defaults = modelDefaults(entry);
  const { gguf, file } = openGguf(entry.path);
  try {
    const embedding =
      whyNoGeneration(entry.architecture) !== null || gguf.get(`${entry.architecture}.pooling_type`) !== undefined;
    const capabilities = embedding
      ? ['embedding']
      : ['completion', ...(rendersTools ? ['tools'] : []), ...(thinks ? ['thinking'] : [])];
    return {
      license: gguf.getString('general.license') ?? '',
      modelfile: modelfile(entry.path, defaults),
      parameters: parametersText(defaults.parameters),
      template: template.text,
      system: defaults.system ?? '',
      details: details(entry),
      model_info: { ...modelInfo(gguf, verbose), 'general.parameter_count': entry.parameters },
      capabilities,
      modified_at: new Date(entry.mtimeMs).toISOString(),
    };
  } finally {
    file.close();
  }
}

/** What a Modelfile for the model would say (not its template: Jinja, which Ollama's Modelfiles do not take). */
function modelfile(path: string, defaults: ModelDefaults): string {
  const parameters = parametersText(defaults.parameters);
  return [
    '# Served by Gufo from its library',
    `FROM ${path}`,
    ...(defaults.system === null ? [] : [`SYSTEM """${defaults.system}"""`]),
    ...(parameters === '' ? [] : parameters.split('\n').map((line) => `PARAMETER ${line}`)),
    '',
  ].join('\n');
}

/** The metadata as Ollama lists it: every key but NOT_INFO's; an array as null (its items when verbose). */
function modelInfo(gguf: GgufFile, verbose: boolean): Record<string, unknown> {
  const info: Record<string, unknown> = {};
  for (const { key, type, value } of gguf.kvs) {
    if (NOT_INFO.has(key)) continue;
    info[key] =
      typeof value !== 'object'
        ? ggufValueToJson(value, type)
        : verbose
          ? Array.from({ length: value.items.length }, (_, i) => arrayItem(value, i))
          : null;
  }
  return info;
}
