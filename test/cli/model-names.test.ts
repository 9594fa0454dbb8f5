/**
 * Every command that takes a model takes a path or a name `gufo models` prints (cli/model-arg.ts),
 * resolved through the library in GUFO_HOME; errors name what is wrong in one line, never an errno.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAt, writeHuggingFaceRepo, writeOllamaStore } from '../support/app-stores';
import { isolatedEnv } from '../support/backend';
import { gufo } from '../support/cli';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

const STORIES = readFileSync(STORIES_260K);
/** stories260K with bytes of its own after the tensor data, so that copies are different models. */
const variant = (tag: string) => Buffer.concat([STORIES, Buffer.from(tag)]);

/**
 * A library in a home of its own: a model folder with Stories260K.gguf and two "twin.gguf" in
 * different folders, Ollama's tiny:latest and Hugging Face's org/repo/file.gguf.
 */
function library() {
  const home = tempDir();
  const folder = join(home, 'my models');
  const paths = {
    stories: writeFileAt(folder, 'Stories260K.gguf', variant('stories')),
    twinA: writeFileAt(folder, 'a/twin.gguf', variant('twin a')),
    twinB: writeFileAt(folder, 'b/twin.gguf', variant('twin b')),
  };
  const [ollama] = writeOllamaStore(join(home, '.ollama', 'models'), [
    { name: ['registry.ollama.ai', 'library', 'tiny', 'latest'], gguf: variant('ollama') },
  ]);
  const [hf] = writeHuggingFaceRepo(join(home, '.cache', 'huggingface', 'hub'), 'org/repo', 'abc123', {
    'file.gguf': variant('hf'),
  });
  const env = { ...isolatedEnv(home), GUFO_HOME: join(home, 'gufo-data'), GUFO_MODELS_DIRS: folder };
  return { home, folder, env, paths: { ...paths, ollama: ollama!, hf: hf! } };
}

/** The file `gufo inspect <name>` read, from its text output's first line. */
function inspected(name: string, env: NodeJS.ProcessEnv): string {
  const r = gufo(['inspect', name], env);
  expect(r.stderr, name).toBe('');
  expect(r.status, name).toBe(0);
  return r.stdout.split('\n')[0]!;
}

describe('model arguments', () => {
  it('take the names gufo models prints, the file name with or without .gguf, any case', () => {
    const { env, paths } = library();
    const listed = JSON.parse(gufo(['models', '--json'], env).stdout) as { name: string }[];
    expect(listed.map((m) => m.name).sort()).toEqual(['Stories260K', 'org/repo/file', 'tiny:latest', 'twin', 'twin']);

    for (const name of ['Stories260K', 'stories260k', 'Stories260K.gguf', 'STORIES260K.GGUF'])
      expect(inspected(name, env)).toBe(paths.stories);
    // Ollama's name:tag, and without :latest as `ollama run` reads it.
    expect(inspected('tiny:latest', env)).toBe(paths.ollama);
    expect(inspected('tiny', env)).toBe(paths.ollama);
    // The Hugging Face cache's org/repo/file, with or without .gguf.
    expect(inspected('org/repo/file', env)).toBe(paths.hf);
    expect(inspected('org/repo/file.gguf', env)).toBe(paths.hf);
  });

  it('name the files a shared name means, in one line', () => {
    const { env, paths } = library();
    const r = gufo(['inspect', 'twin'], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`gufo: twin names 2 models; give the path of one: ${paths.twinA}, ${paths.twinB}\n`);
    expect(inspected(paths.twinB, env)).toBe(paths.twinB);
  });

  it('suggest the closest names in one line when none matches', () => {
    const { env } = library();
    const r = gufo(['inspect', 'storis260K'], env);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('gufo: no model named storis260K; did you mean Stories260K?\n');

    const none = gufo(['inspect', 'qwen3-coder'], env);
    expect(none.stderr).toBe(
      'gufo: no model named qwen3-coder, and no such file (gufo models lists the library: 5 models)\n',
    );
  });

  it('are resolved by every command that takes a model', () => {
    const { env, paths, home } = library();
    const tokens = gufo(['tokenize', 'stories260k', 'Once upon a time', '--json'], env);
    expect(tokens.stderr).toBe('');
    const byPath = gufo(['tokenize', paths.stories, 'Once upon a time', '--json'], env);
    expect(tokens.stdout).toBe(byPath.stdout);

    const run = gufo(['run', 'Stories260K', '--prompt', 'Once upon a time', '-n', '8', '--temp', '0'], env, 120_000);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(', there was a little girl');

    const errors = gufo(['tensor-error', 'stories260k', 'tiny', '--json'], env);
    expect(errors.status, errors.stderr).toBe(0);
    expect(JSON.parse(errors.stdout)).toMatchObject({ source: paths.stories, export: paths.ollama });

    const out = join(home, 'out.gguf');
    const quantized = gufo(['quantize', 'org/repo/file', out, '--type', 'Q8_0'], env);
    expect(quantized.status, quantized.stderr).toBe(0);
    expect(inspected(out, env)).toBe(out);

    // A misspelt name in any of them gets the same line.
    for (const args of [
      ['bench', 'tiny:latst'],
      ['chat', 'tiny:latst'],
      ['embed', 'tiny:latst', '--text', 'x'],
      ['kld', 'stories260k', 'tiny:latst', '--text', 'x'],
      ['ollama', 'export', 'tiny:latst', '--name', 'x'],
      ['perplexity', 'tiny:latst', '--text', 'x'],
      ['template', 'tiny:latst', '--messages', 'x'],
      ['dequant', 'tiny:latst', 'token_embd.weight', '-o', 'x'],
      ['imatrix', 'tiny:latst', '--text', 'x', '-o', 'x'],
    ]) {
      const r = gufo(args, env);
      expect(r.stderr, args.join(' ')).toBe('gufo: no model named tiny:latst; did you mean tiny:latest?\n');
    }
  });

  it('name the file and what is wrong instead of an errno', () => {
    const { env, home } = library();
    const folder = join(home, 'a folder.gguf');
    mkdirSync(folder);
    expect(gufo(['inspect', folder], env).stderr).toBe(`gufo: ${folder} is a folder, not a GGUF file\n`);
    const missing = join(home, 'missing.gguf');
    expect(gufo(['inspect', missing], env).stderr).toBe(`gufo: ${missing}: no such file\n`);
    expect(gufo(['inspect', './missing.gguf'], env).stderr).toBe('gufo: ./missing.gguf: no such file\n');
    // An output that cannot be written names the output, not a temporary file.
    const into = gufo(['dequant', STORIES_260K, 'token_embd.weight', '-o', home], env);
    expect(into.stderr).toBe(`gufo: ${home}: is a folder, not a file\n`);
    const nowhere = join(home, 'no', 'such', 'folder', 'x.f32');
    expect(gufo(['dequant', STORIES_260K, 'token_embd.weight', '-o', nowhere], env).stderr).toBe(
      `gufo: ${nowhere}: no such file or folder\n`,
    );
  });
});
