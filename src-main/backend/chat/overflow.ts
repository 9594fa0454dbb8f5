/**
 * Which messages of a conversation a prompt keeps under a chat's context overflow policy
 * (src-preload/api/context-overflow.ts): the choices, from leaving nothing out to the most a policy
 * leaves out. Pure: prompt.ts renders them and keeps the first that fits.
 */
import type { ContextOverflow, MessageRole } from '../../../src-preload/api';

/** A prompt's messages: the branch's first `head` and those from `start` on; `start - head` are left out. */
export interface KeptMessages {
  head: number;
  start: number;
}

/**
 * The ways `overflow` may shorten a branch with these roles (oldest first), least left out first;
 * each leaves out at least the messages of the one before, so the prompts never grow along the
 * list. A kept part after a gap starts at a user message, so templates that want turns to
 * alternate still get them. 'stop' leaves nothing out. 'truncate-middle' keeps the first exchange
 * (the first user message and its answer) while the newest exchange fits beside it, then keeps
 * the newest exchange alone, as 'rolling-window' does last. Messages before the first user message
 * (a greeting) count as part of the first exchange.
 */
export function keptMessages(roles: readonly MessageRole[], overflow: ContextOverflow): KeptMessages[] {
  const whole = { head: 0, start: 0 };
  const users = roles.flatMap((role, i) => (role === 'user' ? [i] : []));
  const starts = users.filter((i) => i > 0);
  // Nothing to leave out, or no user message to start a kept part at: the branch is kept whole or not at all.
  if (overflow === 'stop' || starts.length === 0) return [whole];
  const window = [whole, ...starts.map((start) => ({ head: 0, start }))];
  if (overflow === 'rolling-window' || users.length < 3) return window;
  // The first exchange: everything before the second user message.
  const firstExchangeEnd = users[1]!;
  return [whole, ...users.slice(2).map((start) => ({ head: firstExchangeEnd, start })), window.at(-1)!];
}

/** How many messages `kept` leaves out. */
export function leftOutCount(kept: KeptMessages): number {
  return kept.start - kept.head;
}
