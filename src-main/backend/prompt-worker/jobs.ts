/**
 * The prompt work that may run off the event loop: a prompt's ids, or a chat's plan. The same
 * functions run inline for small inputs and in a worker thread (entry.ts) for large ones.
 */
import type { ChatTool } from '../../core/chat-template';
import type { PromptFormat } from '../../core/prompt-format';
import {
  planPrompt,
  promptTokens,
  type ModelText,
  type PromptLimits,
  type PromptPlan,
  type PromptSource,
  type PromptTokens,
  type PromptTurn,
} from '../chat/prompt';

export type PromptJob =
  | { kind: 'tokens'; source: PromptSource; room: number }
  | {
      kind: 'plan';
      systemPrompt: string;
      branch: readonly PromptTurn[];
      limits: PromptLimits;
      format: PromptFormat;
      tools?: readonly ChatTool[];
      /** The answer so far, which the prompt ends with (planPrompt). */
      answer?: readonly number[];
      /** The chat's thinking setting (enable_thinking; null: the template's default). */
      thinking?: boolean | null;
    };

export type PromptJobResult<J extends PromptJob> = J extends { kind: 'tokens' } ? PromptTokens : PromptPlan;

/** A job for the model file at `path`, as sent to a worker. */
export interface PromptJobRequest {
  id: number;
  path: string;
  job: PromptJob;
}

/** An error as it crosses the thread: its class name (to be rebuilt as that class) and message. */
export interface SentError {
  name: string;
  message: string;
}

export type PromptJobReply = { id: number; result: PromptTokens | PromptPlan } | { id: number; error: SentError };

export function runPromptJob<J extends PromptJob>(text: ModelText, job: J): PromptJobResult<J>;
export function runPromptJob(text: ModelText, job: PromptJob): PromptTokens | PromptPlan {
  return job.kind === 'tokens'
    ? promptTokens(text, job.source, job.room)
    : planPrompt(text, job.systemPrompt, job.branch, job.limits, job.format, job.tools, job.answer, job.thinking);
}

/** How much text the job reads (UTF-16 units): what decides whether it leaves the event loop. */
export function jobChars(job: PromptJob): number {
  if (job.kind === 'plan') return job.branch.reduce((n, turn) => n + turn.content.length, job.systemPrompt.length);
  const { source } = job;
  return source.kind === 'text'
    ? source.text.length
    : source.messages.reduce(
        (n, m) => n + (typeof m.content === 'string' ? m.content.length : JSON.stringify(m).length),
        0,
      );
}
