import { describe, expect, it } from 'vitest';
import type { ModelEntry } from '../../src-preload/api';
import {
  librarySummary,
  architecturesOf,
  deletionBlocker,
  describeLocations,
  describeMix,
  filterModels,
  generativeModels,
  mixSegments,
  nextSort,
  runnableModels,
  sortModels,
} from '../../src-renderer/lib/library-view';

function model(id: number, patch: Partial<ModelEntry>): ModelEntry {
  return {
    id,
    name: `model ${id}`,
    generalName: null,
    path: `/models/m${id}.gguf`,
    fileName: `m${id}.gguf`,
    source: 'folder',
    locations: [{ path: `/models/m${id}.gguf`, source: 'folder', label: null }],
    parts: 1,
    bytes: 1000,
    mtimeMs: 0,
    sha256: null,
    architecture: 'llama',
    parameters: 1000,
    fileType: 'Q4_K_M',
    typeMix: [],
    contextLength: 4096,
    error: null,
    notRunnable: null,
    noGeneration: null,
    addedAt: '2025-01-01T00:00:00.000Z',
    ...patch,
  };
}

const MODELS = [
  model(1, { name: 'Qwen3 8B', architecture: 'qwen3', parameters: 8e9, bytes: 5e9, fileType: 'Q4_K_M' }),
  model(2, { name: 'llama 3.2 1B', parameters: 1.2e9, bytes: 8e8, fileType: 'Q8_0', source: 'added' }),
  model(3, {
    name: 'broken',
    architecture: null,
    parameters: null,
    fileType: null,
    contextLength: null,
    bytes: 10,
    error: 'bad',
  }),
  model(4, { name: 'Llama 3.1 70B', parameters: 7e10, bytes: 4e10, path: '/big/disk/l70.gguf' }),
];

const names = (models: ModelEntry[]) => models.map((m) => m.name);

describe('sortModels', () => {
  it('sorts names naturally and ignoring case, either way', () => {
    expect(names(sortModels(MODELS, { key: 'name', direction: 'ascending' }))).toEqual([
      'broken',
      'Llama 3.1 70B',
      'llama 3.2 1B',
      'Qwen3 8B',
    ]);
    expect(names(sortModels(MODELS, { key: 'name', direction: 'descending' }))).toEqual([
      'Qwen3 8B',
      'llama 3.2 1B',
      'Llama 3.1 70B',
      'broken',
    ]);
    const numbered = [model(5, { name: 'part 10' }), model(6, { name: 'part 9' })];
    expect(names(sortModels(numbered, { key: 'name', direction: 'ascending' }))).toEqual(['part 9', 'part 10']);
  });

  it('sorts numbers by value and keeps unknown values last in both directions', () => {
    expect(names(sortModels(MODELS, { key: 'parameters', direction: 'descending' }))).toEqual([
      'Llama 3.1 70B',
      'Qwen3 8B',
      'llama 3.2 1B',
      'broken',
    ]);
    expect(names(sortModels(MODELS, { key: 'parameters', direction: 'ascending' }))).toEqual([
      'llama 3.2 1B',
      'Qwen3 8B',
      'Llama 3.1 70B',
      'broken',
    ]);
    expect(names(sortModels(MODELS, { key: 'bytes', direction: 'ascending' }))[0]).toBe('broken');
  });

  it('breaks ties by name and does not change its input', () => {
    const copy = [...MODELS];
    expect(names(sortModels(MODELS, { key: 'contextLength', direction: 'ascending' }))).toEqual([
      'Llama 3.1 70B',
      'llama 3.2 1B',
      'Qwen3 8B',
      'broken',
    ]);
    expect(MODELS).toEqual(copy);
  });
});

describe('nextSort', () => {
  it('flips the sorted column and starts numbers largest first', () => {
    expect(nextSort({ key: 'name', direction: 'ascending' }, 'name')).toEqual({ key: 'name', direction: 'descending' });
    expect(nextSort({ key: 'name', direction: 'descending' }, 'name')).toEqual({ key: 'name', direction: 'ascending' });
    expect(nextSort({ key: 'name', direction: 'ascending' }, 'bytes')).toEqual({
      key: 'bytes',
      direction: 'descending',
    });
    expect(nextSort({ key: 'bytes', direction: 'ascending' }, 'architecture')).toEqual({
      key: 'architecture',
      direction: 'ascending',
    });
  });
});

