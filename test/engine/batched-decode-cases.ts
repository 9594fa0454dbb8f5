/**
 * Generations in several slots at once share their decode steps (one submission: the matmuls over
 * all rows, the attention per row over its slot's cache) and give the tokens each gives alone:
 * greedy and seeded sampling, one joining while the others run, one cancelled midway. Run on the
 * test adapter (batched-decode.test.ts) and on lavapipe (batched-decode-lavapipe.test.ts), whose
 * batched steps take their own mat-vec (MatmulKernels.batchMatvec).
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Engine, GenerateOptions } from '../../src-main/engine/engine';
import { MatmulKernels } from '../../src-main/engine/gpu/matmul';
import { DecoderModel } from '../../src-main/engine/model/decoder';
import { STORIES_260K } from '../support/paths';
import { STORIES_GREEDY, STORIES_PROMPT } from './stories-fixture';

const REQUESTS: { prompt: number[]; options: GenerateOptions }[] = [
  { prompt: STORIES_PROMPT, options: { maxTokens: 24, stop: [] } },
  { prompt: [1, 300, 301, 302, 303, 304, 305], options: { maxTokens: 12, stop: [] } },
  {
    prompt: [...STORIES_PROMPT, ...STORIES_GREEDY.slice(0, 9)],
    options: { maxTokens: 20, stop: [], sampling: { temperature: 0.9, topK: 40, seed: 11 } },
  },
];

/**
 * The batched decode tests on `open()`'s engine (closed after the file's tests); `batchMatvec`:
 * whether its batched steps take the batched mat-vec (the kernels a load with slots builds).
 */
export function describeBatchedDecode(open: () => Promise<Engine>, batchMatvec: boolean): void {
  let engine: Engine;
  afterAll(() => engine?.destroy());

  describe('batched decode across slots', () => {
    it('gives each generation the tokens it gets alone, a late one joining the running batch', async () => {
      engine = await open();
      const sources = vi.spyOn(MatmulKernels.prototype, 'source');
      try {
        await engine.load(STORIES_260K, { ctx: 96, slots: 4 });
        expect(sources.mock.calls.some(([variant]) => variant.kernel === 'batchvec')).toBe(batchMatvec);
      } finally {
        sources.mockRestore();
      }
      const alone: number[][] = [];
      for (const { prompt, options } of REQUESTS) alone.push((await engine.generate(prompt, options)).ids);
      expect(alone[0]).toEqual(STORIES_GREEDY.slice(0, 24));
      engine.resetCache();

      const setRows = vi.spyOn(DecoderModel.prototype, 'setRows');
      try {
        let late: Promise<number[]> | undefined;
        const [first, second] = await Promise.all([
          engine.generate(REQUESTS[0]!.prompt, {
            ...REQUESTS[0]!.options,
            // The third starts while the first two decode: it prefills between two steps, then joins.
            onToken: (_, i) => {
              if (i === 4) late = engine.generate(REQUESTS[2]!.prompt, REQUESTS[2]!.options).then((r) => r.ids);
            },
          }),
          engine.generate(REQUESTS[1]!.prompt, REQUESTS[1]!.options),
        ]);
        expect([first.ids, second.ids, await late]).toEqual(alone);
        const widths = setRows.mock.calls.map(([rows]) => rows.length);
        expect(widths).toContain(2);
        expect(widths).toContain(3);
      } finally {
        setRows.mockRestore();
      }
    });

    it('ends a cancelled generation at once and leaves the others their whole answers', async () => {
      engine.resetCache();
      const cancel = new AbortController();
      const [a, b, c] = await Promise.all([
        engine.generate(REQUESTS[0]!.prompt, REQUESTS[0]!.options),
        engine.generate(REQUESTS[1]!.prompt, {
          ...REQUESTS[1]!.options,
          maxTokens: 40,
          signal: cancel.signal,
          onToken: (_, i) => i === 2 && cancel.abort(),
        }),
        engine.generate(REQUESTS[2]!.prompt, REQUESTS[2]!.options),
      ]);
      expect(b.stopReason).toBe('cancelled');
      expect(b.ids).toHaveLength(3);
      expect(a.ids).toEqual(STORIES_GREEDY.slice(0, 24));
      expect(c.ids).toHaveLength(20);
      // The cancelled one's slot serves the next request.
      const again = await engine.generate(REQUESTS[1]!.prompt, REQUESTS[1]!.options);
      expect(again.ids).toHaveLength(12);
    });
  });
}
