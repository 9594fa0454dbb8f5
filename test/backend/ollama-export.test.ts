import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OllamaExportResult } from '../../src-preload/api';
import { readModelFile } from '../../src-main/node/model-file';
import { testBackend } from '../support/backend';
import { tempDir } from '../support/temp';
import { startOllamaStandIn } from '../support/ollama-stand-in';
import { STORIES_260K } from '../support/paths';
import { writeUniformImatrix } from '../support/uniform-imatrix';

describe('Send to Ollama', () => {
  it('runs as a job: re-quantizes into the export folder, the file joins the library, Ollama gets the model', async () => {
    const ollama = await startOllamaStandIn();
    const b = testBackend({ env: { OLLAMA_HOST: ollama.url } });
    expect(await b.api.ollamaServer()).toEqual({ host: ollama.url, version: '0.6.2', problem: null });
    const source = b.context.models.upsert(readModelFile(STORIES_260K, 'added'));

    const jobId = await b.api.startOllamaExport({
      modelId: source.id,
      name: 'stories:q8',
      fileType: 'Q8_0',
      system: 'Be brief.',
    });
    const job = await b.context.jobs.wait(jobId);
    expect(job).toMatchObject({
      kind: 'ollama-export',
      status: 'done',
      title: 'Send stories260K to Ollama as stories:q8',
      modelId: source.id,
    });
    const result = job.result as OllamaExportResult;
    const folder = join(b.context.modelsDir, 'ollama', 'stories-q8');
    expect(result).toMatchObject({
      name: 'stories:q8',
      outputPath: join(folder, 'stories-q8.gguf'),
      modelfilePath: join(folder, 'Modelfile'),
      created: true,
      ollamaVersion: '0.6.2',
    });
    expect(await b.api.getModel(result.outputModelId!)).toMatchObject({
      path: result.outputPath,
      source: 'exported',
      fileType: 'Q8_0',
      sha256: result.sha256,
    });
    expect(ollama.created[0]).toMatchObject({
      model: 'stories:q8',
      system: 'Be brief.',
      files: { 'stories-q8.gguf': `sha256:${result.sha256}` },
    });
    expect(
      b.seen.some(
        (e) =>
          e.type === 'job' &&
          e.job.id === jobId &&
          e.job.status === 'running' &&
          e.job.detail?.startsWith('Quantizing to Q8_0'),
      ),
    ).toBe(true);

    // Sent again under the same name (its own folder is Gufo's to replace), as the file it is.
    const again = await b.context.jobs.wait(
      await b.api.startOllamaExport({ modelId: source.id, name: 'stories:q8', upload: false }),
    );
    expect(again.status).toBe('done');
    expect(readFileSync(result.outputPath).equals(readFileSync(STORIES_260K))).toBe(true);
    expect((again.result as OllamaExportResult).created).toBe(false);
  });

  it('says what is wrong before starting, and a cancelled job leaves no file', async () => {
    const b = testBackend({ env: { OLLAMA_HOST: 'http://127.0.0.1:9' } });
    expect(await b.api.ollamaServer()).toEqual({
      host: 'http://127.0.0.1:9',
      version: null,
      problem: 'no Ollama server answers at http://127.0.0.1:9',
    });
    const source = b.context.models.upsert(readModelFile(STORIES_260K, 'added'));
    await expect(b.api.startOllamaExport({ modelId: source.id, name: 'bad name' })).rejects.toThrow(
      '"bad name" is not an Ollama model name',
    );
    await expect(b.api.startOllamaExport({ modelId: source.id, name: 'ok', fileType: 'Q9' })).rejects.toThrow(
      'unknown file type "Q9"',
    );
    await expect(b.api.startOllamaExport({ modelId: 999, name: 'ok' })).rejects.toThrow('no model with id 999');

    const jobId = await b.api.startOllamaExport({ modelId: source.id, name: 'gone', fileType: 'Q4_0' });
    b.context.jobs.cancel(jobId);
    expect((await b.context.jobs.wait(jobId)).status).toBe('cancelled');
    expect(existsSync(join(b.context.modelsDir, 'ollama', 'gone', 'gone.gguf'))).toBe(false);
  });

  it('says whether an importance matrix weighed it, and gives the command once when no Ollama answers', async () => {
    const b = testBackend({ env: { OLLAMA_HOST: 'http://127.0.0.1:9' } });
    const source = b.context.models.upsert(readModelFile(STORIES_260K, 'added'));
    const imatrix = join(tempDir(), 'stories.imatrix.gguf');
    await writeUniformImatrix(STORIES_260K, imatrix);

    const sent = async (request: { name: string; fileType?: string; imatrix?: string }) => {
      const job = await b.context.jobs.wait(await b.api.startOllamaExport({ modelId: source.id, ...request }));
      expect(job.status).toBe('done');
      return job.result as OllamaExportResult;
    };
    const weighed = await sent({ name: 'weighed', fileType: 'Q4_K_M', imatrix });
    expect(weighed.notes).toContain(`Quantized to Q4_K_M with the importance matrix ${imatrix}.`);
    expect(weighed.created).toBe(false);
    expect(weighed.notes).toContain('No Ollama server answers at http://127.0.0.1:9.');
    // The command is the result's own line; no note repeats it.
    expect(weighed.notes.join('\n')).not.toContain('ollama create');
    // stories260K was trained on 2,048 tokens: its Modelfile asks for no more.
    expect(weighed.modelfile).toContain('PARAMETER num_ctx 2048');

    expect((await sent({ name: 'plain', fileType: 'Q4_K_M' })).notes).toContain(
      'Quantized to Q4_K_M without an importance matrix.',
    );
    await expect(b.api.startOllamaExport({ modelId: source.id, name: 'x', imatrix })).rejects.toThrow(
      'imatrix: an importance matrix weighs a re-quantization: choose a file type',
    );
  });
});
