import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MODULES, generatedPath, generatedSource } from '../../../scripts/build-wasm.mjs';

describe('the committed WebAssembly modules are built from their sources', () => {
  for (const name of MODULES) {
    it(`${generatedPath(name)} matches assembly/${name}.ts`, async () => {
      const committed = readFileSync(generatedPath(name), 'utf8');
      expect(
        committed === (await generatedSource(name)),
        `${generatedPath(name)} is stale: run npm run build:wasm`,
      ).toBe(true);
    });
  }
});
