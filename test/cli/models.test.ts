import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isolatedEnv } from '../support/backend';
import { writeFileAt, writeOllamaStore } from '../support/app-stores';
import { gufo, gufoAsync } from '../support/cli';
import { sha256Of, startFileServer } from '../support/http-file-server';
import { startOllamaStandIn } from '../support/ollama-stand-in';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

const STORIES = readFileSync(STORIES_260K);
const variant = (tag: string) => Buffer.concat([STORIES, Buffer.from(tag)]);

/** A `gufo` environment: its own data dir and home, and `modelDirs` as GUFO_MODELS_DIRS. */
function cliEnv(home: string, modelDirs: string[] = []): NodeJS.ProcessEnv {
  return { ...isolatedEnv(home), GUFO_HOME: join(home, 'gufo-data'), GUFO_MODELS_DIRS: modelDirs.join(':') };
}

describe('gufo models', () => {
  it('--json lists one entry per model, with its locations, from folders and Ollama', () => {
    const home = tempDir();
    const folder = tempDir();
    const shared = variant('shared');
    const [blob] = writeOllamaStore(join(home, '.ollama', 'models'), [
      { name: ['registry.ollama.ai', 'library', 'tiny', 'latest'], gguf: shared },
    ]);
    const copy = writeFileAt(folder, 'copy-of-tiny.gguf', shared);
    const own = writeFileAt(folder, 'sub/own.gguf', variant('own'));

    const r = gufo(['models', '--json', '--hash'], cliEnv(home, [folder]));
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const models = JSON.parse(r.stdout) as Record<string, unknown>[];
    expect(models.map((m) => [m.name, m.source, m.path])).toEqual([
      ['own', 'folder', own],
      ['tiny:latest', 'ollama', blob],
    ]);
    expect(models[1]).toMatchObject({
      generalName: 'llama',
      bytes: shared.length,
      architecture: 'llama',
      fileType: null,
      guessedFileType: 'F32',
      parts: 1,
      sha256: sha256Of(shared),
      error: null,
      runnable: true,
      notRunnable: null,
      locations: [
        { path: blob, source: 'ollama', label: 'tiny:latest' },
        { path: copy, source: 'folder', label: null },
      ],
    });

    const table = gufo(['models'], cliEnv(home, [folder]));
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(/^name +general\.name +source +arch +type +size +path$/m);
    // The path column's rule is as wide as its heading, not as the longest path.
    expect(table.stdout).toMatch(/^-+ +-+ +-+ +-+ +-+ +-+ +----$/m);
    expect(table.stdout).toContain(
      `tiny:latest  llama         ollama  llama  F32 (guessed)  1.13 MiB  ${blob} (+1 copy)`,
    );
  });

  it('says which models Gufo cannot run and why, in --json and in the table', () => {
    const home = tempDir();
    const folder = tempDir();
    writeFileAt(
      folder,
      'ggml-vocab-baichuan.gguf',
      readFileSync(join(STORIES_260K, '..', 'vocab', 'ggml-vocab-baichuan.gguf')),
    );
    writeFileAt(folder, 'stories260K.gguf', STORIES);

    const r = gufo(['models', '--json'], cliEnv(home, [folder]));
    expect(r.status, r.stderr).toBe(0);
    const models = JSON.parse(r.stdout) as Record<string, unknown>[];
    expect(models.map((m) => [m.name, m.runnable, m.notRunnable])).toEqual([
      ['ggml-vocab-baichuan', false, 'vocabulary only: the file has no weights (a tokenizer file)'],
      ['stories260K', true, null],
    ]);

    const table = gufo(['models'], cliEnv(home, [folder]));
    expect(table.stdout).toContain(`(not runnable: vocabulary only: the file has no weights (a tokenizer file))`);
    expect(gufo(['models', '--help'], {}).stdout).toContain('notRunnable: why not, null when it can');

    // Commands that run a model say what the library says, by path or by name, before any engine starts.
    for (const model of [join(folder, 'ggml-vocab-baichuan.gguf'), 'ggml-vocab-baichuan']) {
      const run = gufo(['run', model, '--prompt', 'hi'], cliEnv(home, [folder]));
      expect(run.status).not.toBe(0);
      expect(run.stderr).toContain('cannot run: vocabulary only: the file has no weights (a tokenizer file)');
    }
  });
});

