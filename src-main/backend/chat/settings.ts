/**
 * A chat's settings: the sampling presets, checks on what the UI sends (each bad value is an error
 * naming its field), and the mapping onto the engine's sampler.
 */
import { randomInt } from 'node:crypto';
import {
  CONTEXT_OVERFLOWS,
  CONTEXT_TOKENS,
  DEFAULT_TOOL_USE,
  KV_CACHE_TYPES,
  MAX_TOOL_ROUNDS,
  isKvCacheType,
  type ChatFunctionTool,
  type ChatKvCacheTypes,
  type KvCacheTypes,
  type ContextOverflow,
  type ChatSettings,
  type ChatSettingsPatch,
  type ChatToolUse,
  type SamplingPresetName,
  type SamplingSettings,
} from '../../../src-preload/api';
import { kvCacheTypeProblem } from '../../core/kv-cache-types';
import { defaultPromptFormat, promptFormatProblem, type PromptFormat } from '../../core/prompt-format';
import { templateTools, toolFunctions, ToolsProblem } from '../../core/tool-calls/index';
import type { SamplingParams } from '../../engine-wire/protocol';
import type { StoredChatSettings } from '../../node/store/chats';

/** Filters stay set in the precise preset so raising its temperature alone gives sane sampling. */
export const SAMPLING_PRESETS: Readonly<Record<SamplingPresetName, Readonly<SamplingSettings>>> = {
  precise: { temperature: 0, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1, seed: null, maxTokens: 1024 },
  balanced: { temperature: 0.7, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1.1, seed: null, maxTokens: 1024 },
  creative: { temperature: 1.0, topK: 100, topP: 0.98, minP: 0.02, repeatPenalty: 1.05, seed: null, maxTokens: 2048 },
};

export const DEFAULT_PRESET: SamplingPresetName = 'balanced';

export function samplingPreset(name: unknown): SamplingSettings {
  if (typeof name !== 'string' || !Object.hasOwn(SAMPLING_PRESETS, name)) {
    throw new Error(
      `unknown sampling preset ${JSON.stringify(name)}; use one of ${Object.keys(SAMPLING_PRESETS).join(', ')}`,
    );
  }
  return { ...SAMPLING_PRESETS[name as SamplingPresetName] };
}

/** Checks one value; answers what is wrong with it, or null. */
type Check = (value: unknown) => string | null;

const number =
  (min: number, max: number, minExclusive = false): Check =>
  (v) =>
    typeof v === 'number' && Number.isFinite(v) && (minExclusive ? v > min : v >= min) && v <= max
      ? null
      : `must be a number from ${min}${minExclusive ? ' (exclusive)' : ''} to ${max}`;

const whole =
  (min: number, max: number, unit = ''): Check =>
  (v) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max
      ? null
      : `must be a whole number${unit} from ${min} to ${max}`;

const SAMPLING_CHECKS: { [K in keyof SamplingSettings]-?: Check } = {
  temperature: number(0, 5),
  topK: whole(0, 1_000_000),
  topP: number(0, 1, true),
  minP: number(0, 1),
  repeatPenalty: number(0, 10, true),
  seed: (v) =>
    v === null || whole(0, 2 ** 32 - 1)(v) === null
      ? null
      : 'must be null (a new random seed for each answer) or a whole number from 0 to 4294967295',
  maxTokens: whole(1, CONTEXT_TOKENS.max, ' of tokens'),
};

function fail(field: string, problem: string, value: unknown): never {
  throw new Error(`chat setting "${field}" ${problem} (got ${JSON.stringify(value) ?? String(value)})`);
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `base` with `patch` applied, after checking every field of the patch. */
export function applySampling(base: SamplingSettings, patch: unknown, field = 'sampling'): SamplingSettings {
  if (!isRecord(patch)) fail(field, 'must be an object', patch);
  const next = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (!Object.hasOwn(SAMPLING_CHECKS, key)) fail(`${field}.${key}`, 'is not a sampling setting', value);
    const problem = SAMPLING_CHECKS[key as keyof SamplingSettings](value);
    if (problem) fail(`${field}.${key}`, problem, value);
    (next as Record<string, unknown>)[key] = value;
  }
  return next;
}

/** What the checks need to know about the chat's model. */
export interface ModelFacts {
  /** Its trained context when known, else the most Gufo allows. */
  maxContext: number;
  /** Whether the file has its own chat template; null when the file cannot be read now. */
  hasChatTemplate: boolean | null;
  /** Its K and V head sizes, which a quantized KV cache's blocks must divide; null when unknown (not checked). */
  headSizes?: { k: number; v: number } | null;
}

