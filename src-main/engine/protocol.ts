/**
 * Messages between a host (the Electron main process, the CLI, tests) and the engine process.
 * Every request carries an id chosen by the host; the engine answers with the same id, so
 * several requests can be in flight at once.
 */
export type EngineRequest = InfoRequest;
export type EngineResponse = InfoResponse | ErrorResponse;

export interface InfoRequest {
  id: number;
  type: 'info';
}

/** Who is answering: lets a host check that the engine process is up and which runtime it has. */
export interface InfoResponse {
  id: number;
  type: 'info';
  pid: number;
  node: string;
  versions: NodeJS.ProcessVersions;
}

/** A request the engine could not serve. `id` is null when the request had no usable id. */
export interface ErrorResponse {
  id: number | null;
  type: 'error';
  message: string;
}
