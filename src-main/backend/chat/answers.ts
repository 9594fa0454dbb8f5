/**
 * Writing answers: one at a time per chat, in the background, on the engine pool (so answers of
 * different chats queue there). Every streamed piece of text is appended to the message's row
 * before it is announced, so a kill loses nothing that was shown.
 */
import type { AnswerProgress, GenerationStats, MessageStatus, MessageView } from '../../../src-preload/api';
import type { ChatTool } from '../../core/chat-template';
import { THINK_OPEN } from '../../core/reasoning';
import type { ChatStore, StoredChatSettings } from '../../node/store/chats';
import type { BackendContext } from '../context';
import { promptWorkersOf } from '../prompt-worker/index';
import { Throttle } from '../throttle';
import { fillContext } from './fill-context';
import type { ForcedCall } from './mcp-tools';
import { answerShape, openModelText, unfitMessage, type ModelText } from './prompt';
import { answerSeed, chatKvCacheTypes, effectiveSettings, engineSampling } from './settings';

export interface AnswerSpec {
  chatId: number;
  /** The assistant row to fill, inserted with status 'streaming'. */
  messageId: number;
  modelPath: string;
  settings: StoredChatSettings;
  /** The conversation it answers, root first, ending with the user's message. */
  branch: readonly MessageView[];
  /** The tools the model sees (the chat's own and its MCP servers') and the call it must make, if any. */
  tools: (text: ModelText) => Promise<{ tools: ChatTool[]; forced: ForcedCall | null }>;
}

/** Why an answer was aborted: the user stopped it, or the back end is closing. */
type AbortReason = 'stop' | 'shutdown';

/** How long closing waits for answers to end before marking them interrupted regardless. */
const CLOSE_WAIT_MS = 5000;
/** At most one 'chat-progress' event per answer in this many ms: a few live updates a second. */
const PROGRESS_EVERY_MS = 250;

export class Answers {
  /** The answer being written in each chat. */
  readonly #running = new Map<number, Answer>();
  #closed = false;

  constructor(
    private readonly ctx: BackendContext,
    private readonly store: ChatStore,
    /** Called once an answer is saved as done (its calls may be waiting to run). */
    private readonly onDone: (chatId: number, messageId: number) => void = () => undefined,
  ) {}

  /** Throws when no answer may start in the chat now: one is being written, or the back end is closing. */
  assertCanStart(chatId: number): void {
    if (this.#closed) throw new Error('Gufo is shutting down; no answer can start now');
    if (this.#running.has(chatId)) {
      throw new Error(`an answer is still being written in chat ${chatId}; stop it or wait for it to finish first`);
    }
  }

  /** Starts filling `spec.messageId`; returns at once. */
  start(spec: AnswerSpec): void {
    this.assertCanStart(spec.chatId);
    const answer = new Answer(
      spec,
      this.ctx,
      this.store,
      () => this.#running.delete(spec.chatId),
      (status) => {
        if (status === 'done') this.onDone(spec.chatId, spec.messageId);
      },
    );
    this.#running.set(spec.chatId, answer);
    answer.run();
  }

  /** Stops the chat's answer (no-op when none runs); resolves once it is saved as stopped. */
  async stop(chatId: number): Promise<void> {
    const answer = this.#running.get(chatId);
    if (!answer) return;
    answer.abort('stop');
    await answer.finished;
  }

  /** Stops every answer as 'interrupted' (the back end is closing) and refuses new ones. */
  async close(): Promise<void> {
    this.#closed = true;
    const running = [...this.#running.values()];
    for (const answer of running) answer.abort('shutdown');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS, 'timeout')));
    const outcome = await Promise.race([Promise.all(running.map((a) => a.finished)), timeout]);
    clearTimeout(timer);
    // An engine that does not answer the cancel: the rows are marked here, as a kill would leave them.
    if (outcome === 'timeout') for (const answer of running) answer.end('interrupted', null, null);
  }
}

