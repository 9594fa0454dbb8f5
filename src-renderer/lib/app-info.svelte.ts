import { getContext, setContext } from 'svelte';
import type { AppInfo, GufoApi } from '../../src-preload/api';
import { messageOf } from './format';

export type AppInfoState =
  { status: 'loading' } | { status: 'ready'; info: AppInfo } | { status: 'error'; message: string };

/** What the back end says about itself, loaded once at startup, with its startup notices. */
export class AppInfoStore {
  state: AppInfoState = $state({ status: 'loading' });
  /** Notices the user has closed, for this session. */
  #dismissed: string[] = $state([]);
  readonly #api: GufoApi;

  /** Startup notices still on show. */
  readonly notices: string[] = $derived(
    this.state.status === 'ready' ? this.state.info.notices.filter((n) => !this.#dismissed.includes(n)) : [],
  );

  constructor(api: GufoApi) {
    this.#api = api;
  }

  async load(): Promise<void> {
    try {
      this.state = { status: 'ready', info: await this.#api.appInfo() };
    } catch (err) {
      this.state = { status: 'error', message: messageOf(err) };
    }
  }

  dismiss(notice: string): void {
    this.#dismissed.push(notice);
  }
}

const APP_INFO = Symbol('app-info');

/** Shares the app info with every component below the caller (the app shell). */
export function provideAppInfo(store: AppInfoStore): void {
  setContext(APP_INFO, store);
}

export function useAppInfo(): AppInfoStore {
  const store = getContext<AppInfoStore | undefined>(APP_INFO);
  if (!store) throw new Error('useAppInfo() outside <AppShell>');
  return store;
}
