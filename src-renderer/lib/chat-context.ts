/** What an answer says about the context it was written in: messages left out, a context that filled. */
import { contextFullNotice, leftOutNotice, type GenerationStats } from '../../src-preload/api';

/** The notices under an answer, from its stored stats (so they survive a reload); `contextSize`: the chat's, for answers that did not record theirs. */
export function contextNotices(stats: GenerationStats, contextSize: number): string[] {
  const size = stats.contextSize ?? contextSize;
  return [
    ...(stats.leftOutMessages ? [`${leftOutNotice(stats.leftOutMessages, size)}.`] : []),
    ...(stats.stopReason === 'context' ? [contextFullNotice(size)] : []),
  ];
}
