/**
 * The database schema, as a list of migrations. Migration N takes a database at version N-1 (its
 * `PRAGMA user_version`) to version N. Never edit a migration that has shipped: add the next one.
 * test/node/store/database.test.ts upgrades a database from every earlier version.
 */
import { basename } from 'node:path';
import type { Database } from 'better-sqlite3';
import { modelName } from './model-name';

export interface Migration {
  version: number;
  /** What it changes, for the log and the tests. */
  summary: string;
  /**
   * It rebuilds a table other tables reference (SQLite's way to change a CHECK): it runs with
   * foreign keys off, so dropping the old table neither cascades nor nulls the references, and
   * the references are checked before it commits.
   */
  rebuildsTables?: boolean;
  up(db: Database): void;
}

/** Timestamps are ISO 8601 UTC text, written by SQLite itself. */
const NOW = "(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))";

/** Keep messages_fts in step with messages (created with the table, and again when it is rebuilt). */
const MESSAGES_FTS_TRIGGERS = `CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.status <> 'streaming' BEGIN
  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages WHEN old.status <> 'streaming' BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_unindex AFTER UPDATE OF content, status ON messages WHEN old.status <> 'streaming' BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_index AFTER UPDATE OF content, status ON messages WHEN new.status <> 'streaming' BEGIN
  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;`;

const V1 = `
CREATE TABLE models (
  id           INTEGER PRIMARY KEY,
  path         TEXT NOT NULL UNIQUE,
  name         TEXT NOT NULL,
  source       TEXT NOT NULL CHECK (source IN ('folder', 'added', 'exported', 'downloaded')),
  bytes        INTEGER NOT NULL,
  mtime_ms     INTEGER NOT NULL,
  sha256       TEXT,
  -- The metadata summary (architecture, parameters, file type, type mix, context length) as JSON.
  summary_json TEXT,
  error        TEXT,
  added_at     TEXT NOT NULL DEFAULT ${NOW}
);

-- Files the user removed from the library: folder scans leave them out.
CREATE TABLE excluded_paths (
  path TEXT PRIMARY KEY
);

CREATE TABLE chats (
  id             INTEGER PRIMARY KEY,
  title          TEXT NOT NULL,
  model_id       INTEGER REFERENCES models(id) ON DELETE SET NULL,
  model_name     TEXT NOT NULL,
  model_path     TEXT NOT NULL,
  system_prompt  TEXT NOT NULL DEFAULT '',
  sampling_json  TEXT NOT NULL,
  context_size   INTEGER NOT NULL,
  -- The last message of the branch on show (no foreign key: messages reference chats).
  active_leaf_id INTEGER,
  created_at     TEXT NOT NULL DEFAULT ${NOW},
  updated_at     TEXT NOT NULL DEFAULT ${NOW}
);

CREATE TABLE messages (
  id         INTEGER PRIMARY KEY,
  chat_id    INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
  -- Edits and regenerations are siblings under the same parent: the messages form a tree.
  parent_id  INTEGER REFERENCES messages(id) ON DELETE CASCADE,
  role       TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
  content    TEXT NOT NULL,
  status     TEXT NOT NULL DEFAULT 'done' CHECK (status IN ('done', 'streaming', 'stopped', 'interrupted', 'error')),
  stats_json TEXT,
  error      TEXT,
  created_at TEXT NOT NULL DEFAULT ${NOW}
);
CREATE INDEX messages_by_chat ON messages(chat_id, parent_id);

-- Full-text search over messages. A message is indexed once it stops streaming, so the index is
-- not rewritten for every token of an answer.
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id');
${MESSAGES_FTS_TRIGGERS}

CREATE TABLE settings (
  key        TEXT PRIMARY KEY,
  value_json TEXT NOT NULL
);

CREATE TABLE bench_runs (
  id                INTEGER PRIMARY KEY,
  model_id          INTEGER REFERENCES models(id) ON DELETE SET NULL,
  model_name        TEXT NOT NULL,
  model_path        TEXT NOT NULL,
  file_sha256       TEXT,
  adapter           TEXT NOT NULL,
  backend           TEXT NOT NULL,
  prompt_tokens     INTEGER NOT NULL,
  gen_tokens        INTEGER NOT NULL,
  prefill_tok_s     REAL NOT NULL,
  decode_tok_s      REAL NOT NULL,
  ttft_ms           REAL NOT NULL,
  load_ms           REAL NOT NULL,
  roofline_fraction REAL,
  app_version       TEXT NOT NULL,
  created_at        TEXT NOT NULL DEFAULT ${NOW}
);
CREATE INDEX bench_runs_by_model ON bench_runs(model_id, created_at);

CREATE TABLE exports (
  id              INTEGER PRIMARY KEY,
  source_model_id INTEGER REFERENCES models(id) ON DELETE SET NULL,
  source_name     TEXT NOT NULL,
  source_path     TEXT NOT NULL,
  output_path     TEXT NOT NULL,
  file_type       TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'cancelled')),
  bytes_out       INTEGER,
  seconds         REAL,
  error           TEXT,
  output_model_id INTEGER REFERENCES models(id) ON DELETE SET NULL,
  job_id          TEXT,
  started_at      TEXT NOT NULL DEFAULT ${NOW},
  ended_at        TEXT
);
`;

