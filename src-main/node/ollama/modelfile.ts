/**
 * What Ollama needs besides the weights: the chat template when Ollama would not recognize the
 * file's own, the stop strings of the model's end-of-turn tokens, the context size and the system
 * prompt, written as a Modelfile (for `ollama create -f`) and as the fields of /api/create.
 */
import { ollamaDefaultContext } from '../../../src-preload/api/ollama';
import { chatTemplateFor, stopTokenIds } from '../../core/chat-template';
import type { GgufFile } from '../../core/gguf/gguf-file';
import { readVocab } from '../../core/tokenizer/vocab';
import { OLLAMA_DETECTS, ollamaTemplateFor } from './templates';

/** `[host/][namespace/]model[:tag]`, as Ollama accepts model names. */
const OLLAMA_NAME =
  /^(?:[A-Za-z0-9][A-Za-z0-9._-]*\/){0,2}[A-Za-z0-9][A-Za-z0-9._-]*(?::[A-Za-z0-9_][A-Za-z0-9._-]{0,79})?$/;

export function checkOllamaName(name: string): string {
  if (typeof name !== 'string' || !OLLAMA_NAME.test(name)) {
    throw new Error(
      `"${name}" is not an Ollama model name: use [namespace/]name[:tag] with letters, digits, ".", "_" and "-"`,
    );
  }
  return name;
}

/** The file name part for a model name ("user/llama:q4" → "user-llama-q4"). */
export function ollamaFileStem(name: string): string {
  return name.replace(/[/:]/g, '-');
}

export interface OllamaModelSettings {
  /** Go template for the TEMPLATE line; null when Ollama reads the file's own (or none can be written). */
  template: string | null;
  /** The prompt family Gufo found ("llama3"), "custom" for a template it does not know. */
  family: string;
  stop: string[];
  numCtx: number;
  system: string | null;
  /** What the user should know (a template Ollama will not recognize). */
  notes: string[];
}

export interface SettingsOptions {
  system?: string;
  contextSize?: number;
}

export function ollamaSettings(gguf: GgufFile, options: SettingsOptions = {}): OllamaModelSettings {
  const architecture = gguf.getString('general.architecture') ?? null;
  const trained = architecture === null ? undefined : gguf.getNumber(`${architecture}.context_length`);
  const numCtx = options.contextSize ?? ollamaDefaultContext(trained ?? null);
  if (!Number.isSafeInteger(numCtx) || numCtx < 1)
    throw new Error(`the context size must be a positive whole number, not ${numCtx}`);
  const system = options.system?.trim() ? options.system : null;
  if (system?.includes('"""'))
    throw new Error('the system prompt cannot contain """ (the Modelfile quotes it with them)');
  const notes: string[] = [];
  let vocab;
  try {
    vocab = readVocab(gguf);
  } catch (err) {
    notes.push(`No chat template or stop tokens: ${err instanceof Error ? err.message : String(err)}`);
    return { template: null, family: 'custom', stop: [], numCtx, system, notes };
  }
  const chosen = chatTemplateFor(vocab, { architecture });
  const stop = [...new Set(stopTokenIds(vocab).map((id) => vocab.tokens.at(id)))].filter((text) => text !== '');
  if (chosen.source === 'file' && OLLAMA_DETECTS.has(chosen.name))
    return { template: null, family: chosen.name, stop, numCtx, system, notes };
  const template = ollamaTemplateFor(chosen.name);
  if (template === null) {
    notes.push(
      `Ollama may not recognize this model's chat template (Gufo does not know its family either): add a TEMPLATE to the Modelfile by hand if its answers look wrong.`,
    );
  } else if (chosen.source === 'builtin') {
    notes.push(
      `The file has no chat template: the Modelfile gives Ollama the ${chosen.name} template, as Gufo's chat uses for it.`,
    );
  }
  return { template, family: chosen.name, stop, numCtx, system, notes };
}

/** A Modelfile beside the GGUF file it names (FROM ./<fileName>). */
export function renderModelfile(fileName: string, settings: OllamaModelSettings, comment: string): string {
  const lines = [`# ${comment}`, `FROM ./${fileName}`];
  if (settings.template !== null) lines.push(`TEMPLATE """${settings.template}"""`);
  if (settings.system !== null) lines.push(`SYSTEM """${settings.system}"""`);
  lines.push(`PARAMETER num_ctx ${settings.numCtx}`);
  for (const stop of settings.stop) lines.push(`PARAMETER stop ${JSON.stringify(stop)}`);
  return `${lines.join('\n')}\n`;
}

/** The fields of POST /api/create that carry the same settings. */
export function createFields(settings: OllamaModelSettings): {
  template?: string;
  system?: string;
  parameters: Record<string, unknown>;
} {
  return {
    ...(settings.template === null ? {} : { template: settings.template }),
    ...(settings.system === null ? {} : { system: settings.system }),
    parameters: { num_ctx: settings.numCtx, ...(settings.stop.length > 0 ? { stop: settings.stop } : {}) },
  };
}
