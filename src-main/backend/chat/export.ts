/** A chat as a file: Markdown (the branch on show, for reading) or JSON (the whole tree, for keeping). */
import type { ChatExport, ChatView, MessageStatus, MessageView } from '../../../src-preload/api';
import { branchPath } from './tree';

export type ChatExportFormat = 'markdown' | 'json';

const ROLE_HEADINGS: Record<MessageView['role'], string> = {
  system: 'System',
  user: 'User',
  assistant: 'Assistant',
  tool: 'Tool result',
};

/** What an unfinished answer's export says about it. */
const STATUS_NOTES: Partial<Record<MessageStatus, string>> = {
  streaming: 'still being written when exported',
  stopped: 'stopped before the end',
  interrupted: 'interrupted: Gufo stopped while writing it',
};

export function exportChat(view: ChatView, format: ChatExportFormat, exportedAt = new Date()): ChatExport {
  const base = `chat-${view.chat.id}-${slug(view.chat.title)}`;
  if (format === 'markdown')
    return { fileName: `${base}.md`, mimeType: 'text/markdown', content: markdown(view, exportedAt) };
  if (format === 'json')
    return { fileName: `${base}.json`, mimeType: 'application/json', content: json(view, exportedAt) };
  throw new Error(`unknown export format ${JSON.stringify(format)}; use markdown or json`);
}

function markdown(view: ChatView, exportedAt: Date): string {
  const { chat, settings } = view;
  const parts = [
    `# ${chat.title}`,
    `- Model: ${chat.modelName}\n- Created: ${chat.createdAt}\n- Exported: ${exportedAt.toISOString()}`,
  ];
  if (settings.systemPrompt !== '') parts.push(`## System prompt\n\n${settings.systemPrompt}`);
  for (const m of branchPath(view.messages, view.activeLeafId)) {
    const notes = [STATUS_NOTES[m.status], m.error && `error: ${m.error}`].filter(Boolean);
    parts.push(`## ${ROLE_HEADINGS[m.role]}\n\n${m.content}${notes.length > 0 ? `\n\n_(${notes.join('; ')})_` : ''}`);
  }
  return parts.join('\n\n') + '\n';
}

function json(view: ChatView, exportedAt: Date): string {
  const { chat, settings, messages, activeLeafId } = view;
  return (
    JSON.stringify(
      { format: 'gufo-chat', version: 1, exportedAt: exportedAt.toISOString(), chat, settings, activeLeafId, messages },
      null,
      2,
    ) + '\n'
  );
}

/** A file-name-safe form of a title ("Once upon a time!" → "once-upon-a-time"). */
function slug(title: string): string {
  const s = title
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return s === '' ? 'untitled' : s;
}
