import type { LibraryApi } from '../../src-preload/api';
import type { BackendContext } from './context';

export function createLibraryApi(ctx: BackendContext): LibraryApi {
  void ctx;
  // Written in parallel by its owner; until then its methods are missing.
  return {} as never;
}
