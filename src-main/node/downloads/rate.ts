/**
 * A transfer's recent speed: bytes per second as an exponential moving average over samples at
 * least a quarter second apart, so the speed shown neither jumps with every chunk nor lags for
 * minutes behind a change; and the time left at that speed.
 */

const MIN_INTERVAL_MS = 250;
/** Weight of the newest interval: about the last 5 seconds count. */
const SMOOTHING = 0.05;

export class RateMeter {
  #last: { time: number; bytes: number } | null = null;
  #rate: number | null = null;

  /** Records that `bytes` are done at `now`. */
  sample(bytes: number, now = Date.now()): void {
    if (this.#last === null || bytes < this.#last.bytes) {
      this.#last = { time: now, bytes };
      return;
    }
    const elapsed = now - this.#last.time;
    if (elapsed < MIN_INTERVAL_MS) return;
    const rate = ((bytes - this.#last.bytes) * 1000) / elapsed;
    const weight = 1 - Math.pow(1 - SMOOTHING, elapsed / MIN_INTERVAL_MS);
    this.#rate = this.#rate === null ? rate : this.#rate + weight * (rate - this.#rate);
    this.#last = { time: now, bytes };
  }

  get bytesPerSecond(): number | null {
    return this.#rate;
  }

  /** Seconds until `total` at the current speed; null when either is unknown or nothing moves. */
  etaSeconds(bytes: number, total: number | null): number | null {
    if (total === null || this.#rate === null || this.#rate <= 0) return null;
    return Math.max(0, (total - bytes) / this.#rate);
  }
}