/** One answer being written: planned, generated on the engine, saved piece by piece, ended once. */
class Answer {
  /** Resolves once the message has its final status. */
  readonly finished: Promise<void>;
  readonly #controller = new AbortController();
  #resolveFinished!: () => void;
  #ended = false;
  /** Whether the engine has started on it (before that, a stop ends it at once). */
  #generating = false;
  readonly #progress: Throttle<AnswerProgress>;

  constructor(
    private readonly spec: AnswerSpec,
    private readonly ctx: BackendContext,
    private readonly store: ChatStore,
    private readonly onEnd: () => void,
    /** Once the end is saved. */
    private readonly onSaved: (status: Exclude<MessageStatus, 'streaming'>) => void,
  ) {
    this.finished = new Promise<void>((resolve) => (this.#resolveFinished = resolve));
    const { chatId, messageId } = spec;
    this.#progress = new Throttle(PROGRESS_EVERY_MS, (progress) =>
      ctx.events.emit({ type: 'chat-progress', chatId, messageId, progress }),
    );
    // Stopped while still waiting for the engine (a queue, a model load): end now, not after the wait.
    this.#controller.signal.addEventListener('abort', () => {
      if (!this.#generating) this.end(this.#abortedStatus(), null, null);
    });
  }

  run(): void {
    this.#write().catch((err: unknown) => {
      if (this.#ended) return; // already saved (closing, or stopped while waiting)
      try {
        if (this.#controller.signal.aborted) this.end(this.#abortedStatus(), null, null);
        else this.end('error', null, err instanceof Error ? err.message : String(err));
      } catch (saveErr) {
        console.error(`gufo: could not save the end of answer ${this.spec.messageId}:`, saveErr);
      }
    });
  }

  abort(reason: AbortReason): void {
    this.#controller.abort(reason);
  }

