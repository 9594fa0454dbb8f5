import { describe, expect, it } from 'vitest';
import type { DownloadView } from '../../src-preload/api';
import {
  actionsFor,
  describeProgress,
  fractionOf,
  withDownload,
  withListing,
} from '../../src-renderer/lib/downloads-view';
import { suggestOllamaName } from '../../src-renderer/lib/ollama-name';

function download(id: number, patch: Partial<DownloadView> = {}): DownloadView {
  return {
    id,
    url: `https://host/m${id}.gguf`,
    fileName: `m${id}.gguf`,
    path: `/models/m${id}.gguf`,
    status: 'running',
    bytes: 0,
    total: null,
    bytesPerSecond: null,
    etaSeconds: null,
    sha256: null,
    sha256Source: null,
    error: null,
    modelId: null,
    createdAt: '2026-01-01T00:00:00Z',
    updatedAt: '2026-01-01T00:00:00Z',
    revision: 1,
    ...patch,
  };
}

describe('downloads view', () => {
  it('says how far a download is, how fast, and how long is left', () => {
    expect(describeProgress(download(1, { bytes: 120e6, total: 1.2e9, bytesPerSecond: 12.3e6, etaSeconds: 87 }))).toBe(
      '114 MiB of 1.12 GiB · 11.7 MiB/s · 1 min left',
    );
    expect(describeProgress(download(1, { bytes: 5000 }))).toBe('4.88 KiB');
    expect(describeProgress(download(1, { bytes: 10, total: 20, etaSeconds: 7200 }))).toBe(
      '10 B of 20 B · 2 h 0 min left',
    );
    expect(fractionOf(download(1, { bytes: 50, total: 200 }))).toBe(0.25);
    expect(fractionOf(download(1, { bytes: 50 }))).toBeNull();
  });

  it('offers what each state allows', () => {
    expect(actionsFor('running')).toEqual(['pause', 'cancel']);
    expect(actionsFor('queued')).toEqual(['pause', 'cancel']);
    expect(actionsFor('paused')).toEqual(['resume', 'cancel']);
    expect(actionsFor('failed')).toEqual(['resume', 'remove']);
    expect(actionsFor('verifying')).toEqual([]);
    expect(actionsFor('done')).toEqual(['remove']);
  });

  it('puts an update in place, and a new download first', () => {
    const list = [download(2), download(1)];
    expect(withDownload(list, download(1, { bytes: 9 })).map((d) => [d.id, d.bytes])).toEqual([
      [2, 0],
      [1, 9],
    ]);
    expect(withDownload(list, download(3)).map((d) => d.id)).toEqual([3, 2, 1]);
  });

  it('keeps a later view when an earlier one arrives after it (an answer overtaken by an event)', () => {
    const done = download(1, { status: 'done', revision: 5 });
    const started = download(1, { status: 'running', revision: 2 });
    expect(withDownload([done], started)).toEqual([done]);
    expect(withDownload([started], done)).toEqual([done]);
    expect(
      withListing([done, download(2, { revision: 9 })], [started, download(2, { revision: 3 }), download(3)]),
    ).toEqual([done, download(2, { revision: 9 }), download(3)]);
  });
});

describe('Ollama names', () => {
  it('are suggested from the model name and the type', () => {
    expect(suggestOllamaName('Qwen2.5 0.5B Instruct', 'Q4_K_M')).toBe('qwen2.5-0.5b-instruct:q4_k_m');
    expect(suggestOllamaName('stories260K.gguf', null)).toBe('stories260k');
    expect(suggestOllamaName('tiny:latest', null)).toBe('tiny-latest');
    expect(suggestOllamaName('  ✨ ', 'Q8_0')).toBe('model:q8_0');
  });
});
