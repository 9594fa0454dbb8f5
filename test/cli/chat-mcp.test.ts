/**
 * `gufo chat --mcp mcp.json`: the app's tool loop in the terminal, against the SDK-written test
 * server (test/support/mcp/server.mjs) on a random Qwen 3 with its real template. The servers'
 * command lines are shown before they start; --tool-choice holds the first answer to a call;
 * the call is asked about on stdin (y/n), run, and its result given back to the model.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/paths';
import { writeRandomQwen3 } from '../support/tool-models';

const SERVER = join(REPO_ROOT, 'test/support/mcp/server.mjs');
let dir = '';
let model = '';
let mcpFile = '';
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gufo-cli-mcp-'));
  model = join(dir, 'qwen3-tools.gguf');
  await writeRandomQwen3(model);
  mcpFile = join(dir, 'mcp.json');
  writeFileSync(mcpFile, JSON.stringify({ mcpServers: { local: { command: process.execPath, args: [SERVER] } } }));
}, 120_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs `gufo chat` with `input` on stdin (not a terminal). */
function chat(args: string[], input: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/gufo.mjs'), 'chat', ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe('gufo chat --mcp', { timeout: 240_000 }, () => {
  it('shows the server, asks about the call the tool choice forces, runs it, and the model answers the result', async () => {
    // Room for the call (the whitespace a random model writes between JSON tokens), and little after it:
    // the answer to the result ends where the context does.
    const r = await chat(
      [
        model,
        '--mcp',
        mcpFile,
        '--tool-choice',
        'forecast',
        '--temp',
        '0',
        '-n',
        '200',
        '--ctx',
        '700',
        '--context-overflow',
        'stop',
      ],
      'Tomorrow?\ny\n',
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`MCP server local: ${process.execPath} ${SERVER}`);
    expect(r.stderr).toContain('MCP server local: 7 tools');
    expect(r.stderr).toMatch(/\[call local\/forecast \{"unit":"(celsius|fahrenheit)"\}\]/);
    expect(r.stderr).toContain('Run forecast from local? [y/N] ');
    expect(r.stderr).toMatch(/\[result\] tomorrow: 21 degrees (celsius|fahrenheit)/);
    // Two answers: the call, then the answer to its result.
    expect(r.stderr.match(/\[\d+ tokens, [\d.]+ tok\/s\]/g)).toHaveLength(2);
    expect(r.stdout).toMatch(/^<tool_call>/);
  });

  it('refuses a tool choice with no tools, and an mcp.json with a mistake, naming it', async () => {
    const none = await chat([model, '--tool-choice', 'required'], '');
    expect(none.status).toBe(1);
    expect(none.stderr).toContain(
      '--tool-choice: the tool choice "required" asks for a call, but the chat gives the model no tools',
    );
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"mcpServers": {"x": {"command": 3}}}');
    const wrong = await chat([model, '--mcp', bad], '');
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain(`--mcp ${bad}: mcpServers.x.command must be a program`);
  });
});
