/**
 * Ollama's model routes on the app's library, through Ollama's official client against the real
 * server: pull (hf:// and a URL, from a real HTTP server on 127.0.0.1, streamed and not), delete,
 * copy and create (from a library model or a GGUF path, with a Jinja template, a system prompt and
 * parameters that /api/chat then uses), each checked on /api/tags, the library and the disk.
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ollama, type ProgressResponse } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGguf } from '../../src-main/node/gguf-io';
import { sha256Of, startFileServer } from '../support/http-file-server';
import { STORIES_260K } from '../support/paths';
import { send, startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

let t: OpenAiTestServer;
let ollama: Ollama;
let dir: string;
/** The back end's environment, read when a download starts: each test points HF_ENDPOINT at its server. */
const env: NodeJS.ProcessEnv = {};
/** stories260K with a tail of its own (ignored by GGUF readers): bytes no other model in the library has. */
const tailed = (tail: string) => Buffer.concat([readFileSync(STORIES_260K), Buffer.from(tail)]);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gufo-ollama-models-'));
  t = await startOpenAiTestServer([STORIES_260K], env);
  ollama = new Ollama({ host: `http://127.0.0.1:${t.server.port}` });
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const names = async () => (await ollama.list()).models.map((m) => m.name).sort();
const inLibrary = async (path: string) => (await t.backend.api.listModels()).find((m) => m.path === path);
const modelsDir = () => t.backend.context.modelsDir;
/** The error the official client throws, as { status, message }. */
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => ({ status: 200, message: '' }),
    (err: { status_code?: number; message: string }) => ({ status: err.status_code, message: err.message }),
  );
const generalName = (path: string) => {
  const { gguf, file } = openGguf(path);
  try {
    return gguf.getString('general.name');
  } finally {
    file.close();
  }
};