const SOURCES = "('ollama', 'lmstudio', 'huggingface', 'jan', 'gpt4all', 'folder', 'added', 'exported', 'downloaded')";

const V2 = `
CREATE TABLE models_v2 (
  id           INTEGER PRIMARY KEY,
  -- The location the model is read from (one of its model_locations).
  path         TEXT NOT NULL UNIQUE,
  name         TEXT NOT NULL,
  source       TEXT NOT NULL CHECK (source IN ${SOURCES}),
  -- Files in a split GGUF set (path is the first); bytes counts them all.
  parts        INTEGER NOT NULL DEFAULT 1,
  bytes        INTEGER NOT NULL,
  mtime_ms     INTEGER NOT NULL,
  sha256       TEXT,
  summary_json TEXT,
  error        TEXT,
  added_at     TEXT NOT NULL DEFAULT ${NOW}
);
INSERT INTO models_v2 (id, path, name, source, bytes, mtime_ms, sha256, summary_json, error, added_at)
  SELECT id, path, name, source, bytes, mtime_ms, sha256, summary_json, error, added_at FROM models;
DROP TABLE models;
ALTER TABLE models_v2 RENAME TO models;
CREATE INDEX models_by_sha256 ON models(sha256);

-- Every place a model's file is found: the same bytes (by SHA-256) in Ollama, a folder and the
-- Hugging Face cache are one model with three locations.
CREATE TABLE model_locations (
  path      TEXT PRIMARY KEY,
  model_id  INTEGER NOT NULL REFERENCES models(id) ON DELETE CASCADE,
  source    TEXT NOT NULL CHECK (source IN ${SOURCES}),
  -- What the app keeping the file calls it (Ollama "name:tag", "org/repo/file.gguf"), null for folders.
  label     TEXT,
  file_name TEXT NOT NULL,
  -- Size (all parts) and time of this copy when last read: a copy that changes is no longer the model.
  bytes     INTEGER NOT NULL,
  mtime_ms  INTEGER NOT NULL
);
CREATE INDEX model_locations_by_model ON model_locations(model_id);
INSERT INTO model_locations (path, model_id, source, file_name, bytes, mtime_ms)
  SELECT path, id, source, path, bytes, mtime_ms FROM models;

-- Downloads, kept so that they resume after a restart (HTTP range requests from the partial file).
CREATE TABLE downloads (
  id            INTEGER PRIMARY KEY,
  -- As given: https://… or hf://org/repo/file.gguf.
  url           TEXT NOT NULL,
  file_name     TEXT NOT NULL,
  -- Where the verified file goes, and where its bytes are written until then.
  path          TEXT NOT NULL,
  part_path     TEXT NOT NULL,
  bytes         INTEGER NOT NULL DEFAULT 0,
  total         INTEGER,
  sha256        TEXT,
  sha256_source TEXT CHECK (sha256_source IN ('given', 'published')),
  -- The server's validator for the bytes so far: another one means the file changed, start over.
  etag          TEXT,
  status        TEXT NOT NULL CHECK (status IN ('queued', 'running', 'paused', 'verifying', 'done', 'failed', 'cancelled')),
  error         TEXT,
  -- The process transferring it (a download another running Gufo owns is left alone).
  owner_pid     INTEGER,
  model_id      INTEGER REFERENCES models(id) ON DELETE SET NULL,
  created_at    TEXT NOT NULL DEFAULT ${NOW},
  updated_at    TEXT NOT NULL DEFAULT ${NOW}
);
`;