describe('gufo pull', () => {
  it('downloads hf:// from HF_ENDPOINT into the library, and a second run with another SHA-256 fails cleanly', async () => {
    const model = variant('pulled');
    const server = await startFileServer({ files: { 'org/repo/tiny.gguf': model }, huggingFace: true });
    const home = tempDir();
    const env = { ...cliEnv(home), HF_ENDPOINT: server.url };
    const r = await gufoAsync(['pull', 'hf://org/repo/tiny.gguf', '--json'], env);
    expect(r.status, r.stderr).toBe(0);
    const path = join(home, 'gufo-data', 'models', 'tiny.gguf');
    expect(JSON.parse(r.stdout)).toEqual({
      url: 'hf://org/repo/tiny.gguf',
      path,
      bytes: model.length,
      sha256: sha256Of(model),
      sha256Source: 'published',
      modelId: 1,
    });
    expect(readFileSync(path).equals(model)).toBe(true);
    const listed = JSON.parse(gufo(['models', '--json'], env).stdout) as { path: string; source: string }[];
    expect(listed.map((m) => [m.path, m.source])).toEqual([[path, 'downloaded']]);

    const bad = await gufoAsync(['pull', 'hf://org/repo/tiny.gguf', '--sha256', '0'.repeat(64)], env);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain(
      `gufo: hf://org/repo/tiny.gguf: the file's SHA-256 is ${sha256Of(model)}, not the given ${'0'.repeat(64)}; the download was deleted`,
    );
    expect(existsSync(join(home, 'gufo-data', 'models', 'tiny-2.gguf'))).toBe(false);

    const usage = gufo(['pull'], env);
    expect(usage.stderr).toBe('gufo: expected one URL (see gufo pull --help)\n');
  });
});

describe('gufo pull retries', () => {
  it('goes on when the connection of its first request (the HEAD probe) drops', async () => {
    const model = variant('flaky');
    const server = await startFileServer({ files: { 'tiny.gguf': model }, dropHeads: 1 });
    const home = tempDir();
    const r = await gufoAsync(['pull', `${server.url}/tiny.gguf`, '--json'], cliEnv(home));
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ bytes: model.length, sha256: sha256Of(model) });
    expect(server.requests.map((q) => q.method)).toEqual(['HEAD', 'HEAD', 'GET']);
  });
});

describe('gufo ollama export', () => {
  it('writes <name>.gguf and a Modelfile, and creates the model in the Ollama on OLLAMA_HOST', async () => {
    const ollama = await startOllamaStandIn();
    const out = tempDir();
    const r = await gufoAsync(
      [
        'ollama',
        'export',
        STORIES_260K,
        '--name',
        'stories:f16',
        '--type',
        'f16',
        '--out',
        out,
        '--ctx',
        '512',
        '--json',
      ],
      {
        ...isolatedEnv(tempDir()),
        OLLAMA_HOST: ollama.url,
      },
    );
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as {
      outputPath: string;
      sha256: string;
      created: boolean;
      ollamaVersion: string;
      modelfile: string;
    };
    expect(result).toMatchObject({ outputPath: join(out, 'stories-f16.gguf'), created: true, ollamaVersion: '0.6.2' });
    expect(result.modelfile).toContain('PARAMETER num_ctx 512\n');
    expect(readFileSync(join(out, 'Modelfile'), 'utf8')).toBe(result.modelfile);
    expect(ollama.created.map((c) => [c.model, c.files])).toEqual([
      ['stories:f16', { 'stories-f16.gguf': `sha256:${result.sha256}` }],
    ]);
    expect(ollama.blobs.get(`sha256:${result.sha256}`)?.equals(readFileSync(result.outputPath))).toBe(true);

    // No server: the files, and the command to run on stdout.
    const quiet = tempDir();
    const offline = await gufoAsync(['ollama', 'export', STORIES_260K, '--name', 'tiny', '--out', quiet], {
      ...isolatedEnv(tempDir()),
      OLLAMA_HOST: '127.0.0.1:9',
    });
    expect(offline.status, offline.stderr).toBe(0);
    expect(offline.stdout).toBe(`ollama create tiny -f ${join(quiet, 'Modelfile')}\n`);
    expect(offline.stderr).toContain('No Ollama server answers at http://127.0.0.1:9');

    const missing = gufo(['ollama', 'export', STORIES_260K]);
    expect(missing.stderr).toBe('gufo: --name is required: the Ollama model name, e.g. --name mymodel:q4\n');
  });
});
