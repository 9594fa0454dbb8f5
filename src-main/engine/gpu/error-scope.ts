/**
 * WebGPU reports a failed allocation or an invalid command only to an error scope; outside one,
 * Dawn prints it as an uncaptured error and the work goes on with an invalid buffer or command
 * buffer, whose results are garbage. The engine's allocations and submissions, at load and at
 * generate time, run inside an out-of-memory and a validation scope, so such a failure becomes one
 * error saying what was being done.
 */

export class GpuError extends Error {
  override readonly name = 'GpuError';
}

/** Opens the two scopes; popScopes closes them. Nothing else may push or pop in between. */
export function pushScopes(device: GPUDevice): void {
  device.pushErrorScope('validation');
  device.pushErrorScope('out-of-memory');
}

/** Closes pushScopes' scopes: a GpuError naming `what` if either caught an error. */
export async function popScopes(device: GPUDevice, what: string): Promise<void> {
  const [oom, invalid] = await Promise.all([device.popErrorScope(), device.popErrorScope()]);
  // Dawn's message goes on with the call stack of its objects: its first line says what failed.
  if (oom) throw new GpuError(`out of GPU memory ${what}: ${oom.message.split('\n')[0]}`);
  if (invalid) throw new GpuError(`GPU error ${what}: ${invalid.message.split('\n')[0]}`);
}

/**
 * Runs `work` inside the scopes, closed either way. Their error wins over one `work` throws: a
 * failed allocation is the cause of what fails after it.
 */
export async function scoped<T>(device: GPUDevice, what: string, work: () => Promise<T>): Promise<T> {
  pushScopes(device);
  let result: T;
  try {
    result = await work();
  } catch (err) {
    await popScopes(device, what);
    throw err;
  }
  await popScopes(device, what);
  return result;
}
