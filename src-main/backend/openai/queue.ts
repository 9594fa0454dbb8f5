/**
 * Requests per model, one at a time, in the order they came (the engine serves one generation at a
 * time; waiting here rather than in the engine pool also keeps one model from being loaded into
 * two engines at once). A model with too many requests refuses more with a 503.
 */
import { OpenAiError } from './errors';

export class ModelQueues {
  readonly #tails = new Map<string, Promise<unknown>>();
  /** Requests waiting or running, per model. */
  readonly #depth = new Map<string, number>();

  /**
   * `maxDepth`: requests a model may have waiting or running; `onDepth` hears of every change of
   * that number.
   */
  constructor(
    private readonly maxDepth: () => number,
    private readonly onDepth: (model: string, depth: number) => void = () => {},
  ) {}

  /** Runs `work` after every request for `model` queued before it. */
  run<T>(model: string, work: () => T | Promise<T>): Promise<T> {
    const depth = this.#depth.get(model) ?? 0;
    if (depth >= this.maxDepth()) {
      return Promise.reject(
        new OpenAiError(
          503,
          'server_error',
          'overloaded',
          `the model "${model}" has ${depth} requests waiting or running, as many as Gufo queues; try again later`,
        ),
      );
    }
    this.#setDepth(model, depth + 1);
    const result = (this.#tails.get(model) ?? Promise.resolve()).then(work);
    const tail: Promise<void> = result.then(
      () => this.#done(model, tail),
      () => this.#done(model, tail),
    );
    this.#tails.set(model, tail);
    return result;
  }

  #done(model: string, tail: Promise<unknown>): void {
    this.#setDepth(model, (this.#depth.get(model) ?? 1) - 1);
    if (this.#tails.get(model) === tail) this.#tails.delete(model);
  }

  #setDepth(model: string, depth: number): void {
    if (depth > 0) this.#depth.set(model, depth);
    else this.#depth.delete(model);
    this.onDepth(model, depth);
  }
}
