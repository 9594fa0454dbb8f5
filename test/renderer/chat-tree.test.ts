import { describe, expect, it } from 'vitest';
import type { MessageView } from '../../src-preload/api';
import { activePath, branchPosition, buildTree } from '../../src-renderer/lib/chat-tree';

function message(id: number, parentId: number | null, role: MessageView['role'] = 'user'): MessageView {
  return {
    id,
    chatId: 1,
    parentId,
    role,
    content: `m${id}`,
    status: 'done',
    stats: null,
    error: null,
    createdAt: '2025-01-01T00:00:00Z',
  };
}

/**
 *   1 (user) ─┬─ 2 (assistant) ── 3 (user) ── 4 (assistant)
 *             ├─ 5 (assistant, regenerated)
 *             └─ 7 (assistant, regenerated again)
 *   6 (user, the first message edited) ── 8 (assistant)
 * Given out of order, as a view may list them.
 */
const MESSAGES = [
  message(4, 3, 'assistant'),
  message(1, null),
  message(7, 1, 'assistant'),
  message(2, 1, 'assistant'),
  message(3, 2),
  message(5, 1, 'assistant'),
  message(8, 6, 'assistant'),
  message(6, null),
];
const tree = buildTree(MESSAGES);
const byId = (id: number) => tree.byId.get(id)!;

describe('activePath', () => {
  it('walks from the root down to the active leaf', () => {
    expect(activePath(tree, 4).map((m) => m.id)).toEqual([1, 2, 3, 4]);
    expect(activePath(tree, 5).map((m) => m.id)).toEqual([1, 5]);
    expect(activePath(tree, 8).map((m) => m.id)).toEqual([6, 8]);
  });

  it('is empty for an empty chat or an unknown leaf', () => {
    expect(activePath(tree, null)).toEqual([]);
    expect(activePath(tree, 99)).toEqual([]);
  });

  it('ends at a parent cycle instead of looping forever', () => {
    const cyclic = buildTree([message(1, 2), message(2, 1)]);
    expect(activePath(cyclic, 1).map((m) => m.id)).toEqual([2, 1]);
  });
});

describe('branchPosition', () => {
  it('numbers siblings in the order they were written, with their neighbours', () => {
    expect(branchPosition(tree, byId(2))).toMatchObject({ index: 1, count: 3, previous: null, next: { id: 5 } });
    expect(branchPosition(tree, byId(5))).toMatchObject({ index: 2, count: 3, previous: { id: 2 }, next: { id: 7 } });
    expect(branchPosition(tree, byId(7))).toMatchObject({ index: 3, count: 3, previous: { id: 5 }, next: null });
  });

  it('counts root messages (edits of the first message) as siblings', () => {
    expect(branchPosition(tree, byId(6))).toMatchObject({ index: 2, count: 2, previous: { id: 1 }, next: null });
  });

  it('is 1 of 1 for a message without other versions', () => {
    expect(branchPosition(tree, byId(3))).toEqual({ index: 1, count: 1, previous: null, next: null });
  });
});
