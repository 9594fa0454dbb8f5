/** Data the inspector asks the back end for, with its error and whether a request is on its way. */
import { messageOf } from './format';

/** One request's answer or error; a newer request wins over a slower older one. */
export class Loadable<T> {
  value: T | null = $state(null);
  error: string | null = $state(null);
  loading = $state(false);
  #latest = 0;

  async load(request: () => Promise<T>): Promise<void> {
    const ticket = ++this.#latest;
    this.loading = true;
    try {
      const value = await request();
      if (ticket === this.#latest) [this.value, this.error] = [value, null];
    } catch (err) {
      if (ticket === this.#latest) this.error = messageOf(err);
    } finally {
      if (ticket === this.#latest) this.loading = false;
    }
  }

  /** Loads once: later calls keep what the first one got. */
  ensure(request: () => Promise<T>): void {
    if (this.value === null && !this.loading) void this.load(request);
  }
}
