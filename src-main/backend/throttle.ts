/**
 * Passes on the latest of a stream of values at most once per interval: the first at once, the
 * ones in between dropped but for the newest, which goes out when the interval is over (so the
 * last value before a pause always shows). For progress that must not flood the UI.
 */
export class Throttle<T> {
  #lastSent = 0;
  #latest: { value: T } | null = null;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly send: (value: T) => void,
  ) {}

  push(value: T): void {
    this.#latest = { value };
    const wait = this.#lastSent + this.intervalMs - Date.now();
    if (wait <= 0) this.#flush();
    else this.#timer ??= setTimeout(() => this.#flush(), wait);
  }

  /** Drops the value waiting to go out (the work it reports has ended). */
  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#latest = null;
  }

  #flush(): void {
    this.#timer = undefined;
    const latest = this.#latest;
    if (!latest) return;
    this.#latest = null;
    this.#lastSent = Date.now();
    this.send(latest.value);
  }
}
