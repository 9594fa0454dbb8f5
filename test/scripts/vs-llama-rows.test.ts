/** `npm run bench:vs-llama`'s arithmetic and table: medians per engine, ratios to llama.cpp's medians. */
import { describe, expect, it } from 'vitest';
import { median, vsLlamaRows, vsLlamaTable, type Measured } from '../../scripts/bench/vs-llama-rows';

const lavapipe: Measured = {
  adapter: 'lavapipe',
  device: 'llvmpipe: Mesa 25.0.7',
  runs: [
    { prefillTokS: 10, decodeTokS: 1.5, rooflineFraction: 0.04, dispatchesPerToken: 54 },
    { prefillTokS: 30, decodeTokS: 0.5, rooflineFraction: 0.01, dispatchesPerToken: 54 },
    { prefillTokS: 20, decodeTokS: 1, rooflineFraction: 0.03, dispatchesPerToken: 54 },
  ],
};
const llama: Measured = {
  adapter: 'cpu',
  device: 'CPU, 2 threads',
  runs: [
    { prefillTokS: 40, decodeTokS: 4 },
    { prefillTokS: 45, decodeTokS: 100 },
    { prefillTokS: 1, decodeTokS: 5 },
  ],
};

describe('bench:vs-llama rows', () => {
  it('takes the middle value, or the mean of the middle two', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow(/no values/);
  });

  it('gives each engine the median of its runs and its ratio to llama.cpp’s medians, not to one run', () => {
    const [gufo, cpu] = vsLlamaRows('335mb-Q4_K_M.gguf', [lavapipe], llama);
    expect(gufo).toEqual({
      engine: 'gufo',
      adapter: 'lavapipe',
      device: 'llvmpipe: Mesa 25.0.7',
      model: '335mb-Q4_K_M.gguf',
      runs: 3,
      prefillTokS: 20,
      decodeTokS: 1,
      prefillVsLlama: 0.5,
      decodeVsLlama: 0.2,
      rooflineFraction: 0.03,
      dispatchesPerToken: 54,
    });
    expect(cpu).toMatchObject({
      engine: 'llama.cpp',
      prefillTokS: 40,
      decodeTokS: 5,
      prefillVsLlama: 1,
      decodeVsLlama: 1,
      rooflineFraction: null,
      dispatchesPerToken: null,
    });
  });

  it('prints one line per engine with the ratios, the roofline as a percentage, and what each ran on', () => {
    const table = vsLlamaTable(vsLlamaRows('m.gguf', [lavapipe], llama)).split('\n');
    expect(table[0]).toMatch(
      /^engine\s+adapter\s+model\s+prefill tok\/s\s+decode tok\/s\s+prefill ×llama\s+decode ×llama\s+roofline\s+dispatches\/token$/,
    );
    expect(table[1]!.split(/\s+/)).toEqual([
      'gufo',
      'lavapipe',
      'm.gguf',
      '20.0',
      '1.00',
      '0.50×',
      '0.20×',
      '3.0%',
      '54',
    ]);
    expect(table[2]!.split(/\s+/)).toEqual(['llama.cpp', 'cpu', 'm.gguf', '40.0', '5.00', '1.00×', '1.00×']);
    expect(table).toContain('lavapipe: llvmpipe: Mesa 25.0.7, median of 3 runs');
    expect(table).toContain('cpu: CPU, 2 threads, median of 3 runs');
  });
});
