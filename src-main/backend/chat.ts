import type { ChatApi } from '../../src-preload/api';
import type { BackendContext } from './context';

export function createChatApi(ctx: BackendContext): ChatApi {
  void ctx;
  // Written in parallel by its owner; until then its methods are missing.
  return {} as never;
}
