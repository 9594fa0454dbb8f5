/**
 * The OpenAI-compatible server as the app sees it: its settings and status. The API itself is in
 * openai/: served on the UI's port by `gufo serve`, and on a listener of its own when the
 * settings ask for one (started here, with the back end).
 */
import type { OpenAiServerStatus, ServerApi } from '../../src-preload/api';
import { isRecord } from './chat/settings';
import type { BackendContext } from './context';
import { keyProblem, OpenAiServerSwitch } from './openai/listener';
import { runnableModels } from './openai/model-ids';
import { createOpenAiService, type ModelLibrary } from './openai/service';
import { promised } from './promised';

/** `library`: the library's and downloads' methods the API uses (listModels scans the folders, for /v1/models). */
export function createServerApi(ctx: BackendContext, library: ModelLibrary): ServerApi {
  const service = createOpenAiService(ctx, library);
  const listener = new OpenAiServerSwitch(service);
  // The owner of the data folder serves; a second back end on it would only find the port taken.
  if (ctx.owner) void listener.apply();
  ctx.onClose(() => listener.close());

  function status(): OpenAiServerStatus {
    return {
      settings: ctx.settings.openAiServer.get(),
      url: listener.url,
      error: listener.error,
      apiKeyOverridden: service.apiKeyOverridden,
      servedUrl: service.servedUrl,
      modelIds: runnableModels(ctx.models.list()).map((m) => m.id),
    };
  }

  return promised<ServerApi>({
    openAiServerStatus: status,

    async updateOpenAiServerSettings(patch) {
      if (!isRecord(patch)) throw new Error('updateOpenAiServerSettings needs an object of settings');
      const changes = patch;
      const group = ctx.settings.openAiServer;
      group.check(changes);
      const next = { ...group.get(), ...changes };
      const problem = next.enabled
        ? keyProblem(next.host, service.apiKeyOverridden ? service.limits().apiKey : next.apiKey)
        : null;
      if (problem) throw new Error(`${problem}: set one first`);
      group.update(changes);
      await listener.apply();
      return status();
    },
  });
}
