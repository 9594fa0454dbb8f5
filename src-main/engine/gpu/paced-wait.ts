/**
 * Waiting for the GPU without taking a CPU adapter's cores. The webgpu package settles mapAsync
 * and onSubmittedWorkDone by polling Dawn from setImmediate, so Node's main thread spins for the
 * whole wait. On a GPU that costs a core nobody else needs; on a CPU adapter (lavapipe,
 * SwiftShader) it is one of the cores the driver's own threads run the kernels on. A paced wait
 * first sleeps through most of the shortest of the last few waits of its kind, then polls for the
 * rest with a nap between polls: a kind is one shape of work (a decode step of so many rows, a
 * prompt chunk of so many tokens), which only gets slower as the context fills, so the sleep does
 * not outlast the work. Recent waits rather than all: one that found its work already done (the
 * host was busy) would otherwise end the pacing for good.
 */

/** The share of the shortest wait slept: the rest is polled. */
const SLEPT_SHARE = 0.75;
/** The waits of a kind remembered. */
const RECENT = 8;
/**
 * Shorter sleeps are not taken: a timer wakes a millisecond or so late, and then waits for a core
 * the driver's threads hold, which lavapipe's 3 ms stories260K steps cannot afford (about 10% of
 * their speed). Longer ones pay even where the machine has no core to spare: SwiftShader's 8 ms
 * steps of the same model, beside a second decode on 2 cores, run 1.8 times as fast with them.
 */
const MIN_SLEEP_MS = 3;
/**
 * The polls after a sleep are NAP_MS apart (the thread blocked, not spinning, in between): polled
 * back to back, they took a core from the driver's threads for the last quarter of every wait and
 * more (a wait longer than its kind's shortest), which cost lavapipe a fifth of its decode speed at
 * depth 2048 and half its attention kernel's speed at 16k keys (2026-12-07). Waits too short to
 * sleep through poll back to back as before: a nap's wake-up costs more than lavapipe's 3 ms
 * stories260K steps can spare (a fifth of their speed).
 */
const NAP_MS = 0.5;
/**
 * A wait whose work was done within this long of the sleep's end had finished during the sleep: it
 * says only that the work took less than the sleep.
 */
const DONE_MS = 1;

/**
 * GUFO_PACED_WAITS=0|1: whether waits are paced (benches compare both); unset: on CPU adapters
 * only, where the cores matter more than a GPU's last fraction of a millisecond.
 */
export function pacesWaits(isFallbackAdapter: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.GUFO_PACED_WAITS;
  if (v === '0' || v === '1') return v === '1';
  if (v) throw new Error(`GUFO_PACED_WAITS=${v} is not 0 or 1`);
  return isFallbackAdapter;
}

export class PacedWait {
  /** The last RECENT waits of each kind, in milliseconds. */
  private readonly recent = new Map<string, number[]>();

  constructor(private readonly paced: boolean) {}

  /** `settle()`'s promise, started after a sleep of most of the shortest recent wait of `kind`. */
  async wait<T>(kind: string, settle: () => Promise<T>): Promise<T> {
    if (!this.paced) return settle();
    const began = performance.now();
    let recent = this.recent.get(kind);
    if (!recent) this.recent.set(kind, (recent = []));
    const ms = recent.length > 0 ? SLEPT_SHARE * Math.min(...recent) : 0;
    const slept = ms >= MIN_SLEEP_MS;
    if (slept) await sleep(ms);
    const polled = performance.now();
    const result = await (slept ? napping(settle) : settle());
    const ended = performance.now();
    // Work done during the sleep took less than it, by how much is unknown: half of it is kept, so
    // that one long wait (a busy host, a driver compiling) is outgrown in a few steps instead of
    // setting every later sleep of its kind, each a quarter shorter than the last.
    recent.push(slept && ended - polled < DONE_MS ? (ended - began) / 2 : ended - began);
    if (recent.length > RECENT) recent.shift();
    return result;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const napCell = new Int32Array(new SharedArrayBuffer(4));

/**
 * `settle()`'s promise, with the thread blocked for NAP_MS at each turn of the event loop until it
 * settles: the package's setImmediate poll runs once a turn, so it polls every NAP_MS instead of
 * without pause. Timers and I/O still run between naps.
 */
function napping<T>(settle: () => Promise<T>): Promise<T> {
  let pending = true;
  const settled = settle().finally(() => (pending = false));
  const nap = () => {
    if (!pending) return;
    Atomics.wait(napCell, 0, 0, NAP_MS);
    setImmediate(nap);
  };
  setImmediate(nap);
  return settled;
}
