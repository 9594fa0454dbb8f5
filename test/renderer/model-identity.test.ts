import { describe, expect, it } from 'vitest';
import type { ModelEntry } from '../../src-preload/api';
import { formatBytes as cliFormatBytes } from '../../src-main/cli/format';
import { fileTypeLabel, formatBytes, formatParams } from '../../src-renderer/lib/format';
import { chatPickerLabel, pickerLabel, runnableModels, secondaryName } from '../../src-renderer/lib/library-view';
import { listenerLabel, servedAt } from '../../src-renderer/lib/server-state';

const entry = (id: number, patch: Partial<ModelEntry>) =>
  ({ id, name: `m${id}`, generalName: null, notRunnable: null, ...patch }) as ModelEntry;

describe('model identity in the UI', () => {
  it('shows general.name under the name only when it says something else', () => {
    expect(secondaryName({ name: 'stories260K', generalName: 'llama' })).toBe('llama');
    expect(secondaryName({ name: 'tiny random', generalName: 'Tiny Random' })).toBeNull();
    expect(pickerLabel({ name: 'stories260K', generalName: 'llama' })).toBe('stories260K · llama');
    expect(pickerLabel({ name: 'tiny random', generalName: 'Tiny Random' })).toBe('tiny random');
    expect(secondaryName({ name: 'x', generalName: null })).toBeNull();
    expect(chatPickerLabel({ name: 'stories260K', generalName: 'llama', parameters: 292_000, fileType: 'F32' })).toBe(
      `stories260K · llama · ${formatParams(292_000)} · F32`,
    );
    expect(chatPickerLabel({ name: 'vocab', generalName: null, parameters: null, fileType: null })).toBe('vocab');
  });

  it('offers only models Gufo can run to the screens that run them', () => {
    const models = [
      entry(1, {}),
      entry(2, { notRunnable: 'vocabulary only' }),
      entry(3, { notRunnable: 'file not found: /x.gguf' }),
    ];
    expect(runnableModels(models).map((m) => m.id)).toEqual([1]);
  });

  it('writes sizes in binary units, the same as the CLI, and marks a guessed file type', () => {
    for (const bytes of [0, 1023, 1536, 1_184_000, 4.37e9]) expect(formatBytes(bytes)).toBe(cliFormatBytes(bytes));
    expect([1023, 1536, 1_184_000, 4.37e9].map(formatBytes)).toEqual(['1023 B', '1.50 KiB', '1.13 MiB', '4.07 GiB']);
    expect(fileTypeLabel('Q4_K_M', [{ type: 'Q4_K' }])).toBe('Q4_K_M');
    expect(fileTypeLabel(null, [{ type: 'F32' }, { type: 'F16' }])).toBe('F32 (guessed)');
    expect(fileTypeLabel(null, [])).toBeNull();
  });
});

describe('server status in Settings', () => {
  it("says gufo serve serves both APIs on the UI's port while the listener is off", () => {
    expect(servedAt({ url: null, servedUrl: 'http://127.0.0.1:7823/v1' })).toEqual([
      { url: 'http://127.0.0.1:7823/v1', ollamaUrl: 'http://127.0.0.1:7823', by: "gufo serve, on this page's port" },
    ]);
    expect(
      servedAt({ url: 'http://127.0.0.1:7824/v1', servedUrl: 'http://127.0.0.1:7823/v1' }).map((p) => p.url),
    ).toEqual(['http://127.0.0.1:7823/v1', 'http://127.0.0.1:7824/v1']);
    expect(servedAt({ url: null, servedUrl: null })).toEqual([]);
  });

  it('labels the switch as the listener of its own under gufo serve, as serving the APIs in the app', () => {
    expect(listenerLabel({ servedUrl: 'http://127.0.0.1:7823/v1' })).toMatch(/^Also serve the APIs on a listener/);
    expect(listenerLabel({ servedUrl: null })).toBe('Serve the OpenAI-compatible and Ollama APIs');
  });
});
