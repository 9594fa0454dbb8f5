/**
 * A model's own system prompt and parameters, as /api/create stores them in its file (Gufo has no
 * per-model settings): Ollama's chat and generate apply them as Ollama applies a Modelfile's
 * SYSTEM and PARAMETER, the request's options over the model's, its system message over the model's.
 */
import type { ModelEntry } from '../../../src-preload/api';
import { openGguf } from '../../node/gguf-io';
import { isRecord } from '../chat/settings';
import type { OpenAiService } from '../openai/service';
import { resolveOllamaModel } from './models';

export const OLLAMA_DEFAULT_KEYS = { system: 'gufo.ollama.system', parameters: 'gufo.ollama.parameters' } as const;

export interface ModelDefaults {
  system: string | null;
  parameters: Record<string, unknown>;
}

const NONE: ModelDefaults = { system: null, parameters: {} };
/** Read once per file and mtime: a request should not parse the header again. */
const read = new Map<string, { mtimeMs: number; defaults: ModelDefaults }>();

export function modelDefaults(entry: ModelEntry): ModelDefaults {
  const known = read.get(entry.path);
  if (known?.mtimeMs === entry.mtimeMs) return known.defaults;
  const { gguf, file } = openGguf(entry.path);
  let defaults = NONE;
  try {
    const system = gguf.getString(OLLAMA_DEFAULT_KEYS.system) ?? null;
    const json = gguf.getString(OLLAMA_DEFAULT_KEYS.parameters);
    const parameters: unknown = json === undefined ? {} : JSON.parse(json);
    if (system !== null || (isRecord(parameters) && Object.keys(parameters).length > 0))
      defaults = { system, parameters: isRecord(parameters) ? parameters : {} };
  } finally {
    file.close();
  }
  read.set(entry.path, { mtimeMs: entry.mtimeMs, defaults });
  return defaults;
}

/** An Ollama chat or generate body with its model's defaults under what it gives (a body in error as it is, for the parser to name). */
export async function withModelDefaults(
  service: OpenAiService,
  body: unknown,
  kind: 'chat' | 'generate',
): Promise<unknown> {
  if (!isRecord(body) || typeof body.model !== 'string') return body;
  const defaults = modelDefaults((await resolveOllamaModel(service, body.model)).entry);
  if (defaults === NONE || (body.options !== undefined && body.options !== null && !isRecord(body.options)))
    return body;
  const options = isRecord(body.options) ? body.options : {};
  const withOptions = { ...body, options: { ...defaults.parameters, ...options } };
  if (defaults.system === null) return withOptions;
  if (kind === 'generate')
    return { ...withOptions, system: typeof body.system === 'string' ? body.system : defaults.system };
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : [];
  if (messages.length === 0 || messages.some((m) => isRecord(m) && m.role === 'system')) return withOptions;
  return { ...withOptions, messages: [{ role: 'system', content: defaults.system }, ...messages] };
}

/** The parameters as Ollama's /api/show writes them: a line per value, "name value". */
export function parametersText(parameters: Record<string, unknown>): string {
  return Object.entries(parameters)
    .flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((v) => `${name} ${JSON.stringify(v)}`))
    .join('\n');
}
