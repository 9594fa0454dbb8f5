import { mkdirSync, readFileSync, realpathSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverModels, type ScanSource } from '../../src-main/node/discovery/index';
import { discoverHuggingFace } from '../../src-main/node/discovery/huggingface-store';
import { discoverOllama, ollamaModelName } from '../../src-main/node/discovery/ollama-store';
import { groupSplitSets } from '../../src-main/node/discovery/split-sets';
import { appStoreRoots } from '../../src-main/node/discovery/store-paths';
import { writeFileAt, writeHuggingFaceRepo, writeOllamaStore } from '../support/app-stores';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

const STORIES = readFileSync(STORIES_260K);
const variant = (tag: string) => Buffer.concat([STORIES, Buffer.from(tag)]);

describe('default model stores per OS', () => {
  it('Linux: home folders, XDG folders and the Ollama service’s store', () => {
    const roots = appStoreRoots({ platform: 'linux', env: { HOME: '/home/ana' } });
    expect(roots.map((r) => [r.source, r.path])).toEqual([
      ['ollama', '/home/ana/.ollama/models'],
      ['ollama', '/usr/share/ollama/.ollama/models'],
      ['lmstudio', '/home/ana/.lmstudio/models'],
      ['lmstudio', '/home/ana/.cache/lm-studio/models'],
      ['huggingface', '/home/ana/.cache/huggingface/hub'],
      ['jan', '/home/ana/.local/share/Jan/data/llamacpp/models'],
      ['jan', '/home/ana/.local/share/Jan/data/models'],
      ['jan', '/home/ana/jan/models'],
      ['gpt4all', '/home/ana/.local/share/nomic.ai/GPT4All'],
    ]);
    const moved = appStoreRoots({
      platform: 'linux',
      env: {
        HOME: '/home/ana',
        OLLAMA_MODELS: '/data/ollama',
        HF_HOME: '/data/hf',
        XDG_DATA_HOME: '/data/share',
        XDG_CACHE_HOME: '/data/cache',
      },
    });
    expect(moved.filter((r) => r.source !== 'lmstudio').map((r) => r.path)).toEqual([
      '/data/ollama',
      '/data/hf/hub',
      '/data/share/Jan/data/llamacpp/models',
      '/data/share/Jan/data/models',
      '/home/ana/jan/models',
      '/data/share/nomic.ai/GPT4All',
    ]);
    expect(
      appStoreRoots({ platform: 'linux', env: { HOME: '/h', HF_HOME: '/x', HF_HUB_CACHE: '/y/hub' } }).find(
        (r) => r.source === 'huggingface',
      )?.path,
    ).toBe('/y/hub');
  });

  it('macOS: Application Support', () => {
    const roots = appStoreRoots({ platform: 'darwin', env: { HOME: '/Users/ana' } });
    expect(roots.map((r) => r.path)).toEqual([
      '/Users/ana/.ollama/models',
      '/Users/ana/.lmstudio/models',
      '/Users/ana/.cache/lm-studio/models',
      '/Users/ana/.cache/huggingface/hub',
      '/Users/ana/Library/Application Support/Jan/data/llamacpp/models',
      '/Users/ana/Library/Application Support/Jan/data/models',
      '/Users/ana/jan/models',
      '/Users/ana/Library/Application Support/nomic.ai/GPT4All',
    ]);
  });

  it('Windows: the user profile, APPDATA and LOCALAPPDATA', () => {
    const roots = appStoreRoots({
      platform: 'win32',
      env: { USERPROFILE: 'C:\\Users\\Ana', APPDATA: 'C:\\Users\\Ana\\AppData\\Roaming', LOCALAPPDATA: 'D:\\Local' },
    });
    expect(roots.map((r) => r.path)).toEqual([
      'C:\\Users\\Ana\\.ollama\\models',
      'C:\\Users\\Ana\\.lmstudio\\models',
      'C:\\Users\\Ana\\.cache\\lm-studio\\models',
      'C:\\Users\\Ana\\.cache\\huggingface\\hub',
      'C:\\Users\\Ana\\AppData\\Roaming\\Jan\\data\\llamacpp\\models',
      'C:\\Users\\Ana\\AppData\\Roaming\\Jan\\data\\models',
      'C:\\Users\\Ana\\jan\\models',
      'D:\\Local\\nomic.ai\\GPT4All',
    ]);
  });
});

describe('Ollama store', () => {
  it('finds each model layer’s blob through the manifests, named as `ollama list` names it', async () => {
    const root = tempDir();
    const [tiny, hf, mine] = writeOllamaStore(root, [
      { name: ['registry.ollama.ai', 'library', 'tiny', 'latest'], gguf: variant('a') },
      { name: ['hf.co', 'org', 'Tiny-GGUF', 'Q8_0'], gguf: variant('b') },
      { name: ['registry.ollama.ai', 'ana', 'stories', '260k'], gguf: variant('c') },
      // The same blob under another tag is the same file: found once, under the first name.
      { name: ['registry.ollama.ai', 'library', 'tiny', 'small'], gguf: variant('a') },
      // A cloud model: nothing on disk to read.
      { name: ['registry.ollama.ai', 'library', 'big', 'cloud'] },
      { name: ['registry.ollama.ai', 'library', 'broken', 'latest'], gguf: variant('d'), blobMissing: true },
    ]);
    writeFileAt(root, 'manifests/registry.ollama.ai/library/garbage/latest', Buffer.from('{not json'));
    const found = await discoverOllama(root);
    const hex = (path: string) => path.split('sha256-')[1];
    // Manifests are read in path order: hf.co/… before registry.ollama.ai/…
    expect(found.models.map((m) => [m.label, m.path, m.source, m.sha256, m.parts])).toEqual([
      ['hf.co/org/Tiny-GGUF:Q8_0', realpathSync(hf!), 'ollama', hex(hf!), [realpathSync(hf!)]],
      ['ana/stories:260k', realpathSync(mine!), 'ollama', hex(mine!), [realpathSync(mine!)]],
      ['tiny:latest', realpathSync(tiny!), 'ollama', hex(tiny!), [realpathSync(tiny!)]],
    ]);
    const reasons = found.problems.map((p) => p.reason);
    expect(reasons).toEqual([
      expect.stringMatching(/broken\/latest: its model file blobs\/sha256-[0-9a-f]{64} is missing$/),
      expect.stringMatching(/^cannot read Ollama manifest .*garbage\/latest: /),
    ]);
    expect(found.folders).toContain(join(root, 'manifests', 'registry.ollama.ai', 'library'));
    expect(ollamaModelName(['registry.ollama.ai', 'library', 'llama3.2', 'latest'])).toBe('llama3.2:latest');
    expect(await discoverOllama(join(root, 'nowhere'))).toEqual({
      models: [],
      problems: [],
      folders: [join(root, 'nowhere')],
    });
  });
});

