/**
 * The contract between the UI and the back end: the only door between them.
 *
 * Types only (plus the lists of method names the bindings forward, the limits both sides check,
 * and format.ts: tiny pure formatters the CLI and the UI share, so both write a size or a file
 * type alike), so the renderer can import it without pulling in any other code. Electron binds it over IPC (src-preload/index.ts), browser mode over
 * HTTP + SSE (src-main/node/server); both call the one implementation in src-main/backend. Every
 * method takes and returns plain JSON values, since both bindings serialize them.
 *
 * One file per feature; GufoApi is their union.
 */
import { APP_METHODS, type AppApi } from './app';
import { BENCH_METHODS, type BenchApi } from './bench';
import { CHAT_METHODS, type ChatApi } from './chat';
import { DOWNLOADS_METHODS, type DownloadsApi } from './downloads';
import { ENGINES_METHODS, type EnginesApi } from './engines';
import type { GufoEventListener } from './events';
import { EXPORT_METHODS, type ExportApi } from './export';
import { INSPECTOR_METHODS, type InspectorApi } from './inspector';
import { JOBS_METHODS, type JobsApi } from './jobs';
import { LIBRARY_METHODS, type LibraryApi } from './library';
import { MCP_METHODS, type McpApi } from './mcp';
import { OLLAMA_METHODS, type OllamaApi } from './ollama';
import { QUALITY_LEVELS_METHODS, type QualityLevelsApi } from './quality-levels';
import { SERVER_METHODS, type ServerApi } from './server';

export type * from './app';
export { CONTEXT_TOKENS, GPU_MEMORY_BUDGET_MAX_GIB } from './app';
export type * from './bench';
export type * from './chat';
export { DEFAULT_TOOL_USE, MAX_TOOL_ROUNDS } from './chat';
export type * from './downloads';
export type * from './engines';
export type * from './events';
export type * from './export';
export type * from './inspector';
export type * from './jobs';
export type * from './library';
export type * from './mcp';
export type * from './ollama';
export { ollamaDefaultContext } from './ollama';
export type * from './quality-levels';
export type * from './server';
export { API_KEY_CHARS } from './server';
export { fileTypeLabel, formatBytes, guessedFileType } from './format';
export type * from './context-overflow';
export {
  CONTEXT_OVERFLOWS,
  CONTEXT_OVERFLOW_SETTING,
  CONTEXT_OVERFLOW_TEXT,
  DEFAULT_CONTEXT_OVERFLOW,
  contextFullNotice,
  contextOverflowSummary,
  leftOutNotice,
} from './context-overflow';
export type * from './kv-cache';
export { DEFAULT_KV_CACHE_TYPES, KV_CACHE_TYPES, isKvCacheType } from './kv-cache';

export interface GufoApi
  extends
    AppApi,
    LibraryApi,
    InspectorApi,
    ChatApi,
    BenchApi,
    ExportApi,
    QualityLevelsApi,
    JobsApi,
    ServerApi,
    DownloadsApi,
    OllamaApi,
    EnginesApi,
    McpApi {}

/** Every method name of GufoApi, for the bindings that forward calls by name. */
export const API_METHODS = [
  ...APP_METHODS,
  ...LIBRARY_METHODS,
  ...INSPECTOR_METHODS,
  ...CHAT_METHODS,
  ...BENCH_METHODS,
  ...EXPORT_METHODS,
  ...QUALITY_LEVELS_METHODS,
  ...JOBS_METHODS,
  ...SERVER_METHODS,
  ...DOWNLOADS_METHODS,
  ...OLLAMA_METHODS,
  ...ENGINES_METHODS,
  ...MCP_METHODS,
] as const;

// A method missing from the lists above would be unreachable from the UI: fail the typecheck.
type Missing = Exclude<keyof GufoApi, (typeof API_METHODS)[number]>;
const everyMethodListed: [Missing] extends [never] ? true : Missing = true;
void everyMethodListed;

export type ApiMethodName = (typeof API_METHODS)[number];

/**
 * Whether `name` is a GufoApi method. Bindings receive method names from outside (an IPC channel,
 * a URL): only listed names are ever called, never `constructor` or anything inherited.
 */
export function isApiMethod(name: string): name is ApiMethodName {
  return (API_METHODS as readonly string[]).includes(name);
}

/** What the UI holds: the API, plus the back end's events. */
export interface GufoBridge extends GufoApi {
  /** Calls `listener` with every event from the back end; answers a function that stops it. */
  onEvent(listener: GufoEventListener): () => void;
  /** Electron only: the path of a file dropped on the window (browsers do not reveal it). */
  pathForFile?: (file: File) => string;
}
