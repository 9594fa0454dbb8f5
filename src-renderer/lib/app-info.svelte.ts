import type { AppInfo, GufoApi } from '../../src-preload/api';

export type AppInfoState =
  | { status: 'loading' }
  | { status: 'ready'; info: AppInfo }
  | { status: 'error'; message: string };

/** What the back end says about itself, loaded once at startup. */
export class AppInfoStore {
  state: AppInfoState = $state({ status: 'loading' });
  readonly #api: GufoApi;

  constructor(api: GufoApi) {
    this.#api = api;
  }

  async load(): Promise<void> {
    try {
      this.state = { status: 'ready', info: await this.#api.appInfo() };
    } catch (err) {
      this.state = { status: 'error', message: err instanceof Error ? err.message : String(err) };
    }
  }
}
