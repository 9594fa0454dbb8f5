/**
 * Teacher-forced evaluation of one window for perplexity and KL divergence, inside the engine
 * process: full distributions never cross the IPC channel. The engine turns each scored
 * position's logits into log-probabilities itself and answers with a few numbers per position.
 *
 * For KL divergence a base model's run writes its log-probabilities (f32, `vocab` per scored
 * position, in order) to a file the host names; the compared model's run reads them back one
 * position at a time, so memory stays bounded whatever the text's length.
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { comparePosition, logSoftmax, type WindowComparison, type WindowScores } from '../core/quality/divergence';
import { EngineError, type Engine } from './engine';
import type { LogProbsFile } from '../engine-wire/protocol';

export interface EvaluateOptions {
  /** Token ids, evaluated from position 0 with an empty KV cache. */
  ids: readonly number[];
  /** The logits at positions first … ids.length−2 are scored (each predicts the next id). */
  first: number;
  /** Write the scored positions' log-probabilities here (the file must exist). */
  saveLogProbs?: LogProbsFile;
  /** Compare with a base model's log-probabilities saved here by `saveLogProbs`. */
  baseLogProbs?: LogProbsFile;
}

export async function evaluateWindow(engine: Engine, options: EvaluateOptions): Promise<WindowScores> {
  const model = engine.model;
  if (!model) throw new EngineError('no model loaded');
  const { ids, first } = options;
  const count = ids.length - 1 - first;
  if (!Number.isSafeInteger(first) || first < 0 || count < 1) {
    throw new EngineError(`evaluate: first must be a position from 0 to ${ids.length - 2}, not ${first}`);
  }
  const vocab = model.vocab;
  const bytesPerPosition = vocab * 4;
  const save = options.saveLogProbs ? openSync(options.saveLogProbs.path, 'r+') : null;
  let base: number | null = null;
  try {
    if (options.baseLogProbs) {
      base = openSync(options.baseLogProbs.path, 'r');
      const needed = (options.baseLogProbs.position + count) * bytesPerPosition;
      const size = fstatSync(base).size;
      if (size < needed) {
        throw new EngineError(
          `${options.baseLogProbs.path}: holds ${size} bytes of log-probabilities, this window needs ${needed} (a base model with another vocabulary than ${vocab} tokens?)`,
        );
      }
    }
    const nll: number[] = [];
    const comparison: WindowComparison = { kl: [], sameTop: [], deltaP: [], deltaPNext: [] };
    const logProbs = new Float64Array(vocab);
    const stored = new Float32Array(vocab);
    const storedBytes = new Uint8Array(stored.buffer);
    await engine.logits(ids, (logits, index) => {
      if (index < first || index >= ids.length - 1) return;
      const next = ids[index + 1]!;
      logSoftmax(logits, logProbs);
      nll.push(-logProbs[next]!);
      const k = index - first;
      if (save !== null) {
        stored.set(logProbs);
        writeFully(save, storedBytes, (options.saveLogProbs!.position + k) * bytesPerPosition);
      }
      if (base !== null) {
        readFully(base, storedBytes, (options.baseLogProbs!.position + k) * bytesPerPosition);
        const c = comparePosition(stored, logProbs, next);
        comparison.kl.push(c.kl);
        comparison.sameTop.push(c.sameTop);
        comparison.deltaP.push(c.deltaP);
        comparison.deltaPNext.push(c.deltaPNext);
      }
    });
    return base !== null ? { nll, comparison } : { nll };
  } finally {
    if (save !== null) closeSync(save);
    if (base !== null) closeSync(base);
  }
}

function writeFully(fd: number, bytes: Uint8Array, position: number): void {
  for (let done = 0; done < bytes.length;) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}

function readFully(fd: number, bytes: Uint8Array, position: number): void {
  for (let done = 0; done < bytes.length;) {
    const n = readSync(fd, bytes, done, bytes.length - done, position + done);
    if (n === 0) throw new EngineError(`log-probabilities end early at byte ${position + done}`);
    done += n;
  }
}
