import type { JobsApi } from '../../src-preload/api';
import type { BackendContext } from './context';
import { promised } from './promised';

export function createJobsApi(ctx: BackendContext): JobsApi {
  return promised<JobsApi>({
    listJobs() {
      return ctx.jobs.list();
    },
    cancelJob(id) {
      ctx.jobs.cancel(id);
    },
  });
}
