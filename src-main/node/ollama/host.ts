/**
 * Where the Ollama server is: OLLAMA_HOST read as Ollama's own client reads it (scheme optional,
 * default http://127.0.0.1:11434; port 80/443 when only the scheme is given). A server bound to
 * every interface (0.0.0.0) is reached on this machine's loopback.
 */

const DEFAULT_OLLAMA_PORT = 11434;

export function ollamaBaseUrl(env: NodeJS.ProcessEnv): string {
  const raw = env.OLLAMA_HOST?.trim() ?? '';
  const [scheme, rest] = raw.includes('://') ? (raw.split('://', 2) as [string, string]) : ['http', raw];
  const defaultPort = !raw.includes('://') ? DEFAULT_OLLAMA_PORT : scheme === 'https' ? 443 : 80;
  const hostPort = rest.replace(/\/.*$/, '');
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(hostPort);
  let host = match?.[1] || '127.0.0.1';
  if (host === '0.0.0.0') host = '127.0.0.1';
  if (host === '[::]') host = '[::1]';
  const port = match?.[2] ? Number(match[2]) : defaultPort;
  return `${scheme}://${host}:${port}`;
}