describe("Ollama's model routes", { timeout: 240_000 }, () => {
  it('pulls hf:// streaming Ollama progress lines, into the library as the UI downloads', async () => {
    const bytes = tailed('pull hf');
    const server = await startFileServer({ files: { 'org/tiny-GGUF/pulled.gguf': bytes }, huggingFace: true });
    env.HF_ENDPOINT = server.url;
    const lines: ProgressResponse[] = [];
    for await (const line of await ollama.pull({ model: 'hf://org/tiny-GGUF/pulled.gguf', stream: true }))
      lines.push(line);

    const statuses = lines.map((l) => l.status);
    expect(statuses[0]).toBe('pulling manifest');
    expect(statuses.at(-1)).toBe('success');
    expect(statuses).toContain('verifying sha256 digest');
    const progress = lines.filter((l) => l.status === 'pulling pulled.gguf');
    expect(progress.length).toBeGreaterThan(0);
    // The last says every byte is in, with the digest Hugging Face published.
    expect(progress.at(-1)).toMatchObject({
      total: bytes.length,
      completed: bytes.length,
      digest: `sha256:${sha256Of(bytes)}`,
    });
    expect(statuses.indexOf('verifying sha256 digest')).toBeGreaterThan(statuses.indexOf('pulling pulled.gguf'));

    const path = join(modelsDir(), 'pulled.gguf');
    expect(readFileSync(path).equals(bytes)).toBe(true);
    expect(await inLibrary(path)).toMatchObject({ source: 'downloaded', name: 'pulled', sha256: sha256Of(bytes) });
    expect(await names()).toContain('pulled:latest');
    // The app's own downloads list shows it, as one started from Library › Download.
    expect((await t.backend.api.listDownloads()).map((d) => [d.url, d.status])).toContainEqual([
      'hf://org/tiny-GGUF/pulled.gguf',
      'done',
    ]);

    // Pulled again: already there, so nothing is fetched and no second copy is written.
    const requests = server.requests.length;
    const again: ProgressResponse[] = [];
    for await (const line of await ollama.pull({ model: 'hf://org/tiny-GGUF/pulled.gguf', stream: true }))
      again.push(line);
    expect(again.map((l) => [l.status, l.completed])).toEqual([
      ['pulling manifest', undefined],
      ['pulling pulled.gguf', bytes.length],
      ['success', undefined],
    ]);
    expect(server.requests.length).toBe(requests);
    expect(readdirSync(modelsDir()).filter((f) => f.startsWith('pulled'))).toEqual(['pulled.gguf']);
  });

  it('pulls a URL without streaming: one {status: "success"} once the model is in the library', async () => {
    const bytes = tailed('pull url');
    const server = await startFileServer({ files: { 'files/by-url.gguf': bytes } });
    expect(await ollama.pull({ model: `${server.url}/files/by-url.gguf`, stream: false })).toEqual({
      status: 'success',
    });
    expect(await inLibrary(join(modelsDir(), 'by-url.gguf'))).toMatchObject({ source: 'downloaded' });
    expect(await names()).toContain('by-url:latest');
  });

  it("refuses a name of Ollama's registry, and says why a pull failed", async () => {
    expect(await failure(ollama.pull({ model: 'llama3.2', stream: false }))).toEqual({
      status: 400,
      message: expect.stringMatching(
        /"llama3\.2" is a name in Ollama's registry.*hf:\/\/<org>\/<repo>\/<file\.gguf>/,
      ) as string,
    });
    const server = await startFileServer({ files: {} });
    const missing = await failure(ollama.pull({ model: `${server.url}/none.gguf`, stream: false }));
    expect(missing.status).toBe(500);
    expect(missing.message).toContain('404');
    // Streamed, the failure is the last line.
    const lines: unknown[] = [];
    const streamed = await failure(
      (async () => {
        for await (const line of await ollama.pull({ model: `${server.url}/none.gguf`, stream: true }))
          lines.push(line);
      })(),
    );
    expect(streamed.message).toContain('404');
    expect(lines).toEqual([{ status: 'pulling manifest' }]);
    expect(existsSync(join(modelsDir(), 'none.gguf'))).toBe(false);
  });

  it('copies a model to a new file of its own under the new name, never over an existing one', async () => {
    await ollama.copy({ source: 'stories260k', destination: 'stories-copy' });
    const path = join(modelsDir(), 'stories-copy.gguf');
    expect(await names()).toEqual(expect.arrayContaining(['stories260k:latest', 'stories-copy:latest']));
    // Its own model (not merged with the source as the same bytes), named in its metadata.
    const copy = await inLibrary(path);
    expect(copy).toMatchObject({ name: 'stories-copy', source: 'exported', architecture: 'llama', error: null });
    expect(generalName(path)).toBe('stories-copy');
    const { gguf, file } = openGguf(path);
    const source = openGguf(STORIES_260K);
    try {
      expect(gguf.tensors.map((x) => [x.name, x.type, x.bytes])).toEqual(
        source.gguf.tensors.map((x) => [x.name, x.type, x.bytes]),
      );
      const first = gguf.tensors[0]!;
      const sourceFirst = source.gguf.tensors[0]!;
      expect(
        Buffer.from(gguf.source.bytes(gguf.dataOffset + first.offset, first.bytes)).equals(
          Buffer.from(source.gguf.source.bytes(source.gguf.dataOffset + sourceFirst.offset, sourceFirst.bytes)),
        ),
      ).toBe(true);
    } finally {
      file.close();
      source.file.close();
    }

    const before = readFileSync(path);
    expect(await failure(ollama.copy({ source: 'stories260k', destination: 'stories-copy:latest' }))).toEqual({
      status: 409,
      message: expect.stringContaining('a model named "stories-copy" is in the library already') as string,
    });
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(await failure(ollama.copy({ source: 'nope', destination: 'other' }))).toMatchObject({ status: 404 });
    expect(await failure(ollama.copy({ source: 'stories260k', destination: 'mine:q4' }))).toEqual({
      status: 400,
      message: expect.stringContaining('give a name without another tag ("mine-q4")') as string,
    });
    expect(await failure(ollama.copy({ source: 'stories260k', destination: 'user/mine' }))).toMatchObject({
      status: 400,
    });
  });

  it("deletes Gufo's own files from disk, and only removes other folders' models from the library", async () => {
    await ollama.copy({ source: 'stories260k', destination: 'to-delete' });
    const own = join(modelsDir(), 'to-delete.gguf');
    expect(existsSync(own)).toBe(true);
    await ollama.delete({ model: 'to-delete:latest' });
    expect(existsSync(own)).toBe(false);
    expect(await names()).not.toContain('to-delete:latest');
    expect(await inLibrary(own)).toBeUndefined();

    const elsewhere = join(dir, 'elsewhere.gguf');
    writeFileSync(elsewhere, tailed('elsewhere'));
    await t.backend.api.addModels([elsewhere]);
    expect(await names()).toContain('elsewhere:latest');
    await ollama.delete({ model: 'elsewhere' });
    expect(await names()).not.toContain('elsewhere:latest');
    expect(await inLibrary(elsewhere)).toBeUndefined();
    expect(existsSync(elsewhere)).toBe(true);

    // As Ollama answers it: 200, no body.
    await ollama.copy({ source: 'stories260k', destination: 'raw-delete' });
    const body = JSON.stringify({ model: 'raw-delete' });
    const raw = await send(t.server.port, 'DELETE', '/api/delete', { 'content-length': String(body.length) }, body);
    expect(raw).toMatchObject({ status: 200, body: '' });
    expect(await names()).not.toContain('raw-delete:latest');

    expect(await failure(ollama.delete({ model: 'to-delete' }))).toEqual({
      status: 404,
      message: expect.stringContaining('model "to-delete" not found') as string,
    });
  });

  it('creates a model whose template, system prompt and parameters /api/chat then uses', async () => {
    const template = "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}";
    const lines: ProgressResponse[] = [];
    for await (const line of await ollama.create({
      model: 'stories-made',
      from: 'stories260k',
      template,
      system: 'You tell stories.',
      parameters: { temperature: 0, num_predict: 6, seed: 7 },
      stream: true,
    }))
      lines.push(line);
    expect(lines.map((l) => l.status)).toEqual(['writing stories-made.gguf', 'success']);
    expect(await names()).toContain('stories-made:latest');
    const path = join(modelsDir(), 'stories-made.gguf');
    expect(await inLibrary(path)).toMatchObject({ name: 'stories-made', source: 'exported' });
    const shown = await ollama.show({ model: 'stories-made' });
    expect(shown).toMatchObject({
      template,
      system: 'You tell stories.',
      parameters: 'temperature 0\nnum_predict 6\nseed 7',
      modelfile: [
        '# Served by Gufo from its library',
        `FROM ${path}`,
        'SYSTEM """You tell stories."""',
        'PARAMETER temperature 0',
        'PARAMETER num_predict 6',
        'PARAMETER seed 7',
        '',
      ].join('\n'),
    });

    // The chat renders the new template with the model's system prompt, and samples with its
    // parameters: the same tokens as the plain model given that exact text raw, greedy.
    const chat = await ollama.chat({
      model: 'stories-made',
      messages: [{ role: 'user', content: 'Once upon a time' }],
    });
    const raw = await ollama.generate({
      model: 'stories260k',
      raw: true,
      prompt: '[system] You tell stories.\n[user] Once upon a time\n',
      options: { temperature: 0, num_predict: 6, seed: 7 },
    });
    expect(chat.eval_count).toBe(6);
    expect(chat.done_reason).toBe('length');
    expect(chat.prompt_eval_count).toBe(raw.prompt_eval_count);
    expect(chat.message.content).toBe(raw.response);
    // A request's own options and system message win over the model's.
    const own = await ollama.chat({
      model: 'stories-made',
      messages: [
        { role: 'system', content: 'Mine.' },
        { role: 'user', content: 'Once upon a time' },
      ],
      options: { num_predict: 3 },
    });
    expect(own.eval_count).toBe(3);
    const ownRaw = await ollama.generate({
      model: 'stories260k',
      raw: true,
      prompt: '[system] Mine.\n[user] Once upon a time\n',
      options: { temperature: 0, num_predict: 3 },
    });
    expect(own.prompt_eval_count).toBe(ownRaw.prompt_eval_count);
  });

  it("creates from an older client's Modelfile with FROM a GGUF path, without streaming", async () => {
    const file = join(dir, 'from-path.gguf');
    copyFileSync(STORIES_260K, file);
    const modelfile = [
      '# made by a test',
      `FROM ${file}`,
      'TEMPLATE """{% for m in messages %}{{ m.content }}',
      '{% endfor %}"""',
      'PARAMETER stop "<end>"',
      'PARAMETER stop "###"',
      'PARAMETER num_ctx 128',
      'SYSTEM Be brief.',
    ].join('\n');
    const reply = await send(
      t.server.port,
      'POST',
      '/api/create',
      { 'content-type': 'application/json' },
      JSON.stringify({ name: 'from-modelfile', modelfile, stream: false }),
    );
    expect(reply).toMatchObject({ status: 200, body: '{"status":"success"}' });
    const shown = await ollama.show({ model: 'from-modelfile' });
    expect(shown).toMatchObject({
      template: '{% for m in messages %}{{ m.content }}\n{% endfor %}',
      system: 'Be brief.',
      parameters: 'stop "<end>"\nstop "###"\nnum_ctx 128',
    });
    expect(generalName(join(modelsDir(), 'from-modelfile.gguf'))).toBe('from-modelfile');
  });

  it('refuses a create that cannot be made, naming what is wrong, and writes nothing', async () => {
    const notGguf = join(dir, 'text.gguf');
    writeFileSync(notGguf, 'not a model');
    const cases: [Parameters<Ollama['create']>[0], number, RegExp][] = [
      [{ model: 'x1', from: 'no-such-model' }, 400, /"no-such-model" is neither a model of the library/],
      [{ model: 'stories260k', from: 'stories260k' }, 409, /a model named "stories260k" is in the library already/],
      [{ model: 'x3', from: 'stories260k', template: '{{ .System }} {{ .Prompt }}' }, 400, /Go template language/],
      [{ model: 'x4', from: 'stories260k', template: '{% for %}' }, 400, /the template does not parse/],
      [{ model: 'x5', from: 'stories260k', parameters: { temperature: 'hot' } }, 400, /parameters: .*temperature/],
      [{ model: 'x6', from: 'stories260k', quantize: 'q4_K_M' }, 400, /"quantize"/],
      [{ model: 'x7' }, 400, /"from" is required/],
    ];
    for (const [request, status, message] of cases) {
      const got = await failure(ollama.create({ ...request, stream: false }));
      expect({ request, ...got }).toEqual({ request, status, message: expect.stringMatching(message) as string });
    }
    // The official client sends no path in "from" (Ollama's takes none): as other clients send it.
    const path = await send(t.server.port, 'POST', '/api/create', {}, JSON.stringify({ model: 'x2', from: notGguf }));
    expect(path.status).toBe(400);
    expect(JSON.parse(path.body)).toEqual({
      error: expect.stringMatching(/text\.gguf: not a GGUF file Gufo can read/) as string,
    });
    const written = ['x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7'].filter((n) =>
      existsSync(join(modelsDir(), `${n}.gguf`)),
    );
    expect(written).toEqual([]);
    const badModelfile = await send(
      t.server.port,
      'POST',
      '/api/create',
      {},
      JSON.stringify({ model: 'x8', modelfile: 'FROM stories260k\nADAPTER ./lora.gguf' }),
    );
    expect(badModelfile.status).toBe(400);
    expect(JSON.parse(badModelfile.body)).toEqual({ error: 'Modelfile: ADAPTER: Gufo has no LoRA adapters' });
  });
});
