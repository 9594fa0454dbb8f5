/**
 * Requests per model, up to `parallel` at once (the sequences the engine keeps per model, stepped
 * together), the rest waiting in the order they came; waiting here rather than in the engine pool
 * also keeps one model from being loaded into two engines at once. A model with too many requests
 * refuses more with a 503.
 */
import { OpenAiError } from './errors';

export class ModelQueues {
  /** Requests waiting or running, per model. */
  readonly #depth = new Map<string, number>();
  readonly #running = new Map<string, number>();
  /** Per model, the turns of the requests waiting, first come first. */
  readonly #waiting = new Map<string, (() => void)[]>();

  /**
   * `maxDepth`: requests a model may have waiting or running; `onDepth` hears of every change of
   * that number; `parallel`: requests of one model that run at once.
   */
  constructor(
    private readonly maxDepth: () => number,
    private readonly onDepth: (model: string, depth: number) => void = () => {},
    private readonly parallel: () => number = () => 1,
  ) {}

  /** Runs `work` once fewer than `parallel` requests for `model` run and none came before it waiting. */
  async run<T>(model: string, work: () => T | Promise<T>): Promise<T> {
    const depth = this.#depth.get(model) ?? 0;
    if (depth >= this.maxDepth()) {
      throw new OpenAiError(
        503,
        'server_error',
        'overloaded',
        `the model "${model}" has ${depth} requests waiting or running, as many as Gufo queues; try again later`,
      );
    }
    this.#setDepth(model, depth + 1);
    try {
      await this.#turn(model);
      try {
        return await work();
      } finally {
        this.#leave(model);
      }
    } finally {
      this.#setDepth(model, (this.#depth.get(model) ?? 1) - 1);
    }
  }

  #turn(model: string): Promise<void> {
    const running = this.#running.get(model) ?? 0;
    const waiting = this.#waiting.get(model);
    if (running < Math.max(1, this.parallel()) && !waiting) {
      this.#running.set(model, running + 1);
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      if (waiting) waiting.push(resolve);
      else this.#waiting.set(model, [resolve]);
    });
  }

  /** A request ended: the first one waiting takes its place. */
  #leave(model: string): void {
    const waiting = this.#waiting.get(model);
    const next = waiting?.shift();
    if (waiting?.length === 0) this.#waiting.delete(model);
    if (next) return next();
    const running = (this.#running.get(model) ?? 1) - 1;
    if (running > 0) this.#running.set(model, running);
    else this.#running.delete(model);
  }

  #setDepth(model: string, depth: number): void {
    if (depth > 0) this.#depth.set(model, depth);
    else this.#depth.delete(model);
    this.onDepth(model, depth);
  }
}
