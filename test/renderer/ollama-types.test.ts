import { describe, expect, it } from 'vitest';
import type { ExportTypeOption } from '../../src-preload/api';
import { ollamaDefaultContext } from '../../src-preload/api';
import { ollamaTypeChoices } from '../../src-renderer/lib/ollama-types';

const option = (fileType: string, patch: Partial<ExportTypeOption>) => ({ fileType, ...patch }) as ExportTypeOption;

describe('Send to Ollama choices', () => {
  it('offers the IQ types, disabled with the reason, while no importance matrix is chosen', () => {
    const choices = ollamaTypeChoices([
      option('Q4_K_M', { unavailable: null, needsImatrix: false }),
      option('IQ2_XXS', { unavailable: 'IQ2_XXS needs an importance matrix', needsImatrix: true }),
      option('Q9', { unavailable: 'no codec', needsImatrix: false }),
    ]);
    expect(choices.map((c) => c.fileType)).toEqual(['Q4_K_M', 'IQ2_XXS']);
    expect(choices[0]!.disabled).toBeNull();
    expect(choices[1]!.disabled).toContain('needs an importance matrix');
  });

  it("names the model's trained context as num_ctx's default, up to 8192", () => {
    expect(ollamaDefaultContext(2048)).toBe(2048);
    expect(ollamaDefaultContext(131072)).toBe(8192);
    expect(ollamaDefaultContext(null)).toBe(8192);
  });
});
