/**
 * The engine processes behind chat and benchmarks: one model per engine process, at most `cap`
 * processes, least recently used one reused first. Work on one engine starts in the order asked;
 * calls for the model the engine holds run side by side, up to its slots (the engine steps their
 * generations together), and a call that has to load waits for every call before it (a chat's next
 * turn reuses the KV cache its previous turn left).
 */
import { EngineHost, type EngineLauncher } from '../engine-wire/host';
import type { EngineInfo, GpuInfo, ModelMemory, ModelUse } from '../engine-wire/protocol';
import { DEFAULT_KV_CACHE_TYPES, type KvCacheTypes } from '../../src-preload/api/kv-cache';

export interface LoadSpec {
  path: string;
  /** Context size the KV cache is allocated for. */
  ctx: number;
  /** The KV cache's types (default: the pool's). */
  kvTypes?: KvCacheTypes;
  /**
   * What this call loads the model for (default 'generate'). A model held after a load to evaluate
   * serves a generation too: the engine runs the decode kernels once before it.
   */
  use?: ModelUse;
  /** Called when this call has to load the model (before the engine has opened the file). */
  onLoadStart?(): void;
  /** Load progress, in tensor bytes, while the model is being loaded for this call. */
  onProgress?: (done: number, total: number) => void;
  /** Then the kernels run once so far, of how many (the first load on a GPU compiles them). */
  onKernels?: (done: number, total: number) => void;
  /**
   * How long the model stays loaded once the engine's queue is idle after this call (Ollama's
   * keep_alive): 0 unloads it before the call's promise settles; null or absent, until the
   * engine is needed for another model. The last call before the queue empties decides.
   */
  keepAliveMs?: number | null;
}

/** A model an engine holds on the GPU now. */
export interface PooledModel {
  path: string;
  ctx: number;
  memory: ModelMemory;
  /** When its keep-alive runs out and it is unloaded (ms since the epoch); null: it stays until its engine is needed for another. */
  expiresAt: number | null;
}

export interface EngineLease {
  host: EngineHost;
  info: EngineInfo;
  /** How long this call spent loading the model; null when it was loaded already. */
  loadMs: number | null;
}

interface Slot {
  host: EngineHost;
  /** The model this engine was last given to: calls for it come here, even while it still loads (null: none yet). */
  assigned: string | null;
  /** What the engine holds now (null: nothing, or unknown after a crash). */
  loaded: { path: string; ctx: number; kvTypes: KvCacheTypes; info: EngineInfo } | null;
  /** The tail of this engine's queue of calls: settles once the last one asked has started. */
  queue: Promise<unknown>;
  /** Calls started and not yet settled (each as a promise that never rejects). */
  active: Set<Promise<void>>;
  /** Calls queued or running. */
  pending: number;
  /** Unloads the model when its keep-alive runs out, at `expiresAt`. */
  idleTimer: NodeJS.Timeout | null;
  expiresAt: number | null;
  lastUsed: number;
}

export interface EnginePoolOptions {
  /** Starts engine processes (default: child_process.fork of the engine entry). */
  launcher?: EngineLauncher;
  /** Engine processes at most (default 1). */
  cap?: number;
  /** KV cache types of loads that name none, asked at each load (default f16). */
  kvTypes?: () => KvCacheTypes;
  /** Sequences each loaded model keeps, each in a KV cache of its own (gufo serve --parallel; default 1). */
  slots?: number;
}

export class EnginePool {
  readonly #slots: Slot[] = [];
  readonly #cap: number;
  readonly #changeListeners = new Set<() => void>();
  /** Loads under way, on any engine. */
  #loads = 0;

  constructor(private readonly options: EnginePoolOptions = {}) {
    this.#cap = Math.max(1, options.cap ?? 1);
  }

  /** The KV cache types of loads that name none (gufo serve --cache-type-k/-v, else the app setting; f16 by default). */
  get defaultKvTypes(): KvCacheTypes {
    return { ...(this.options.kvTypes?.() ?? DEFAULT_KV_CACHE_TYPES) };
  }

  /** Calls one engine runs at once for the model it holds: the sequences each loaded model keeps. */
  get parallel(): number {
    return Math.max(1, this.options.slots ?? 1);
  }

  /**
   * Runs `work` with an engine that has `spec.path` loaded with at least `spec.ctx` of context,
   * once the calls queued before it on that engine have started: beside them when the engine
   * holds that model already (at most `parallel` at once), else after all of them.
   */
  withModel<T>(spec: LoadSpec, work: (lease: EngineLease) => T | Promise<T>): Promise<T> {
    const slot = this.#slotFor(spec.path);
    slot.lastUsed = Date.now();
    slot.pending += 1;
    this.#stopIdleTimer(slot);
    const run = async (): Promise<T> => {
      try {
        const { info, loaded } = await this.#ensureLoaded(slot, spec);
        return await work({ host: slot.host, info, loadMs: loaded ? info.loadMs : null });
      } finally {
        slot.pending -= 1;
        if (slot.pending === 0) await this.#keepAlive(slot, spec.path, spec.keepAliveMs ?? null);
      }
    };
    const turn = slot.queue.then(async () => {
      if (this.#holds(slot, spec)) while (slot.active.size >= this.parallel) await Promise.race(slot.active);
      else await Promise.all(slot.active);
      // Started here, before the next call's turn: a load has marked the engine as holding nothing.
      const call = run();
      const settled = call.then(
        () => {},
        () => {},
      );
      slot.active.add(settled);
      void settled.then(() => slot.active.delete(settled));
      return { call };
    });
    slot.queue = turn;
    return turn.then(({ call }) => call);
  }

  /** Whether a model is being loaded now (llama.cpp's /health answers 503 meanwhile). */
  get loading(): boolean {
    return this.#loads > 0;
  }

  /** The models loaded now, in the order of their engines. */
  loaded(): PooledModel[] {
    return this.#slots.flatMap(({ loaded, expiresAt }) =>
      loaded?.info.memory ? [{ path: loaded.path, ctx: loaded.ctx, memory: loaded.info.memory, expiresAt }] : [],
    );
  }

