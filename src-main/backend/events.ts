import type { GufoEvent, GufoEventListener } from '../../src-preload/api';

/** Fans the back end's events out to every binding (IPC windows, SSE clients, tests). */
export class EventHub {
  readonly #listeners = new Set<GufoEventListener>();

  subscribe(listener: GufoEventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(event: GufoEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (err) {
        // One broken listener (a closed window) must not stop the others.
        console.error('gufo: an event listener failed:', err);
      }
    }
  }
}
