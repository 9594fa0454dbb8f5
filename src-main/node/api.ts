import type { AppMode, GufoApi } from '../../src-preload/api';
// Named import: bundles only the version, not the whole package.json.
import { version } from '../../package.json';

/**
 * The back end of GufoApi. One implementation, bound to the UI both by Electron IPC
 * (src-main/app) and by HTTP in browser mode (src-main/node/server).
 */
export function createGufoApi(mode: AppMode): GufoApi {
  return {
    async appInfo() {
      return {
        name: 'Gufo',
        version,
        mode,
        platform: process.platform,
        node: process.versions.node,
      };
    },
  };
}

type ApiMethod = (...args: unknown[]) => Promise<unknown>;

/**
 * The method of `api` called `name`, or undefined. Bindings look methods up by names that come
 * from outside (an IPC channel, a URL), so only the object's own functions count: never
 * `constructor`, `toString` or anything else inherited.
 */
export function findApiMethod(api: GufoApi, name: string): ApiMethod | undefined {
  if (!Object.hasOwn(api, name)) return undefined;
  const method: unknown = api[name as keyof GufoApi];
  return typeof method === 'function' ? (method.bind(api) as ApiMethod) : undefined;
}