/** `base` with `patch` applied (sampling may be partial), after checking every field. */
export function applySettings(base: StoredChatSettings, patch: unknown, model: ModelFacts): StoredChatSettings {
  if (!isRecord(patch)) fail('settings', 'must be an object', patch);
  const { maxContext, hasChatTemplate } = model;
  const next: StoredChatSettings = { ...base, sampling: { ...base.sampling } };
  for (const [key, value] of Object.entries(patch as ChatSettingsPatch)) {
    if (value === undefined) continue;
    if (key === 'systemPrompt') {
      if (typeof value !== 'string') fail(key, 'must be text', value);
      next.systemPrompt = value;
    } else if (key === 'sampling') {
      next.sampling = applySampling(next.sampling, value);
    } else if (key === 'contextSize') {
      const problem = whole(CONTEXT_TOKENS.min, maxContext, ' of tokens')(value);
      if (problem)
        fail(key, maxContext < CONTEXT_TOKENS.max ? `${problem} (the model's trained context)` : problem, value);
      next.contextSize = value as number;
    } else if (key === 'tools') {
      next.tools = checkedTools(value);
    } else if (key === 'toolUse') {
      next.toolUse = applyToolUse(next.toolUse ?? DEFAULT_TOOL_USE, value);
    } else if (key === 'promptFormat') {
      if (hasChatTemplate === null) fail(key, "cannot be checked: the chat's model file cannot be read", value);
      const problem = promptFormatProblem(value, hasChatTemplate);
      if (problem) fail(key, problem, value);
      next.promptFormat = value as PromptFormat;
    } else if (key === 'contextOverflow') {
      if (!(CONTEXT_OVERFLOWS as readonly unknown[]).includes(value))
        fail(key, `must be one of ${CONTEXT_OVERFLOWS.join(', ')}`, value);
      next.contextOverflow = value as ContextOverflow;
    } else if (key === 'kvCacheTypes') {
      next.kvCacheTypes = applyKvCacheTypes(next.kvCacheTypes, value, model.headSizes ?? null);
    } else if (key === 'thinking') {
      if (value !== null && typeof value !== 'boolean')
        fail(key, "must be true, false, or null for the template's default", value);
      next.thinking = value as boolean | null;
    } else {
      fail(key, 'is not a chat setting', value);
    }
  }
  return next;
}

/** `base` with `patch`'s K and V cache types (each a type name, or null for the server's default). */
function applyKvCacheTypes(
  base: ChatKvCacheTypes,
  patch: unknown,
  headSizes: { k: number; v: number } | null,
): ChatKvCacheTypes {
  if (!isRecord(patch)) fail('kvCacheTypes', 'must be an object with k and/or v', patch);
  const next = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (key !== 'k' && key !== 'v') fail(`kvCacheTypes.${key}`, 'is not a KV cache setting (k or v)', value);
    if (value !== null && !isKvCacheType(value))
      fail(`kvCacheTypes.${key}`, `must be one of ${KV_CACHE_TYPES.join(', ')}, or null for the default`, value);
    const problem = value !== null && headSizes && kvCacheTypeProblem(value, headSizes[key]);
    if (problem) fail(`kvCacheTypes.${key}`, `does not fit this model: ${problem}`, value);
    next[key] = value;
  }
  return next;
}

const names = (v: unknown) =>
  Array.isArray(v) && v.every((n) => typeof n === 'string' && n !== '') ? null : 'must be a list of names';

const TOOL_USE_CHECKS: { [K in keyof ChatToolUse]: Check } = {
  mcpServers: names,
  toolChoice: (v) =>
    typeof v === 'string' && v.trim() !== '' ? null : 'must be "auto", "required", or the name of a tool',
  maxRounds: whole(1, MAX_TOOL_ROUNDS),
  allowedTools: names,
};

/** `base` with `patch`'s fields of tool use, each checked. */
function applyToolUse(base: ChatToolUse, patch: unknown): ChatToolUse {
  if (!isRecord(patch)) fail('toolUse', 'must be an object', patch);
  const next = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (!Object.hasOwn(TOOL_USE_CHECKS, key)) fail(`toolUse.${key}`, 'is not a tool use setting', value);
    const problem = TOOL_USE_CHECKS[key as keyof ChatToolUse](value);
    if (problem) fail(`toolUse.${key}`, problem, value);
    (next as Record<string, unknown>)[key] = Array.isArray(value) ? [...new Set(value as string[])] : value;
  }
  return next;
}

/** The KV cache types a chat's model loads with: its own, else the server's default. */
export function chatKvCacheTypes(own: ChatKvCacheTypes, serverDefault: KvCacheTypes): KvCacheTypes {
  return { k: own.k ?? serverDefault.k, v: own.v ?? serverDefault.v };
}

/** A chat's tools as the server takes them (one check, core/tool-calls/functions.ts); none is absent. */
function checkedTools(value: unknown): ChatFunctionTool[] | undefined {
  try {
    const tools = templateTools(toolFunctions(value));
    return tools.length > 0 ? tools : undefined;
  } catch (err) {
    if (err instanceof ToolsProblem) throw new Error(`chat setting "${err.field}": ${err.message}`);
    throw err;
  }
}

/** The settings as the chat uses them: a format never chosen is the model's default. */
export function effectiveSettings(
  stored: StoredChatSettings,
  hasChatTemplate: boolean,
): ChatSettings & { promptFormat: PromptFormat; toolUse: ChatToolUse } {
  return {
    ...stored,
    promptFormat: stored.promptFormat ?? defaultPromptFormat(hasChatTemplate),
    toolUse: stored.toolUse ?? { ...DEFAULT_TOOL_USE },
  };
}

/** The engine's sampler settings for an answer; `seed` is the one chosen for it. */
export function engineSampling(s: SamplingSettings, seed: number): SamplingParams {
  return {
    temperature: s.temperature,
    topK: s.topK,
    topP: s.topP,
    minP: s.minP,
    repeatPenalty: s.repeatPenalty,
    presencePenalty: 0,
    frequencyPenalty: 0,
    penaltyLastN: 64,
    seed,
  };
}

/** The settings' seed, or a fresh random one when it is null. */
export function answerSeed(s: SamplingSettings): number {
  return s.seed ?? randomInt(0, 2 ** 32);
}
