import type { BenchApi } from '../../src-preload/api';
import type { BackendContext } from './context';

export function createBenchApi(ctx: BackendContext): BenchApi {
  void ctx;
  // Written in parallel by its owner; until then its methods are missing.
  return {} as never;
}
