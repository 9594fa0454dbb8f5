/**
 * A chat's messages form a tree (edits and regenerations are siblings under one parent); the UI
 * shows one path through it, from the root to the active leaf.
 */
import type { MessageView } from '../../src-preload/api';

export interface MessageTree {
  byId: Map<number, MessageView>;
  /** Children of each message in the order they were written; `null` holds the roots. */
  children: Map<number | null, MessageView[]>;
}

export function buildTree(messages: readonly MessageView[]): MessageTree {
  const byId = new Map<number, MessageView>();
  const children = new Map<number | null, MessageView[]>();
  for (const message of messages) {
    byId.set(message.id, message);
    const siblings = children.get(message.parentId);
    if (siblings) siblings.push(message);
    else children.set(message.parentId, [message]);
  }
  for (const siblings of children.values()) siblings.sort((a, b) => a.id - b.id);
  return { byId, children };
}

/** The messages from the root down to `leafId`; empty when there is no leaf. */
export function activePath(tree: MessageTree, leafId: number | null): MessageView[] {
  const path: MessageView[] = [];
  const seen = new Set<number>();
  let message = leafId === null ? undefined : tree.byId.get(leafId);
  // `seen` guards against a parent cycle in a damaged chat, which would otherwise never end.
  while (message && !seen.has(message.id)) {
    seen.add(message.id);
    path.push(message);
    message = message.parentId === null ? undefined : tree.byId.get(message.parentId);
  }
  return path.reverse();
}

/** Where a message sits among its siblings (its other versions), for "‹ 2 / 3 ›". */
export interface BranchPosition {
  /** 1-based. */
  index: number;
  count: number;
  previous: MessageView | null;
  next: MessageView | null;
}

export function branchPosition(tree: MessageTree, message: MessageView): BranchPosition {
  const siblings = tree.children.get(message.parentId) ?? [message];
  const at = siblings.findIndex((m) => m.id === message.id);
  return {
    index: at + 1,
    count: siblings.length,
    previous: siblings[at - 1] ?? null,
    next: siblings[at + 1] ?? null,
  };
}
