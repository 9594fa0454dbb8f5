/**
 * Keeping an open chat up to date from the back end's events. Answers stream as 'chat-delta'
 * events while full views (getChat, selectBranch, …) arrive on another channel, so a view can be
 * older or newer than the deltas already applied: these rules make both orders come out right.
 */
import type { ChatView, GufoEvent, MessageView } from '../../src-preload/api';

/** What an event did to the view. 'finished': a message stopped streaming (fetch the context usage again). */
export type EventEffect = 'none' | 'changed' | 'finished';

/** Applies one event to `view` in place (it is a reactive proxy in the UI). */
export function applyChatEvent(view: ChatView, event: GufoEvent): EventEffect {
  if (event.type === 'chat-delta') {
    if (event.chatId !== view.chat.id) return 'none';
    const message = view.messages.find((m) => m.id === event.messageId);
    // A delta for a message already finished was folded into the content that finished it.
    if (!message || message.status !== 'streaming') return 'none';
    message.content += event.text;
    return 'changed';
  }
  if (event.type === 'chat-message') {
    const incoming = event.message;
    if (incoming.chatId !== view.chat.id) return 'none';
    const index = view.messages.findIndex((m) => m.id === incoming.id);
    if (index === -1) {
      view.messages.push({ ...incoming });
      // A message written under the leaf on show continues that branch (the user's own send).
      if (incoming.parentId === view.activeLeafId) view.activeLeafId = incoming.id;
    } else {
      view.messages[index] = merged(view.messages[index]!, incoming);
    }
    return incoming.status === 'streaming' ? 'changed' : 'finished';
  }
  if (event.type === 'chat-tool-call') {
    if (event.chatId !== view.chat.id) return 'none';
    view.toolCall = event.toolCall;
    return 'changed';
  }
  return 'none';
}

/**
 * A freshly fetched view, reconciled with the one on show: its chat, settings, branch and usage
 * win; a message still streaming on both sides keeps the content the deltas built, since the
 * deltas not yet seen will be appended to it, and one finished on either side stays finished.
 */
export function mergeFetchedView(local: ChatView | null, fetched: ChatView): ChatView {
  if (!local || local.chat.id !== fetched.chat.id) return fetched;
  const fetchedIds = new Set(fetched.messages.map((m) => m.id));
  const localById = new Map(local.messages.map((m) => [m.id, m]));
  const messages = fetched.messages.map((m) => {
    const mine = localById.get(m.id);
    return mine ? merged(mine, m) : m;
  });
  // Messages created after the view was read are known only here.
  for (const m of local.messages) if (!fetchedIds.has(m.id)) messages.push(m);
  // So is a leaf the fetched view does not know: the branch on show grew since.
  const leafIsNewer = local.activeLeafId !== null && !fetchedIds.has(local.activeLeafId);
  return { ...fetched, messages, activeLeafId: leafIsNewer ? local.activeLeafId : fetched.activeLeafId };
}

export function isStreaming(view: ChatView | null): boolean {
  return view?.messages.some((m) => m.status === 'streaming') ?? false;
}

function merged(mine: MessageView, incoming: MessageView): MessageView {
  if (incoming.status !== 'streaming') return { ...incoming };
  // A message never streams again once finished: a streaming copy is older than ours.
  if (mine.status !== 'streaming') return mine;
  return { ...incoming, content: mine.content };
}
