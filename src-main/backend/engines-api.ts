/** EnginesApi: the models loaded on the GPU, named as the library names them, and freeing them. */
import { basename } from 'node:path';
import type { EnginesApi, LoadedModel } from '../../src-preload/api';
import { modelName } from '../node/store/model-name';
import type { BackendContext } from './context';

export function createEnginesApi(ctx: BackendContext): EnginesApi {
  const loadedModels = (): LoadedModel[] =>
    ctx.engines.loaded().map(({ path, ctx: contextSize, memory }) => ({
      path,
      // A file loaded outside the library (a CLI benchmark) is named by its file, as the library would.
      name: ctx.models.byPath(path)?.name ?? modelName({ label: null, file_name: basename(path) }),
      contextSize,
      memory,
    }));
  ctx.onClose(ctx.engines.onChange(() => ctx.events.emit({ type: 'loaded-models', models: loadedModels() })));

  return {
    async loadedModels() {
      return loadedModels();
    },

    async unloadModel(path) {
      if (typeof path !== 'string' || path === '') throw new Error('unloadModel needs the path of a loaded model');
      await ctx.engines.unload(path);
    },
  };
}
