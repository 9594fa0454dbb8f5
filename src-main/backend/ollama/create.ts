/**
 * `POST /api/create`: a new model in the library from a model of it, or from a GGUF file on this
 * machine (`from`, or a Modelfile's FROM), with its own chat template, system prompt and
 * parameters. Gufo has no per-model settings, so they go into the new file's metadata: the
 * template as `tokenizer.chat_template` (the one every chat with the model renders), the system
 * prompt and parameters under OLLAMA_DEFAULT_KEYS, which Ollama's chat and generate apply
 * (model-defaults.ts). Every check is made before anything is written.
 */
import { isAbsolute } from 'node:path';
import { ChatTemplateError, checkChatTemplate } from '../../core/chat-template';
import { openGguf } from '../../node/gguf-io';
import { reasonOf } from '../../node/library/find-gguf-files';
import { isRecord } from '../chat/settings';
import { invalidParam, OpenAiError } from '../openai/errors';
import { RequestFields } from '../openai/request-fields';
import type { OpenAiService } from '../openai/service';
import { OLLAMA_DEFAULT_KEYS } from './model-defaults';
import { resolveOllamaModel } from './models';
import { parseModelfile } from './modelfile-parse';
import type { StatusLine } from './ndjson';
import { checkNameFree, newModelStem, stringKv, writeNewModel } from './new-model';
import { parseOllamaChat } from './requests';

export interface CreatePlan {
  stem: string;
  /** The GGUF file the new model's tensors come from. */
  source: string;
  template: string | null;
  system: string | null;
  license: string | null;
  parameters: Record<string, unknown>;
}

/** Reads and checks a create request; throws a 4xx naming the field at fault. */
export async function planCreate(service: OpenAiService, f: RequestFields): Promise<CreatePlan> {
  const name = f.has('model') ? f.string('model') : f.string('name');
  for (const [field, why] of [
    ['files', 'Gufo takes no uploaded blobs (/api/blobs): name a library model or a GGUF path in "from"'],
    ['adapters', 'Gufo has no LoRA adapters'],
    ['quantize', 'quantize with Export or `gufo quantize`, then create from the file'],
    ['messages', 'Gufo keeps no messages with a model'],
  ] as const)
    f.unsupported(field, (v) => v === null || (isRecord(v) && Object.keys(v).length === 0), `"${field}": ${why}`);
  const modelfile = f.has('modelfile') ? parseModelfile(f.string('modelfile')) : null;
  const text = (field: string) => (f.has(field) ? f.string(field) : null);
  const from = text('from') ?? modelfile?.from ?? null;
  if (from === null) throw invalidParam('from', '"from" is required: a model of the library, or a GGUF file\'s path');
  const parameters = f.has('parameters') ? f.body.parameters : (modelfile?.parameters ?? {});
  if (!isRecord(parameters)) throw invalidParam('parameters', '"parameters" must be an object');
  try {
    // Checked as a chat's options are, so a value that would fail every chat fails here.
    parseOllamaChat({ model: name, options: parameters });
  } catch (err) {
    throw err instanceof OpenAiError ? invalidParam('parameters', `parameters: ${err.message}`) : err;
  }
  const template = text('template') ?? modelfile?.template ?? null;
  if (template !== null) checkTemplate(template);
  const license = f.has('license') ? licenseText(f.body.license) : (modelfile?.license ?? null);

  const stem = newModelStem(name, 'model');
  const source = await sourceOf(service, from);
  await checkNameFree(service, stem, 'model');
  return { stem, source, template, system: text('system') ?? modelfile?.system ?? null, license, parameters };
}

export async function create(service: OpenAiService, plan: CreatePlan, report: (line: StatusLine) => void) {
  report({ status: `writing ${plan.stem}.gguf` });
  await writeNewModel(service, plan.source, plan.stem, 'model', [
    ...(plan.template === null ? [] : [stringKv('tokenizer.chat_template', plan.template)]),
    ...(plan.system === null ? [] : [stringKv(OLLAMA_DEFAULT_KEYS.system, plan.system)]),
    ...(Object.keys(plan.parameters).length === 0
      ? []
      : [stringKv(OLLAMA_DEFAULT_KEYS.parameters, JSON.stringify(plan.parameters))]),
    ...(plan.license === null ? [] : [stringKv('general.license', plan.license)]),
  ]);
}

/** A library model's file, or an absolute path to a GGUF file (a whole model, not a split part). */
async function sourceOf(service: OpenAiService, from: string): Promise<string> {
  try {
    const model = await resolveOllamaModel(service, from);
    if (model.entry.parts > 1)
      throw invalidParam(
        'from',
        `"${from}" is a split GGUF set (${model.entry.parts} files); Gufo copies single files`,
      );
    return model.entry.path;
  } catch (err) {
    if (!(err instanceof OpenAiError && err.code === 'model_not_found')) throw err;
  }
  if (!isAbsolute(from))
    throw invalidParam(
      'from',
      `"${from}" is neither a model of the library (GET /api/tags lists them) nor the absolute path of a GGUF file`,
    );
  let opened;
  try {
    opened = openGguf(from);
  } catch (err) {
    throw invalidParam('from', `${from}: not a GGUF file Gufo can read (${reasonOf(err)})`);
  }
  try {
    if (Number(opened.gguf.get('split.count') ?? 1) > 1)
      throw invalidParam('from', `${from} is a part of a split GGUF set; Gufo copies single files`);
  } finally {
    opened.file.close();
  }
  return from;
}

/** Gufo renders Jinja chat templates, as GGUF files carry them; Ollama's Go templates are refused. */
function checkTemplate(template: string): void {
  if (/\{\{-?\s*(\.[A-Z]|(if|range|with)\s+\.|end\s*-?\}\})/.test(template))
    throw invalidParam(
      'template',
      "the template is in Ollama's Go template language, which Gufo does not run: give a Jinja chat template, as GGUF files carry it (tokenizer.chat_template)",
    );
  try {
    checkChatTemplate(template, 'the template');
  } catch (err) {
    if (err instanceof ChatTemplateError) throw invalidParam('template', err.message);
    throw err;
  }
}

function licenseText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join('\n');
  throw invalidParam('license', '"license" must be text or a list of texts');
}
