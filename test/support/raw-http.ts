import { connect } from 'node:net';

/**
 * Writes `head` (a request's raw headers, perhaps with the first bytes of a body) to the port and
 * answers everything the server sends until it closes the connection: for checks that a server
 * answers without waiting for a body it was promised.
 */
export function rawExchange(port: number, head: string, timeoutMs: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    // The server closes the connection once it has answered: the rest of the body is not wanted.
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
    socket.setTimeout(timeoutMs, () => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs / 1000} s; got ${JSON.stringify(text)}`));
    });
    socket.write(head);
  });
}
