import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GgufType } from '../../src-main/core/gguf/values';
import { parseLegacyImatrix } from '../../src-main/core/imatrix';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { loadImatrix } from '../../src-main/node/imatrix-file';
import { quantizeFile, type QuantizeReport } from '../../src-main/node/quantize';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import { gufo } from '../support/cli';
import { greedyCompletion } from '../support/llama';
import { REPO_ROOT, STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';
import { llamaModelQuantize } from '../support/llama-quantize';
import { expectSameTensors } from '../support/same-gguf';
import { llamaFileTypeId } from '../../src-main/core/llama-file-types';

function typesOf(path: string): Record<string, string> {
  const { gguf, file } = openGguf(path);
  try {
    return Object.fromEntries(gguf.tensors.map((t) => [t.name, t.type.name]));
  } finally {
    file.close();
  }
}

describe('gufo quantize', () => {
  it('writes the same tensors, type and bytes, as llama-quantize', async () => {
    const dir = tempDir();
    const input = join(dir, 'model.gguf');
    await writeRandomModel(input, { nLayer: 2, nEmbd: 256, nFf: 512, nHead: 4, nHeadKv: 2 });
    for (const fileType of ['Q4_K_M', 'Q5_0', 'IQ4_XS'] as const) {
      const ours = join(dir, `ours-${fileType}.gguf`);
      const theirs = join(dir, `llama-${fileType}.gguf`);
      await quantizeFile(input, ours, fileType);
      expect(llamaModelQuantize(input, theirs, llamaFileTypeId(fileType)!).ok).toBe(true);
      expectSameTensors(ours, theirs, fileType);
    }
  });

  it('without measureError writes the same bytes and reports no errors; gufo quantize --json measures them', async () => {
    const dir = tempDir();
    const measured = await quantizeFile(STORIES_260K, join(dir, 'measured.gguf'), 'Q4_K_M', { threads: 2 });
    const unmeasured = await quantizeFile(STORIES_260K, join(dir, 'unmeasured.gguf'), 'Q4_K_M', {
      threads: 2,
      measureError: false,
    });
    expect(readFileSync(join(dir, 'unmeasured.gguf')).equals(readFileSync(join(dir, 'measured.gguf')))).toBe(true);
    expect(measured.tensors.every((t) => typeof t.rmse === 'number')).toBe(true);
    expect(unmeasured.tensors.map((t) => t.rmse)).toEqual(measured.tensors.map(() => null));
    const r = gufo(['quantize', STORIES_260K, join(dir, 'cli.gguf'), '--type', 'Q4_K_M', '--json']);
    expect(r.status, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { tensors: { rmse: number }[] }).tensors.map((t) => t.rmse)).toEqual(
      measured.tensors.map((t) => t.rmse),
    );
  }, 60_000);

  it.runIf(process.platform === 'linux')(
    'gufo quantize reads without memory maps, so it never loads koffi (a native addon, slow to load)',
    () => {
      const dir = tempDir();
      // Run first in the process: at its exit it says whether a koffi library is mapped into it.
      const probe = join(dir, 'probe.mjs');
      writeFileSync(
        probe,
        "import { readFileSync } from 'node:fs';\nprocess.on('exit', () => process.stderr.write(readFileSync('/proc/self/maps', 'utf8').includes('koffi') ? 'koffi loaded' : 'no koffi'));\n",
      );
      const r = spawnSync(
        process.execPath,
        [
          '--import',
          probe,
          join(REPO_ROOT, 'bin/gufo.mjs'),
          'quantize',
          STORIES_260K,
          join(dir, 'q8.gguf'),
          '--type',
          'Q8_0',
        ],
        // Recording the export in the app's library (after the file is written) reads its header
        // through the library, mapped: a config folder that cannot exist leaves the quantization alone.
        { encoding: 'utf8', env: { ...process.env, GUFO_DEV: '1', XDG_CONFIG_HOME: '/dev/null/none' } },
      );
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toContain('not recorded in /dev/null/none/');
      expect(r.stderr.endsWith('no koffi'), r.stderr).toBe(true);
    },
    60_000,
  );

  it('stories260K in Q8_0 continues "Once upon a time" as the F32 file does in llama.cpp', async () => {
    const out = join(tempDir(), 'stories-q8_0.gguf');
    const r = gufo(['quantize', STORIES_260K, out, '--type', 'Q8_0', '--json']);
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as QuantizeReport;
    expect(Object.keys(report)).toEqual(['input', 'output', 'type', 'tensors', 'bytesIn', 'bytesOut', 'seconds']);
    expect(report.tensors.find((t) => t.name === 'blk.0.attn_q.weight')).toMatchObject({
      from: 'F32',
      to: 'Q8_0',
    });
    expect(report.bytesOut).toBeLessThan(report.bytesIn / 3);
    const { gguf, file } = openGguf(out);
    expect(gguf.getNumber('general.file_type')).toBe(7);
    expect(gguf.getNumber('general.quantization_version')).toBe(2);
    file.close();
    const reference = await greedyCompletion(STORIES_260K, 'Once upon a time', 16);
    expect(await greedyCompletion(out, 'Once upon a time', 16)).toBe(reference);
  });

  it('refuses already-quantized input unless --allow-requantize, then goes through f32', async () => {
    const dir = tempDir();
    const q8 = join(dir, 'q8.gguf');
    await quantizeFile(STORIES_260K, q8, 'Q8_0');
    const r = gufo(['quantize', q8, join(dir, 'q4.gguf'), '--type', 'Q4_0']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^gufo: .*q8\.gguf: tensor ".*" is already quantized \(Q8_0\); .*--allow-requantize/);
    expect(existsSync(join(dir, 'q4.gguf'))).toBe(false);
    const report = await quantizeFile(q8, join(dir, 'q4.gguf'), 'Q4_0', { allowRequantize: true });
    expect(report.tensors.find((t) => t.name === 'blk.0.attn_q.weight')).toMatchObject({ from: 'Q8_0', to: 'Q4_0' });
    expect(typesOf(join(dir, 'q4.gguf'))['blk.0.attn_q.weight']).toBe('Q4_0');
  });

  it('reports a full disk in one line and leaves nothing half-written', () => {
    const dir = tempDir();
    const disk = join(dir, 'small-disk');
    mkdirSync(disk);
    // A 256 KiB tmpfs in a private mount namespace (works as root and, through a user namespace, without).
    const script = `mount -t tmpfs -o size=256k tmpfs "$1" && "$2" "$3" quantize "$4" "$1/out.gguf" --type F16; code=$?; ls -A "$1"; exit $code`;
    const r = spawnSync(
      'unshare',
      ['-rm', 'sh', '-c', script, 'sh', disk, process.execPath, join(REPO_ROOT, 'bin/gufo.mjs'), STORIES_260K],
      { encoding: 'utf8' },
    );
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^gufo: ENOSPC: no space left on device/);
    expect(r.stdout).toBe('');
  });

  it('stops on Ctrl-C without leaving a partial file', async () => {
    const dir = tempDir();
    const input = join(dir, 'model.gguf');
    await writeRandomModel(input, { nLayer: 6, nEmbd: 512, nFf: 1536, nHead: 8, nHeadKv: 2 });
    // Interrupted as soon as the temporary output appears, i.e. in the middle of writing: told by
    // the folder's watch when it happens, not found by looking every so often (which can miss it).
    const watcher = watch(dir);
    const writing = new Promise<void>((resolve) =>
      watcher.on('change', (_event, name) => {
        if (String(name).endsWith('.tmp')) resolve();
      }),
    );
    const child = spawn(
      process.execPath,
      [join(REPO_ROOT, 'bin/gufo.mjs'), 'quantize', input, join(dir, 'out.gguf'), '--type', 'Q4_K_M'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((done) => child.on('exit', done));
    try {
      await Promise.race([
        writing,
        exited.then((code) => Promise.reject(new Error(`gufo quantize exited (${code}) before writing: ${stderr}`))),
      ]);
    } finally {
      watcher.close();
    }
    child.kill('SIGINT');
    expect(await exited).toBe(1);
    expect(stderr).toMatch(/gufo: .*cancelled/);
    expect(readdirSync(dir)).toEqual(['model.gguf']);
  });

  it('applies an importance matrix in either llama-imatrix format', async () => {
    const dir = tempDir();
    const model = join(dir, 'model.gguf');
    await writeRandomModel(model, { nLayer: 1, nEmbd: 256, nFf: 512, nHead: 4 });
    const name = 'blk.0.ffn_up.weight';
    const weights = Float32Array.from({ length: 256 }, (_, i) => (i % 16 === 0 ? 100 : 0.01));
    // Legacy .dat: count, then name, calls, values; stored sums are divided by the call count.
    const enc = new TextEncoder().encode(name);
    const dat = new DataView(new ArrayBuffer(4 + 4 + enc.length + 8 + 1024));
    dat.setInt32(0, 1, true);
    dat.setInt32(4, enc.length, true);
    new Uint8Array(dat.buffer).set(enc, 8);
    dat.setInt32(8 + enc.length, 4, true);
    dat.setInt32(12 + enc.length, 256, true);
    weights.forEach((w, i) => dat.setFloat32(16 + enc.length + 4 * i, w * 4, true));
    writeFileSync(join(dir, 'imatrix.dat'), new Uint8Array(dat.buffer));
    const legacy = loadImatrix(join(dir, 'imatrix.dat'));
    expect(Array.from(legacy.get(name)!)).toEqual(Array.from(weights));
    expect(() => parseLegacyImatrix(new Uint8Array(dat.buffer).subarray(0, 30), 'cut.dat')).toThrow(/^cut\.dat: /);
    // GGUF format: <name>.in_sum2 [columns, matrices] and <name>.counts [1, matrices].
    const f32 = ggmlTypeByName('F32')!;
    await writeGguf(
      join(dir, 'imatrix.gguf'),
      {
        kvs: [{ key: 'general.type', type: GgufType.STRING, value: 'imatrix' }],
        tensors: [
          { name: `${name}.in_sum2`, type: f32, ne: [256, 1] },
          { name: `${name}.counts`, type: f32, ne: [1, 1] },
        ],
      },
      (i) => [new Uint8Array((i === 0 ? weights.map((w) => w * 8) : Float32Array.of(8)).buffer)],
    );
    expect(Array.from(loadImatrix(join(dir, 'imatrix.gguf')).get(name)!)).toEqual(Array.from(weights));
    const plain = await quantizeFile(model, join(dir, 'plain.gguf'), 'Q4_0', { pure: true });
    const weighted = await quantizeFile(model, join(dir, 'weighted.gguf'), 'Q4_0', { pure: true, imatrix: legacy });
    const rmse = (r: typeof plain) => r.tensors.find((t) => t.name === name)!.rmse;
    // Precision moves to the heavily weighted columns, so the plain error over all columns rises.
    expect(rmse(weighted)).not.toBe(rmse(plain));
  });
});
