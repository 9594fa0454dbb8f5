/**
 * A one-line progress bar on stderr, redrawn in place, shown only when stderr is a terminal
 * (logs and pipes get no control characters).
 */
export function progressBar(label: string): { update(fraction: number, detail: string): void; done(): void } {
  const tty = process.stderr.isTTY;
  let last = '';
  return {
    update(fraction, detail) {
      if (!tty) return;
      const width = 30;
      const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
      const columns = process.stderr.columns || 80;
      const line =
        `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ${detail}`.slice(
          0,
          columns - 1,
        );
      if (line !== last) process.stderr.write(`\r${line.padEnd(last.length)}`);
      last = line;
    },
    /** Ends the line (once: a second call writes nothing). */
    done() {
      if (tty && last) process.stderr.write('\n');
      last = '';
    },
  };
}

/** An AbortSignal fired by Ctrl-C (SIGINT) or SIGTERM, so long work stops cleanly. */
export function interruptSignal(): AbortSignal {
  const controller = new AbortController();
  const stop = () => controller.abort(new Error('cancelled'));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return controller.signal;
}
