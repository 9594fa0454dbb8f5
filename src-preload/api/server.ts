/**
 * The OpenAI-compatible server (`/v1/models`, `/v1/chat/completions`, `/v1/completions`,
 * `/metrics`): its settings and whether it is running. `gufo serve` always serves it on the UI's
 * port too; these settings add a listener of its own, for editors, agents and scripts.
 */

/**
 * Lengths an API key may have (characters, printable ASCII without spaces: it travels in an HTTP
 * header). A short key can be guessed by a program that keeps asking.
 */
export const API_KEY_CHARS = { min: 16, max: 256 } as const;

export interface OpenAiServerSettings {
  /** Serve the API on `host`:`port` while Gufo runs. */
  enabled: boolean;
  /** An IP address or "localhost"; anything but loopback needs an API key. */
  host: string;
  /** 0 picks any free port. */
  port: number;
  /** Required from clients as `Authorization: Bearer <key>` when set (GUFO_API_KEY takes precedence); API_KEY_CHARS long. */
  apiKey: string | null;
  /** Largest context a model is loaded with for API requests (its trained context when smaller). */
  contextSize: number;
  /**
   * Web pages that may call the API besides Gufo's own (CORS): origins such as
   * "https://app.example.com", with `*` for any run of characters ("chrome-extension://*",
   * "http://localhost:*"); GUFO_ORIGINS (comma-separated) takes precedence. Empty: none.
   */
  origins: string[];
}

export interface OpenAiServerStatus {
  settings: OpenAiServerSettings;
  /** The API's base URL ("http://127.0.0.1:7824/v1") while the listener runs, else null. */
  url: string | null;
  /** Why the listener is not running although enabled ("port 7824 is already in use"). */
  error: string | null;
  /** GUFO_API_KEY (or `gufo serve --api-key`) sets the key; the settings' key is not used. */
  apiKeyOverridden: boolean;
  /**
   * The API's base URL where `gufo serve` serves it (on the UI's port, or its --api-port), whatever
   * the settings say; null in the desktop app.
   */
  servedUrl: string | null;
  /** The model ids clients ask for (library models Gufo can run). */
  modelIds: string[];
}

export interface ServerApi {
  openAiServerStatus(): Promise<OpenAiServerStatus>;
  /**
   * Saves the given fields (an invalid value is an error naming it), then starts, restarts or
   * stops the listener to match; answers the status after that.
   */
  updateOpenAiServerSettings(patch: Partial<OpenAiServerSettings>): Promise<OpenAiServerStatus>;
}

export const SERVER_METHODS = [
  'openAiServerStatus',
  'updateOpenAiServerSettings',
] as const satisfies readonly (keyof ServerApi)[];
