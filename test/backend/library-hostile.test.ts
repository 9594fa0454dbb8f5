/**
 * Issue #14: one GGUF with a hostile metadata value (`llama.block_count = 2^31`) in the model
 * folder took `gufo serve` down on the first listing, again after every restart. A served library
 * over such copies and one good model answers the UI's listing, each broken file a row carrying
 * its error, and /v1/models, which lists the good model alone — before and after a restart.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelEntry } from '../../src-preload/api';
import { createBackend } from '../../src-main/backend/index';
import { openAiRoutes } from '../../src-main/backend/openai/routes';
import { openAiServiceOf } from '../../src-main/backend/openai/service';
import { GgufType, type GgufKv } from '../../src-main/core/gguf/values';
import { startServer } from '../../src-main/node/server/index';
import { writeStoriesWith } from '../support/gguf-variants';
import { STORIES_260K } from '../support/paths';
import { send } from './fixtures/openai-server';

/** File name → the hostile value it carries; each error must name its key. */
const HOSTILE: Record<string, GgufKv> = {
  'layers-2p31.gguf': { key: 'llama.block_count', type: GgufType.UINT32, value: 2 ** 31 },
  'layers-1e8.gguf': { key: 'llama.block_count', type: GgufType.UINT32, value: 1e8 },
  'layers-minus-one.gguf': { key: 'llama.block_count', type: GgufType.INT32, value: -1 },
  'heads-2p63.gguf': { key: 'llama.attention.head_count', type: GgufType.UINT64, value: 2n ** 63n },
  'kv-heads-per-layer.gguf': {
    key: 'llama.attention.head_count_kv',
    type: GgufType.ARRAY,
    value: { itemType: GgufType.UINT32, items: new Uint32Array(3) },
  },
  'context-nan.gguf': { key: 'llama.context_length', type: GgufType.FLOAT32, value: Number.NaN },
  'file-type-string.gguf': { key: 'general.file_type', type: GgufType.STRING, value: 'Q4_K_M' },
};

let root: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'gufo-hostile-'));
  const models = join(root, 'home', 'models');
  mkdirSync(models, { recursive: true });
  copyFileSync(STORIES_260K, join(models, 'stories260K.gguf'));
  for (const [name, kv] of Object.entries(HOSTILE)) await writeStoriesWith(join(models, name), [kv]);
  mkdirSync(join(root, 'renderer'));
  writeFileSync(join(root, 'renderer', 'index.html'), '<!doctype html><title>Gufo</title>');
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** `gufo serve` over the data dir: the UI's API and the OpenAI routes on one server. */
async function serve() {
  const backend = createBackend({ mode: 'browser', dataDir: join(root, 'home'), env: {} });
  const server = await startServer({
    port: 0,
    host: '127.0.0.1',
    rendererDir: join(root, 'renderer'),
    api: backend.api,
    events: backend.events,
    mounted: openAiRoutes(openAiServiceOf(backend.context), { hostPort: () => null }),
  });
  return {
    /** The UI's listing, over HTTP as the browser asks for it. */
    async listing(): Promise<ModelEntry[]> {
      const reply = await send(
        server.port,
        'POST',
        '/gufo/api/listModels',
        { 'x-gufo-token': server.token, 'content-type': 'application/json' },
        '[]',
      );
      expect(reply.status).toBe(200);
      const body = JSON.parse(reply.body) as { result?: ModelEntry[]; error?: string };
      expect(body.error).toBeUndefined();
      return body.result!;
    },
    async openAiModels(): Promise<string[]> {
      const reply = await send(server.port, 'GET', '/v1/models');
      expect(reply.status).toBe(200);
      return (JSON.parse(reply.body) as { data: { id: string }[] }).data.map((m) => m.id);
    },
    async close() {
      await server.close();
      await backend.close();
    },
  };
}

function checkListing(models: ModelEntry[]): void {
  expect(models.map((m) => m.fileName).sort()).toEqual(['stories260K.gguf', ...Object.keys(HOSTILE)].sort());
  for (const model of models) {
    const kv = HOSTILE[model.fileName];
    if (!kv) {
      expect(model.error).toBeNull();
      expect(model.architecture).toBe('llama');
      continue;
    }
    expect(model.error, model.fileName).toContain(`metadata "${kv.key}"`);
    expect(model.error, model.fileName).not.toContain('\n');
  }
}

describe('a served library with hostile GGUF files', () => {
  it('lists each broken file as a row with its error and serves the good model on /v1/models, before and after a restart', async () => {
    for (let start = 0; start < 2; start++) {
      const served = await serve();
      try {
        checkListing(await served.listing());
        expect(await served.openAiModels()).toEqual(['stories260k']);
        // A listing again (the folders are scanned on each) still answers.
        checkListing(await served.listing());
      } finally {
        await served.close();
      }
    }
  });
});
