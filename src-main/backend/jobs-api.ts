import type { JobsApi } from '../../src-preload/api';
import type { BackendContext } from './context';

export function createJobsApi(ctx: BackendContext): JobsApi {
  return {
    async listJobs() {
      return ctx.jobs.list();
    },
    async cancelJob(id) {
      ctx.jobs.cancel(id);
    },
  };
}
