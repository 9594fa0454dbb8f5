/** EnginesApi: the GPU adapter in use, the models loaded on it, named as the library names them, and freeing them. */
import { totalmem } from 'node:os';
import { basename } from 'node:path';
import type { EnginesApi, GpuAdapter, LoadedModel } from '../../src-preload/api';
import { EngineRequestError } from '../engine-wire/host';
import type { GpuInfo } from '../engine-wire/protocol';
import { modelName } from '../node/store/model-name';
import type { BackendContext } from './context';
import { promised } from './promised';

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

  // The adapter does not change while Gufo runs: asked once.
  let adapter: Promise<GpuAdapter> | null = null;

  return promised<EnginesApi>({
    async gpuAdapter() {
      adapter ??= ctx.engines.adapter().then(gpuAdapterOf);
      try {
        return { status: 'ready', adapter: await adapter };
      } catch (err) {
        adapter = null;
        // The engine answered that it cannot open a GPU (its message says what to install); a crash is an error.
        if (err instanceof EngineRequestError) return { status: 'none', reason: err.message };
        throw err;
      }
    },

    loadedModels() {
      return loadedModels();
    },

    async unloadModel(path) {
      if (typeof path !== 'string' || path === '') throw new Error('unloadModel needs the path of a loaded model');
      await ctx.engines.unload(path);
    },
  });
}

function gpuAdapterOf(info: GpuInfo): GpuAdapter {
  return {
    name: info.name,
    vendor: info.vendor,
    backend: info.backend,
    software: info.isFallbackAdapter,
    shaderF16: info.features.includes('shader-f16'),
    subgroups: info.features.includes('subgroups') ? { min: info.subgroupMinSize, max: info.subgroupMaxSize } : null,
    // A software adapter (lavapipe, SwiftShader) keeps its buffers in the machine's RAM.
    memoryBytes: info.isFallbackAdapter ? totalmem() : null,
  };
}
