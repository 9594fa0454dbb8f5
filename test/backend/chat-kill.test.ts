/**
 * A kill in the middle of an answer loses nothing that was streamed: a child process writes an
 * answer and prints every delta; it is SIGKILLed; a new back end over its data dir finds the answer
 * 'interrupted' with every printed delta in it.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect, it } from 'vitest';
import { testBackend } from '../support/backend';
import { REPO_ROOT } from '../support/paths';
import { tempDir } from '../support/temp';

const CHILD = join(REPO_ROOT, 'test/backend/fixtures/chat-kill-child.ts');

it('keeps every streamed token of an answer when the app is killed mid-answer', { timeout: 180_000 }, async () => {
  const dataDir = join(tempDir(), 'home');
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));

  let started: { chatId: number; userMessageId: number; assistantMessageId: number } | undefined;
  const printed: string[] = [];
  for await (const line of createInterface({ input: child.stdout })) {
    const event = JSON.parse(line) as { delta?: string } & Partial<NonNullable<typeof started>>;
    if (event.delta === undefined) started = event as NonNullable<typeof started>;
    else printed.push(event.delta);
    if (printed.length === 5) {
      child.kill('SIGKILL');
      break;
    }
  }
  expect(await exited, stderr).toBe('SIGKILL');
  expect(started, stderr).toBeDefined();
  expect(printed).toHaveLength(5);

  const backend = testBackend({ dataDir });
  const chat = await backend.api.getChat(started!.chatId);
  const answer = chat.messages.find((m) => m.id === started!.assistantMessageId)!;
  expect(answer.status).toBe('interrupted');
  // Every printed delta was committed before it was printed; a token or two more may have been.
  expect(answer.content.startsWith(printed.join(''))).toBe(true);
  expect(chat.messages.find((m) => m.id === started!.userMessageId)).toMatchObject({
    content: 'Once upon a time',
    status: 'done',
  });
  expect(chat.activeLeafId).toBe(answer.id);
});