const V3 = `
-- Quality reports: KL divergence, top-1 agreement and perplexity of a quantized model against its
-- base over a text (the app's reports after an export, and gufo kld with GUFO_HOME set).
CREATE TABLE quality_reports (
  id                INTEGER PRIMARY KEY,
  base_model_id     INTEGER REFERENCES models(id) ON DELETE SET NULL,
  base_name         TEXT NOT NULL,
  base_path         TEXT NOT NULL,
  base_sha256       TEXT,
  quant_model_id    INTEGER REFERENCES models(id) ON DELETE SET NULL,
  quant_name        TEXT NOT NULL,
  quant_path        TEXT NOT NULL,
  quant_sha256      TEXT,
  export_id         INTEGER REFERENCES exports(id) ON DELETE SET NULL,
  text_source       TEXT NOT NULL CHECK (text_source IN ('builtin', 'chats', 'file')),
  -- What the text was: "built-in text", "3 recent chats", a file's path.
  text_label        TEXT NOT NULL,
  ctx               INTEGER NOT NULL,
  tokens            INTEGER NOT NULL,
  positions         INTEGER NOT NULL,
  mean_kl           REAL NOT NULL,
  p99_kl            REAL NOT NULL,
  max_kl            REAL NOT NULL,
  top1              REAL NOT NULL,
  mean_delta_p      REAL NOT NULL,
  mean_delta_p_next REAL NOT NULL,
  ppl_base          REAL NOT NULL,
  ppl_quant         REAL NOT NULL,
  adapter           TEXT NOT NULL,
  app_version       TEXT NOT NULL,
  created_at        TEXT NOT NULL DEFAULT ${NOW}
);
CREATE INDEX quality_reports_by_quant ON quality_reports(quant_model_id, created_at);
CREATE INDEX quality_reports_by_base ON quality_reports(base_model_id, created_at);
`;

