import type { ExportApi } from '../../src-preload/api';
import type { BackendContext } from './context';

export function createExportApi(ctx: BackendContext): ExportApi {
  void ctx;
  // Written in parallel by its owner; until then its methods are missing.
  return {} as never;
}
