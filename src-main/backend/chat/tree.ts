/** Walks a chat's message tree: messages link to their parent; siblings are branches. */
import type { MessageView } from '../../../src-preload/api';

/** The messages from the root down to `leafId`, in order (empty for null). */
export function branchPath(messages: readonly MessageView[], leafId: number | null): MessageView[] {
  const byId = new Map(messages.map((m) => [m.id, m]));
  const path: MessageView[] = [];
  for (
    let m = leafId === null ? undefined : byId.get(leafId);
    m;
    m = m.parentId === null ? undefined : byId.get(m.parentId)
  ) {
    path.push(m);
  }
  return path.reverse();
}

/** The leaf reached from `messageId` by following the newest child at each step. */
export function newestLeaf(messages: readonly MessageView[], messageId: number): number {
  const newestChild = new Map<number, number>();
  for (const m of messages) {
    // Ids grow with time, so the largest child id is the newest branch.
    if (m.parentId !== null && m.id > (newestChild.get(m.parentId) ?? -1)) newestChild.set(m.parentId, m.id);
  }
  let id = messageId;
  for (let child = newestChild.get(id); child !== undefined; child = newestChild.get(id)) id = child;
  return id;
}
