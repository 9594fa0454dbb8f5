/** The GPU adapter the engine uses, asked of the back end once per view (it asks the engine once). */
import type { GpuAdapterState, GufoApi } from '../../src-preload/api';
import { messageOf } from './format';

export type GpuAdapterView = { status: 'loading' } | GpuAdapterState | { status: 'error'; message: string };

export class GpuAdapterStore {
  state: GpuAdapterView = $state({ status: 'loading' });

  constructor(api: GufoApi) {
    // The first call starts an engine and opens the GPU: seconds on a software driver.
    void api.gpuAdapter().then(
      (state) => (this.state = state),
      (err: unknown) => (this.state = { status: 'error', message: messageOf(err) }),
    );
  }
}
