/**
 * What a chat does when its conversation outgrows the context (LM Studio's "context overflow"
 * policy), and how the UI and the CLI say it: the names, the default, and the notices.
 * Pure values and functions.
 */
import { formatInteger } from './format';

/**
 * 'stop': nothing is left out; a conversation that no longer fits is an error, and an answer that
 * fills the context ends there. 'truncate-middle': the system prompt and the first exchange stay,
 * the oldest messages after them are left out. 'rolling-window': the oldest messages after the
 * system prompt are left out. Left out of the prompt, never deleted.
 */
export type ContextOverflow = 'stop' | 'truncate-middle' | 'rolling-window';

export const CONTEXT_OVERFLOWS = [
  'truncate-middle',
  'rolling-window',
  'stop',
] as const satisfies readonly ContextOverflow[];

/** As LM Studio's default. */
export const DEFAULT_CONTEXT_OVERFLOW: ContextOverflow = 'truncate-middle';

export const CONTEXT_OVERFLOW_TEXT: Readonly<Record<ContextOverflow, { label: string; description: string }>> = {
  'truncate-middle': {
    label: 'Truncate the middle',
    description:
      'keep the system prompt and the first exchange, and leave out the oldest messages after them, ' +
      'a whole exchange at a time, until the conversation fits with room for the answer; an answer that fills the context goes on without them',
  },
  'rolling-window': {
    label: 'Rolling window',
    description:
      'keep the system prompt and leave out the oldest messages, a whole exchange at a time, until the conversation fits ' +
      'with room for the answer; an answer that fills the context goes on without them',
  },
  stop: {
    label: 'Stop at the limit',
    description:
      'leave nothing out: an answer that fills the context ends there, and a conversation that no longer fits is refused',
  },
};

/** "When the context is full: truncate the middle (keep the system prompt ...)". */
export function contextOverflowSummary(overflow: ContextOverflow): string {
  const { label, description } = CONTEXT_OVERFLOW_TEXT[overflow];
  return `When the context is full: ${label.toLowerCase()} (${description}).`;
}

/** "3 earliest messages left out to fit the 4,096-token context". */
export function leftOutNotice(messages: number, contextSize: number): string {
  return `${messages} earliest ${messages === 1 ? 'message' : 'messages'} left out to fit the ${formatInteger(contextSize)}-token context`;
}

/** Where the UI sets the policy; the CLI names its option instead. */
export const CONTEXT_OVERFLOW_SETTING = 'Chat settings › When the context is full';

/** What an answer that stopped at the end of the context says, and what to do about it (`setting`: where the policy is chosen). */
export function contextFullNotice(contextSize: number, setting = CONTEXT_OVERFLOW_SETTING): string {
  return (
    `The context is full (${formatInteger(contextSize)} tokens): the answer stops here. ` +
    `Raise the context size, start a new chat, or choose a policy that leaves out earlier messages (${setting}).`
  );
}
