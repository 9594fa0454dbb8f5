import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OllamaClient, versionAtLeast } from '../../src-main/node/ollama/client';
import { exportForOllama, type OllamaExportProgress } from '../../src-main/node/ollama/export';
import { ollamaBaseUrl } from '../../src-main/node/ollama/host';
import { openGguf } from '../../src-main/node/gguf-io';
import { stringKv, writeStoriesWith } from '../support/gguf-variants';
import { startOllamaStandIn } from '../support/ollama-stand-in';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** The Go template Ollama is given for Llama 2 chat (stories260K has no template; Gufo's chat picks Llama 2 for it). */
const LLAMA2_TEMPLATE = `[INST] {{ if .System }}<<SYS>>
{{ .System }}
<</SYS>>

{{ end }}{{ .Prompt }} [/INST] {{ .Response }}`;

describe('OLLAMA_HOST', () => {
  it('is read as Ollama reads it', () => {
    expect(ollamaBaseUrl({})).toBe('http://127.0.0.1:11434');
    expect(ollamaBaseUrl({ OLLAMA_HOST: '' })).toBe('http://127.0.0.1:11434');
    expect(ollamaBaseUrl({ OLLAMA_HOST: '0.0.0.0' })).toBe('http://127.0.0.1:11434');
    expect(ollamaBaseUrl({ OLLAMA_HOST: '127.0.0.1:9999' })).toBe('http://127.0.0.1:9999');
    expect(ollamaBaseUrl({ OLLAMA_HOST: 'box.local' })).toBe('http://box.local:11434');
    expect(ollamaBaseUrl({ OLLAMA_HOST: 'https://ollama.example' })).toBe('https://ollama.example:443');
    expect(ollamaBaseUrl({ OLLAMA_HOST: 'http://[::1]:8080/' })).toBe('http://[::1]:8080');
  });

  it('compares versions with the one whose API Gufo follows', () => {
    expect(versionAtLeast('0.5.5', '0.5.5')).toBe(true);
    expect(versionAtLeast('0.12.3', '0.5.5')).toBe(true);
    expect(versionAtLeast('v1.0.0-rc1', '0.5.5')).toBe(true);
    expect(versionAtLeast('0.5.4', '0.5.5')).toBe(false);
    expect(versionAtLeast('0.4.10', '0.5.5')).toBe(false);
    expect(versionAtLeast('0.0.0', '0.5.5')).toBe(true);
  });
});

describe('ollama export', () => {
  it('re-quantizes, writes <name>.gguf and a Modelfile, uploads the blob and creates the model with its template and stops', async () => {
    const ollama = await startOllamaStandIn();
    const out = join(tempDir(), 'out');
    const progress: OllamaExportProgress[] = [];
    const result = await exportForOllama({
      source: STORIES_260K,
      name: 'stories:q8',
      fileType: 'Q8_0',
      outDir: out,
      system: 'You tell short stories.',
      host: ollama.url,
      onProgress: (p) => progress.push(p),
    });
    const gguf = join(out, 'stories-q8.gguf');
    expect(result).toMatchObject({
      name: 'stories:q8',
      outputPath: gguf,
      modelfilePath: join(out, 'Modelfile'),
      created: true,
      ollamaVersion: '0.6.2',
    });
    expect(result.sha256).toBe(sha256(gguf));
    const { gguf: written, file } = openGguf(gguf);
    expect(written.getNumber('general.file_type')).toBe(7);
    file.close();

    expect(readFileSync(result.modelfilePath, 'utf8')).toBe(
      [
        '# stories:q8: written by Gufo from stories260K.gguf. Create it with: ollama create stories:q8 -f Modelfile',
        'FROM ./stories-q8.gguf',
        `TEMPLATE """${LLAMA2_TEMPLATE}"""`,
        'SYSTEM """You tell short stories."""',
        'PARAMETER num_ctx 2048',
        'PARAMETER stop "</s>"',
        '',
      ].join('\n'),
    );
    expect(result.modelfile).toBe(readFileSync(result.modelfilePath, 'utf8'));
    expect(result.command).toBe(`ollama create stories:q8 -f ${join(out, 'Modelfile')}`);
    expect(result.notes).toEqual([
      'Quantized to Q8_0 without an importance matrix.',
      "The file has no chat template: the Modelfile gives Ollama the llama2 template, as Gufo's chat uses for it.",
    ]);

    // What Ollama got: the exact bytes, under their digest, and a create request with the same settings.
    expect(ollama.blobs.get(`sha256:${result.sha256}`)?.equals(readFileSync(gguf))).toBe(true);
    expect(ollama.created).toEqual([
      {
        model: 'stories:q8',
        files: { 'stories-q8.gguf': `sha256:${result.sha256}` },
        template: LLAMA2_TEMPLATE,
        system: 'You tell short stories.',
        parameters: { num_ctx: 2048, stop: ['</s>'] },
        stream: true,
      },
    ]);
    expect(ollama.requests).toEqual([
      'GET /api/version',
      `HEAD /api/blobs/sha256:${result.sha256}`,
      `POST /api/blobs/sha256:${result.sha256}`,
      'POST /api/create',
    ]);
    expect(new Set(progress.map((p) => p.phase))).toEqual(new Set(['write', 'hash', 'upload', 'create']));
    expect(progress.filter((p) => p.phase === 'upload').at(-1)).toMatchObject({
      done: statSync(gguf).size,
      total: statSync(gguf).size,
    });
    expect(progress.filter((p) => p.phase === 'create').map((p) => p.detail)).toContain('Ollama: writing manifest');

    // Again under another name: Ollama has the blob, so it is not sent twice.
    ollama.requests.length = 0;
    await exportForOllama({
      source: gguf,
      name: 'user/stories:again',
      outDir: join(tempDir(), 'again'),
      host: ollama.url,
    });
    expect(ollama.requests).toEqual([
      'GET /api/version',
      `HEAD /api/blobs/sha256:${result.sha256}`,
      'POST /api/create',
    ]);
    expect(ollama.created[1]!.files).toEqual({ 'user-stories-again.gguf': `sha256:${result.sha256}` });
  });

  it('leaves the template to Ollama when it recognizes the file’s own, and gives the file as it is without a type', async () => {
    const llama3 = join(tempDir(), 'llama3-chat.gguf');
    const template =
      "{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] + '<|eot_id|>' }}{% endfor %}";
    await writeStoriesWith(llama3, [stringKv('tokenizer.chat_template', template)]);
    const out = tempDir();
    const result = await exportForOllama({ source: llama3, name: 'chat', outDir: out, contextSize: 1024, host: null });
    expect(readFileSync(result.outputPath).equals(readFileSync(llama3))).toBe(true);
    expect(result.modelfile).toBe(
      [
        '# chat: written by Gufo from llama3-chat.gguf. Create it with: ollama create chat -f Modelfile',
        'FROM ./chat.gguf',
        'PARAMETER num_ctx 1024',
        'PARAMETER stop "</s>"',
        '',
      ].join('\n'),
    );
    expect(result).toMatchObject({ created: false, ollamaVersion: null, notes: [] });

    // An unknown template: no TEMPLATE can be written, and the user is told.
    const custom = join(tempDir(), 'custom.gguf');
    await writeStoriesWith(custom, [stringKv('tokenizer.chat_template', '{{ messages[0].content }} ->')]);
    const odd = await exportForOllama({ source: custom, name: 'odd', outDir: tempDir(), host: null });
    expect(odd.modelfile).not.toContain('TEMPLATE');
    expect(odd.notes).toEqual([expect.stringContaining("Ollama may not recognize this model's chat template")]);
  });

  it('without a server (or with one too old), writes the files and gives the command to run', async () => {
    const out = join(tempDir(), 'a dir');
    const closed = await startOllamaStandIn();
    await closed.close();
    const result = await exportForOllama({ source: STORIES_260K, name: 'tiny', outDir: out, host: closed.url });
    expect(result.created).toBe(false);
    expect(result.command).toBe(`ollama create tiny -f '${join(out, 'Modelfile')}'`);
    // The command is the result's own: the note says why only.
    expect(result.notes.at(-1)).toBe(`No Ollama server answers at ${closed.url}.`);
    expect(existsSync(join(out, 'tiny.gguf'))).toBe(true);

    const old = await startOllamaStandIn('0.5.4');
    const older = await exportForOllama({ source: STORIES_260K, name: 'tiny', outDir: tempDir(), host: old.url });
    expect(older.created).toBe(false);
    expect(older.notes.at(-1)).toMatch(/^Ollama 0\.5\.4 at .* is older than 0\.5\.5, whose API Gufo uses/);
    expect(older.notes.join('\n')).not.toContain('ollama create');
    expect(old.requests).toEqual(['GET /api/version']);
  });

  it('refuses a bad name or an existing file before writing anything, and reports what Ollama refuses', async () => {
    const out = tempDir();
    await expect(exportForOllama({ source: STORIES_260K, name: 'no spaces', outDir: out, host: null })).rejects.toThrow(
      '"no spaces" is not an Ollama model name',
    );
    await exportForOllama({ source: STORIES_260K, name: 'taken', outDir: out, host: null });
    await expect(exportForOllama({ source: STORIES_260K, name: 'taken', outDir: out, host: null })).rejects.toThrow(
      `${join(out, 'taken.gguf')} already exists`,
    );
    await expect(
      exportForOllama({ source: STORIES_260K, name: 'sys', outDir: tempDir(), system: 'say """', host: null }),
    ).rejects.toThrow('cannot contain """');

    const ollama = await startOllamaStandIn();
    const client = new OllamaClient(ollama.url);
    await expect(
      client.pushBlob(STORIES_260K, `sha256:${'0'.repeat(64)}`, statSync(STORIES_260K).size),
    ).rejects.toThrow(
      `Ollama refused the upload of ${STORIES_260K}: digest mismatch, expected "sha256:${'0'.repeat(64)}", got "sha256:${sha256(STORIES_260K)}"`,
    );
    await expect(client.create({ model: 'x', files: { 'x.gguf': `sha256:${'1'.repeat(64)}` } })).rejects.toThrow(
      `Ollama could not create x: open blobs/sha256-${'1'.repeat(64)}: no such file or directory`,
    );
    const notGguf = Buffer.from('not a model');
    const digest = `sha256:${createHash('sha256').update(notGguf).digest('hex')}`;
    ollama.blobs.set(digest, notGguf);
    await expect(client.create({ model: 'x', files: { 'x.gguf': digest } })).rejects.toThrow(
      'Ollama could not create x: supplied file was not in GGUF format',
    );
  });
});
