import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isDriverNoise } from '../../src-main/engine-wire/driver-noise';
import { LAVAPIPE_ICD } from '../../src-main/engine/gpu/software-driver';
import { REPO_ROOT, STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

/** Runs `gufo` with exactly this process's environment changed by `set` and without `unset`. */
function gufoWith(args: string[], set: NodeJS.ProcessEnv, unset: string[] = []) {
  const env = { ...process.env, ...set };
  for (const name of unset) delete env[name];
  return spawnSync(process.execPath, [join(REPO_ROOT, 'bin/gufo.mjs'), ...args], {
    encoding: 'utf8',
    env,
    timeout: 280_000,
  });
}

/** The shortest GPU command: load, then one token. */
const RUN = ['run', STORIES_260K, '--prompt', 'Once', '-n', '1', '--json'];

describe('GPU adapter choice and driver output', () => {
  it('gufo run prints no driver start-up noise on stderr', () => {
    const r = gufoWith(RUN, {}, ['XDG_RUNTIME_DIR']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/XDG_RUNTIME_DIR/);
    expect(r.stderr).not.toMatch(/artificially reduced/);
  }, 300_000);

  it('keeps real driver warnings', () => {
    expect(isDriverNoise('XDG_RUNTIME_DIR is invalid or not set in the environment.')).toBe(true);
    expect(
      isDriverNoise(
        'Warning: maxDynamicStorageBuffersPerPipelineLayout artificially reduced from 1000000 to 16 to fit dynamic offset allocation limit.',
      ),
    ).toBe(true);
    expect(isDriverNoise('Warning: vkCreateInstance: Found no drivers!')).toBe(false);
    expect(
      isDriverNoise(
        'Error: Loader Message: setup_loader_term_phys_devs:  Failed to detect any valid GPUs in the current config',
      ),
    ).toBe(false);
  });

  it('without a driver the Vulkan loader finds, picks lavapipe by itself and says "software GPU: slow"', () => {
    // The loader searches XDG_DATA_DIRS and XDG_CONFIG_DIRS for drivers: empty folders hide every installed one.
    const empty = tempDir();
    const r = gufoWith(RUN, { XDG_DATA_DIRS: empty, XDG_CONFIG_DIRS: empty }, ['VK_ICD_FILENAMES', 'VK_DRIVER_FILES']);
    expect(r.status, r.stderr).toBe(0);
    expect(LAVAPIPE_ICD).toContain('lvp');
    expect((JSON.parse(r.stdout) as { adapter: { name: string } }).adapter.name).toMatch(/llvmpipe/);
    expect(r.stderr).toMatch(/^software GPU: slow \(llvmpipe/m);
  }, 300_000);

  it('an explicit VK_ICD_FILENAMES wins: no other driver is tried behind its back', () => {
    const r = gufoWith(RUN, { VK_ICD_FILENAMES: join(tempDir(), 'missing_icd.json') });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/no WebGPU adapter found/);
  }, 300_000);
});