  /** Calls `listener` whenever the loaded models change (a load, an unload, a crash); answers a function that stops it. */
  onChange(listener: () => void): () => void {
    this.#changeListeners.add(listener);
    return () => this.#changeListeners.delete(listener);
  }

  /**
   * Frees the model at `path` from its engine's GPU after the calls queued before on that engine
   * (the process stays, for the next load). No-op when no engine holds it.
   */
  unload(path: string): Promise<void> {
    const slot = this.#slots.find((s) => s.assigned === path);
    if (!slot) return Promise.resolve();
    const result = slot.queue.then(async () => {
      await Promise.all(slot.active);
      return this.#unloadNow(slot, path);
    });
    slot.queue = result.catch(() => {});
    return result;
  }

  /**
   * The GPU adapter the engines open (every one opens the same). Asks the first engine, or starts
   * one without a model, which the next model then takes. Rejects with the engine's reason when
   * there is no adapter.
   */
  adapter(): Promise<GpuInfo> {
    return (this.#slots[0] ?? this.#newSlot(null)).host.adapter();
  }

  /** Stops every engine process. */
  async close(): Promise<void> {
    const slots = this.#slots.splice(0);
    for (const slot of slots) this.#stopIdleTimer(slot);
    await Promise.all(slots.map((slot) => slot.host.close()));
  }

  #slotFor(path: string): Slot {
    const holding = this.#slots.find((s) => s.assigned === path);
    if (holding) return holding;
    // An engine started only to ask for the adapter takes the first model.
    const idle = this.#slots.find((s) => s.assigned === null);
    if (!idle && this.#slots.length < this.#cap) return this.#newSlot(path);
    const reused = idle ?? this.#slots.reduce((a, b) => (b.lastUsed < a.lastUsed ? b : a));
    reused.assigned = path;
    return reused;
  }

  #newSlot(assigned: string | null): Slot {
    const host = new EngineHost({ launcher: this.options.launcher, stdio: 'inherit' });
    const slot: Slot = {
      host,
      assigned,
      loaded: null,
      queue: Promise.resolve(),
      active: new Set(),
      pending: 0,
      idleTimer: null,
      expiresAt: null,
      lastUsed: 0,
    };
    // A crashed engine holds nothing: the next call loads again.
    host.onCrash(() => {
      slot.loaded = null;
      this.#changed();
    });
    this.#slots.push(slot);
    return slot;
  }

  /** The engine's model info, and whether this call loaded it. */
  async #ensureLoaded(slot: Slot, spec: LoadSpec): Promise<{ info: EngineInfo; loaded: boolean }> {
    const held = slot.loaded;
    if (held && this.#holds(slot, spec)) return { info: held.info, loaded: false };
    const kvTypes = spec.kvTypes ?? this.defaultKvTypes;
    slot.loaded = null;
    if (held) this.#changed();
    spec.onLoadStart?.();
    this.#loads += 1;
    let info: EngineInfo;
    try {
      info = await slot.host.load(
        spec.path,
        { ctx: spec.ctx, kvTypes, slots: this.options.slots, use: spec.use },
        (e) => (e.stage === 'weights' ? spec.onProgress?.(e.done, e.total) : spec.onKernels?.(e.done, e.total)),
      );
    } finally {
      this.#loads -= 1;
    }
    slot.loaded = { path: spec.path, ctx: spec.ctx, kvTypes, info };
    this.#changed();
    return { info, loaded: true };
  }

  /** Whether the engine holds what `spec` asks: its model, with at least its context, and its KV cache types. */
  #holds(slot: Slot, spec: LoadSpec): boolean {
    const held = slot.loaded;
    const kvTypes = spec.kvTypes ?? this.defaultKvTypes;
    return (
      !!held &&
      held.path === spec.path &&
      held.ctx >= spec.ctx &&
      held.kvTypes.k === kvTypes.k &&
      held.kvTypes.v === kvTypes.v
    );
  }

  /** Frees `path` from the slot's GPU now (run in the slot's queue); a later call may have loaded another model there meanwhile: that one stays. */
  async #unloadNow(slot: Slot, path: string): Promise<void> {
    if (slot.loaded?.path !== path) return;
    slot.loaded = null;
    await slot.host.unload();
    this.#changed();
  }

  /** With the slot's queue idle: unloads `path` now (0), after `ms`, or leaves it loaded (null). */
  async #keepAlive(slot: Slot, path: string, ms: number | null): Promise<void> {
    if (ms === null) return;
    // A crashed engine holds nothing: the call's own result or error is what its caller needs.
    if (ms === 0) return this.#unloadNow(slot, path).catch(() => {});
    slot.expiresAt = Date.now() + ms;
    slot.idleTimer = setTimeout(() => {
      slot.idleTimer = null;
      slot.expiresAt = null;
      this.unload(path).catch(() => {});
    }, ms);
    // A model waiting to be unloaded does not keep the process alive.
    slot.idleTimer.unref();
  }

  #stopIdleTimer(slot: Slot): void {
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    slot.expiresAt = null;
  }

  #changed(): void {
    for (const listener of this.#changeListeners) listener();
  }
}