describe('Hugging Face cache', () => {
  it('follows the snapshot links to the blobs, names files org/repo/path, and finds a file of several revisions once', async () => {
    const hub = tempDir();
    const [q8] = writeHuggingFaceRepo(hub, 'org/Tiny-GGUF', 'c0ffee', {
      'tiny-Q8_0.gguf': variant('q8'),
      'sub/tiny-F16.gguf': variant('f16'),
      'README.md': Buffer.from('# hi'),
    });
    writeHuggingFaceRepo(hub, 'org/Tiny-GGUF', 'old', { 'tiny-Q8_0.gguf': variant('q8') }, false);
    writeHuggingFaceRepo(hub, 'solo', 'r1', { 'm.gguf': variant('solo') });
    mkdirSync(join(hub, '.locks'));
    const found = await discoverHuggingFace(hub);
    expect(found.models.map((m) => [m.label, m.fileName, m.source]).sort()).toEqual([
      ['org/Tiny-GGUF/sub/tiny-F16.gguf', 'tiny-F16.gguf', 'huggingface'],
      ['org/Tiny-GGUF/tiny-Q8_0.gguf', 'tiny-Q8_0.gguf', 'huggingface'],
      ['solo/m.gguf', 'm.gguf', 'huggingface'],
    ]);
    expect(found.models.find((m) => m.fileName === 'tiny-Q8_0.gguf')?.path).toBe(realpathSync(q8!));
    expect(found.problems).toEqual([]);
  });

  it('keeps a split set of linked blobs together by the names in the snapshot', async () => {
    const hub = tempDir();
    const parts = writeHuggingFaceRepo(hub, 'org/Big', 'r', {
      'big-00001-of-00002.gguf': variant('1'),
      'big-00002-of-00002.gguf': variant('2'),
    });
    const found = await discoverHuggingFace(hub);
    expect(found.models).toHaveLength(1);
    expect(found.models[0]).toMatchObject({
      label: 'org/Big/big-00001-of-00002.gguf',
      parts: parts.map((p) => realpathSync(p)),
    });
  });
});

describe('split sets and folders', () => {
  it('groups -0000i-of-0000N parts by folder, and names a set whose first part is missing', () => {
    const file = (foundAt: string) => ({ path: `/real${foundAt}`, foundAt });
    const { grouped, problems } = groupSplitSets([
      file('/a/m-00002-of-00003.gguf'),
      file('/a/m-00001-of-00003.gguf'),
      file('/a/single.gguf'),
      file('/b/m-00001-of-00003.gguf'),
      file('/c/x-00002-of-00002.gguf'),
    ]);
    expect(grouped.map((g) => [g.file.foundAt, g.parts])).toEqual([
      ['/a/single.gguf', ['/real/a/single.gguf']],
      [
        '/a/m-00001-of-00003.gguf',
        ['/real/a/m-00001-of-00003.gguf', '/real/a/m-00002-of-00003.gguf', '/a/m-00003-of-00003.gguf'],
      ],
      [
        '/b/m-00001-of-00003.gguf',
        ['/real/b/m-00001-of-00003.gguf', '/b/m-00002-of-00003.gguf', '/b/m-00003-of-00003.gguf'],
      ],
    ]);
    expect(problems).toEqual([
      {
        path: '/c/x-00001-of-00002.gguf',
        reason: '/c/x-00001-of-00002.gguf: the first part of a split GGUF set is missing (1 of 2 parts found)',
      },
    ]);
  });

  it('finds a file reachable from two sources once, from the first, and skips app stores that do not exist', async () => {
    const root = tempDir();
    const lmstudio = join(root, 'lmstudio');
    const path = writeFileAt(lmstudio, 'publisher/repo/model.gguf', variant('x'));
    const sources: ScanSource[] = [
      { path: join(root, 'no-ollama'), source: 'ollama', layout: 'ollama', optional: true },
      { path: lmstudio, source: 'lmstudio', layout: 'folder', optional: true },
      { path: root, source: 'folder', layout: 'folder', optional: false },
      { path: join(root, 'gone'), source: 'folder', layout: 'folder', optional: false },
    ];
    const found = await discoverModels(sources);
    expect(found.models).toEqual([
      {
        path,
        parts: [path],
        source: 'lmstudio',
        label: 'publisher/repo/model.gguf',
        fileName: 'model.gguf',
        sha256: null,
      },
    ]);
    expect(found.problems).toEqual([
      { path: join(root, 'gone'), reason: `cannot read folder ${join(root, 'gone')}: not found` },
    ]);
    unlinkSync(path);
    expect((await discoverModels(sources)).models).toEqual([]);
  });
});