  /** Saves the final status, once; text arriving later is dropped. */
  end(status: Exclude<MessageStatus, 'streaming'>, stats: GenerationStats | null, error: string | null): void {
    if (this.#ended) return;
    this.#ended = true;
    // Progress held back by the throttle would arrive after the end: the stats replace it.
    this.#progress.cancel();
    this.onEnd();
    try {
      const message = this.store.finishMessage(this.spec.messageId, { status, stats, error });
      this.store.touch(this.spec.chatId);
      if (message) this.ctx.events.emit({ type: 'chat-message', message });
    } finally {
      this.#resolveFinished();
    }
    // After the save: a done answer's calls are read from the stored text.
    this.onSaved(status);
  }

  #abortedStatus(): 'interrupted' | 'stopped' {
    return (this.#controller.signal.reason as AbortReason) === 'shutdown' ? 'interrupted' : 'stopped';
  }

  #report(progress: AnswerProgress): void {
    if (!this.#ended) this.#progress.push(progress);
  }

  /** Saves a piece of the answer, then announces it. */
  #append(text: string): void {
    if (this.#ended || this.#controller.signal.aborted || text === '') return;
    this.store.appendContent(this.spec.messageId, text);
    this.ctx.events.emit({ type: 'chat-delta', chatId: this.spec.chatId, messageId: this.spec.messageId, text });
  }

  async #write(): Promise<void> {
    const { modelPath, branch } = this.spec;
    const signal = this.#controller.signal;
    const text = openModelText(modelPath);
    try {
      const settings = effectiveSettings(this.spec.settings, text.hasChatTemplate);
      const { contextSize, sampling, promptFormat: format } = settings;
      const limits = { contextSize, maxTokens: sampling.maxTokens, overflow: settings.contextOverflow };
      const { tools, forced } = format === 'completion' ? { tools: [], forced: null } : await this.spec.tools(text);
      // A required call's marker ends the prompt; the answer is read (and stored) as starting with it.
      const prefill = forced ? text.tokenizer.tokenize(forced.prefill, { addBos: false, parseSpecial: true }) : [];
      /** The prompt for the branch, ending with the answer so far. */
      const planWith = (answer: readonly number[]) =>
        promptWorkersOf(this.ctx).run(
          text,
          modelPath,
          {
            kind: 'plan',
            systemPrompt: settings.systemPrompt,
            branch,
            limits,
            format,
            ...(tools.length > 0 && { tools }),
            answer: [...prefill, ...answer],
            thinking: settings.thinking,
          },
          signal,
        );
      const plan = await planWith([]);
      if (!plan.fits) throw new Error(unfitMessage(plan, limits));
      // The template opened the reasoning block in the prompt (DeepSeek-R1's, or Qwen 3 told to think):
      // the answer keeps the tag, so that it is shown, stored and sent back as the model's reasoning.
      const opening = forced ? forced.prefill : plan.opensThinking ? `${THINK_OPEN}\n` : '';
      const seed = answerSeed(sampling);
      const shape = answerShape(text, format);
      const stop = new Set(shape.stop);
      // Call markers that are control tokens stay in the text, for the transcript to read the calls (chat/tool-calls.ts).
      const decoder = text.answerDecoder(shape.stripLeadingSpace && !forced, format !== 'completion');
      // The chat's own cache types, else the server's (gufo serve --cache-type-k/-v): a change reloads the model.
      const kvTypes = chatKvCacheTypes(settings.kvCacheTypes, this.ctx.engines.defaultKvTypes);
      const load = {
        path: modelPath,
        ctx: contextSize,
        kvTypes,
        onLoadStart: () => this.#report({ phase: 'loading', doneBytes: 0, totalBytes: 0 }),
        onProgress: (doneBytes: number, totalBytes: number) =>
          this.#report({ phase: 'loading', doneBytes, totalBytes }),
        onKernels: (doneKernels: number, totalKernels: number) =>
          this.#report({ phase: 'preparing', doneKernels, totalKernels }),
      };
      /** When the first token arrived: the decode speed is over the tokens after it, as the engine's own. */
      let firstTokenAt = 0;
      const filled = await this.ctx.engines.withModel(load, async ({ host }) => {
        if (signal.aborted) return null;
        this.#generating = true;
        return fillContext(host, plan, {
          contextSize,
          maxTokens: sampling.maxTokens,
          sampling: engineSampling(sampling, seed),
          stop: shape.stop,
          constraint: forced?.constraint ?? null,
          signal,
          onToken: (token, count, conversationTokens) => {
            if (!stop.has(token)) this.#append((count === 1 ? opening : '') + decoder.push(token));
            const now = performance.now();
            if (count === 1) firstTokenAt = now;
            const decodeTokS = count > 1 ? (count - 1) / ((now - firstTokenAt) / 1000) : null;
            // The conversation's tokens and the answer's fill the context bar, across every part.
            this.#report({ phase: 'generating', promptTokens: conversationTokens, generatedTokens: count, decodeTokS });
          },
          // An answer that fills the context goes on from a prompt that leaves out more, while the policy allows.
          replan: limits.overflow === 'stop' ? null : planWith,
        });
      });
      if (filled === null) return this.end(this.#abortedStatus(), null, null);
      this.#append(decoder.flush());
      const t = filled.result.timings;
      const last = filled.plan;
      const stats: GenerationStats = {
        promptTokens: last.ids.length,
        reusedTokens: t.cachedTokens,
        generatedTokens: filled.answer.length,
        ttftMs: filled.ttftMs,
        decodeTokS: t.decodeTokS,
        prefillTokS: t.prefillTokS,
        stopReason: filled.stopReason,
        seed,
        contextSize,
        ...(last.dropped > 0 && { leftOutMessages: last.dropped }),
        ...(t.cachedTokens + t.promptTokens < last.ids.length && { promptReadTokens: t.cachedTokens + t.promptTokens }),
        kvCacheTypes: kvTypes,
      };
      this.end(signal.aborted ? this.#abortedStatus() : 'done', stats, null);
    } finally {
      text.close();
    }
  }
}
