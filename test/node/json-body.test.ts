import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readJson } from '../../src-main/node/server/json-body';

const LIMIT = 16 << 20;
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    void readJson(req, LIMIT).then((value) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ value: value === undefined ? 'too large' : value }));
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise((done) => server.close(done)));

/** Posts `body`; answers what readJson made of it, as the server saw it. */
function post(body: string | Buffer): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { value: unknown }).value));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('readJson', () => {
  const large = { model: 'm', messages: [{ role: 'user', content: 'Once upon a time, “naïve” 🦉 '.repeat(100_000) }] };

  it('parses small bodies on the event loop and large ones in a worker, to the same values', async () => {
    const parse = vi.spyOn(JSON, 'parse');
    try {
      expect(await post('{"a":[1,2,{"b":"ü"}]}')).toEqual({ a: [1, 2, { b: 'ü' }] });
      const inline = parse.mock.calls.length;
      expect(inline).toBeGreaterThan(0);
      const text = JSON.stringify(large);
      expect(text.length).toBeGreaterThan(1 << 20);
      expect(await post(text)).toEqual(large);
      // Only the test's own parse of the reply: the body itself was parsed off the event loop.
      expect(parse.mock.calls.length - inline).toBe(1);
    } finally {
      parse.mockRestore();
    }
  });

  it('answers null for a body that is not JSON and [] for an empty one, small or large', async () => {
    expect(await post('{"a":')).toBeNull();
    expect(await post(`${JSON.stringify(large)}x`)).toBeNull();
    expect(await post('')).toEqual([]);
    expect(await post(' '.repeat(1 << 20))).toEqual([]);
  });

  it('parses several large bodies at once, each to its own value', async () => {
    const bodies = Array.from({ length: 4 }, (_, i) => ({ ...large, id: i }));
    expect(await Promise.all(bodies.map((b) => post(JSON.stringify(b))))).toEqual(bodies);
  });

  it('refuses a body over the limit', async () => {
    expect(await post(Buffer.alloc(LIMIT + 1, 0x20))).toBe('too large');
  });
});