describe('filterModels', () => {
  it('matches every word against name, path, architecture and file type', () => {
    expect(names(filterModels(MODELS, 'llama', ''))).toEqual(['llama 3.2 1B', 'Llama 3.1 70B']);
    expect(names(filterModels(MODELS, 'QWEN3', ''))).toEqual(['Qwen3 8B']);
    expect(names(filterModels(MODELS, 'big/disk', ''))).toEqual(['Llama 3.1 70B']);
    expect(names(filterModels(MODELS, 'q8_0', ''))).toEqual(['llama 3.2 1B']);
    expect(names(filterModels(MODELS, 'llama  1b', ''))).toEqual(['llama 3.2 1B']);
    expect(filterModels(MODELS, '  ', '')).toHaveLength(4);
  });

  it('keeps one architecture when asked', () => {
    expect(names(filterModels(MODELS, '', 'qwen3'))).toEqual(['Qwen3 8B']);
    expect(names(filterModels(MODELS, '8b', 'llama'))).toEqual([]);
  });
});

describe('architecturesOf', () => {
  it('lists each known architecture once, sorted', () => {
    expect(architecturesOf(MODELS)).toEqual(['llama', 'qwen3']);
  });
});

describe('mixSegments', () => {
  it('gives each type its share of the bytes, and says it as text', () => {
    const segments = mixSegments([
      { type: 'Q4_K', tensors: 10, parameters: 900, bytes: 750 },
      { type: 'Q6_K', tensors: 1, parameters: 100, bytes: 245 },
      { type: 'F32', tensors: 5, parameters: 5, bytes: 5 },
    ]);
    expect(segments).toEqual([
      { type: 'Q4_K', percent: 75 },
      { type: 'Q6_K', percent: 24.5 },
      { type: 'F32', percent: 0.5 },
    ]);
    expect(describeMix(segments)).toBe('Q4_K 75%, Q6_K 25%, F32 <1%');
    expect(mixSegments([])).toEqual([]);
  });
});

describe('locations', () => {
  it('finds a model by the name another app gives it, and says where its copies are', () => {
    const ollama = model(9, {
      name: 'tiny:latest',
      source: 'ollama',
      locations: [
        { path: '/o/blobs/sha256-1', source: 'ollama', label: 'tiny:latest' },
        { path: '/hf/blobs/1', source: 'huggingface', label: 'org/Tiny-GGUF/tiny.gguf' },
        { path: '/lm/p/r/tiny.gguf', source: 'lmstudio', label: 'p/r/tiny.gguf' },
      ],
    });
    expect(filterModels([...MODELS, ollama], 'Tiny-GGUF', '').map((m) => m.id)).toEqual([9]);
    expect(describeLocations(ollama)).toBe('In 3 places: Ollama, Hugging Face, LM Studio');
    expect(describeLocations({ locations: [ollama.locations[0]!] })).toBe('Ollama: tiny:latest');
    expect(describeLocations(MODELS[0]!)).toBe('Folder');
    expect(deletionBlocker(ollama)).toBe(
      'It is Ollama’s: delete it there (ollama rm). Here it can only be removed from the library.',
    );
    expect(deletionBlocker(MODELS[0]!)).toBeNull();
    expect(deletionBlocker({ locations: [{ path: '/m/model.bin', source: 'added', label: null }] })).toBe(
      'Gufo deletes only .gguf files; this one can only be removed from the library.',
    );
  });
});

describe('model pickers', () => {
  const models = [
    model(1, {}),
    model(2, { architecture: 'bert', noGeneration: 'an embedding model (bert): it only embeds text' }),
    model(3, { notRunnable: 'vocabulary only: the file has no weights (a tokenizer file)' }),
  ];

  it('offer an embedding model to export but not to chat or benchmarks', () => {
    expect(runnableModels(models).map((m) => m.id)).toEqual([1, 2]);
    expect(generativeModels(models).map((m) => m.id)).toEqual([1]);
  });
});

describe("the library's count", () => {
  const row = (error: string | null) => ({ error }) as ModelEntry;
  it('counts readable files as models and the unreadable ones apart', () => {
    const models = [row(null), row(null), row('magic: not a GGUF file')];
    expect(librarySummary(models, 3, '1.2 MB')).toBe('2 models and 1 unreadable file, 1.2 MB');
    expect(librarySummary(models, 1, '1.2 MB')).toBe('1 of 3 shown (2 models and 1 unreadable file)');
    expect(librarySummary([row(null)], 1, '1 kB')).toBe('1 model, 1 kB');
  });
});