/** messages rebuilt with "tool" among the roles (its CHECK cannot change in place); ids, and so the FTS rows, stay. */
const V8 = `
CREATE TABLE messages_v8 (
  id         INTEGER PRIMARY KEY,
  chat_id    INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
  parent_id  INTEGER REFERENCES messages(id) ON DELETE CASCADE,
  role       TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  content    TEXT NOT NULL,
  status     TEXT NOT NULL DEFAULT 'done' CHECK (status IN ('done', 'streaming', 'stopped', 'interrupted', 'error')),
  stats_json TEXT,
  error      TEXT,
  created_at TEXT NOT NULL DEFAULT ${NOW}
);
INSERT INTO messages_v8 SELECT id, chat_id, parent_id, role, content, status, stats_json, error, created_at FROM messages;
DROP TABLE messages;
ALTER TABLE messages_v8 RENAME TO messages;
CREATE INDEX messages_by_chat ON messages(chat_id, parent_id);
${MESSAGES_FTS_TRIGGERS}
`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    summary: 'models, excluded paths, chats, messages (tree) with FTS5, settings, benchmark runs, exports',
    up: (db) => db.exec(V1),
  },
  {
    version: 2,
    summary: "models from other apps' stores (new sources, split sets), model locations, downloads",
    rebuildsTables: true,
    up(db) {
      db.exec(V2);
      const rename = db.prepare('UPDATE model_locations SET file_name = ? WHERE path = ?');
      for (const { path } of db.prepare('SELECT path FROM model_locations').all() as { path: string }[])
        rename.run(basename(path), path);
    },
  },
  {
    version: 3,
    summary: 'quality reports (KL divergence of a quantized model against its base)',
    up: (db) => db.exec(V3),
  },
  {
    version: 4,
    summary:
      'models are named from where they are (file name, Ollama name:tag, Hugging Face org/repo/file), not general.name',
    up(db) {
      const rename = db.prepare('UPDATE models SET name = ? WHERE id = ?');
      const rows = db
        .prepare('SELECT m.id, l.label, l.file_name FROM models m JOIN model_locations l ON l.path = m.path')
        .all() as { id: number; label: string | null; file_name: string }[];
      for (const row of rows) rename.run(modelName(row), row.id);
    },
  },
  {
    version: 5,
    summary: "a chat's prompt format (its model's template, plain completion, or a built-in template family)",
    // NULL: a chat made before formats existed; it takes its model's default when read.
    up: (db) => db.exec('ALTER TABLE chats ADD COLUMN prompt_format TEXT'),
  },
  {
    version: 6,
    summary: "each file type's predicted quality, cached per model file SHA-256",
    up: (db) =>
      db.exec(`CREATE TABLE quality_predictions (
        sha256      TEXT PRIMARY KEY,
        -- [{ fileType, predicted }] as node/quant-plan.ts computes them.
        types_json  TEXT NOT NULL,
        created_at  TEXT NOT NULL DEFAULT ${NOW}
      )`),
  },
  {
    version: 7,
    summary:
      'predicted quality also per importance matrix, with the per-tensor measurements a custom recipe is predicted from',
    // A cache: the old rows lack the per-tensor figures, so they are dropped and measured again.
    up: (db) =>
      db.exec(`DROP TABLE quality_predictions;
      CREATE TABLE quality_predictions (
        sha256          TEXT NOT NULL,
        -- The importance matrix file's SHA-256, '' for none.
        imatrix_sha256  TEXT NOT NULL DEFAULT '',
        -- [{ fileType, predicted }] and { tensor: measurement } as node/quant-plan.ts measures them.
        types_json      TEXT NOT NULL,
        tensors_json    TEXT NOT NULL,
        created_at      TEXT NOT NULL DEFAULT ${NOW},
        PRIMARY KEY (sha256, imatrix_sha256)
      )`),
  },
  {
    version: 8,
    summary: 'tool results in chats: messages may have the role "tool"',
    rebuildsTables: true,
    up: (db) => db.exec(V8),
  },
  {
    version: 9,
    summary: "a chat's tools: the functions its model may call (an OpenAI tools list)",
    // NULL: none.
    up: (db) => db.exec('ALTER TABLE chats ADD COLUMN tools_json TEXT'),
  },
  {
    version: 10,
    summary: "a chat's context overflow policy (stop, truncate-middle, rolling-window)",
    // Earlier chats left out the oldest messages, as a rolling window does: they keep doing so.
    up: (db) => db.exec("ALTER TABLE chats ADD COLUMN context_overflow TEXT NOT NULL DEFAULT 'rolling-window'"),
  },
  {
    version: 11,
    summary: "a chat's KV cache types for K and V (f16, q8_0, q4_0, f32; NULL: the server's default)",
    up: (db) =>
      db.exec('ALTER TABLE chats ADD COLUMN kv_cache_type_k TEXT; ALTER TABLE chats ADD COLUMN kv_cache_type_v TEXT'),
  },
  {
    version: 12,
    summary: "a chat's thinking switch for reasoning models (the template's enable_thinking; NULL: its default)",
    up: (db) => db.exec('ALTER TABLE chats ADD COLUMN thinking INTEGER'),
  },
  {
    version: 13,
    summary:
      "MCP servers (Settings › Tools) and a chat's tool use (its servers, tool choice, rounds, tools always allowed)",
    up: (db) =>
      db.exec(`CREATE TABLE mcp_servers (
        name         TEXT PRIMARY KEY,
        -- { command, args, env } or { url, headers }, as mcp.json holds it.
        config_json  TEXT NOT NULL,
        enabled      INTEGER NOT NULL DEFAULT 1,
        created_at   TEXT NOT NULL DEFAULT ${NOW}
      );
      -- NULL: DEFAULT_TOOL_USE.
      ALTER TABLE chats ADD COLUMN tool_use_json TEXT;`),
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
