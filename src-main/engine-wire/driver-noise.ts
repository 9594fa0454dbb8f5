/**
 * Lines the GPU stack prints on every start that tell the user nothing they can act on. The
 * engine's stderr reaches the user through a filter that leaves these out and keeps every other
 * line (real driver warnings and errors included).
 */
import { createInterface } from 'node:readline';

const DRIVER_NOISE: readonly RegExp[] = [
  // libwayland-client (linked by Mesa's Vulkan drivers) on a machine without a desktop session.
  /^XDG_RUNTIME_DIR is invalid or not set/,
  // Dawn lowering limits of dynamic-offset buffers, which Gufo does not use.
  /artificially reduced from \d+ to \d+ to fit dynamic offset allocation limit/,
];

export function isDriverNoise(line: string): boolean {
  return DRIVER_NOISE.some((pattern) => pattern.test(line));
}

/** Copies `from` (a child process's or Electron utility process's stderr) to `to` line by line, leaving out driver noise. */
export function forwardWithoutDriverNoise(from: NodeJS.ReadableStream, to: NodeJS.WritableStream): void {
  createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) => {
    if (!isDriverNoise(line)) to.write(`${line}\n`);
  });
}
