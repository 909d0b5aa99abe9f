/**
 * Clients that come from distinct loopback addresses (127.0.0.2, …), so that
 * the server counts them as different clients (its fair share of engines is
 * per address), and requests that can be abandoned half way.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { Reply, TestServer } from './server';

/** One kept-alive connection pool per address, as a browser keeps: a new connection for each request would measure the TCP stack, not the server. */
const agents = new Map<string, http.Agent>();

function agentFor(from: string): http.Agent {
  let agent = agents.get(from);
  if (agent === undefined) {
    agent = new http.Agent({ keepAlive: true, localAddress: from, maxSockets: 4 });
    agents.set(from, agent);
  }
  return agent;
}

/** Closes the kept-alive connections (at the end of a test, so that the server can stop at once). */
export function closeClients(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

export interface ClientRequest {
  /** 127.x.y.z to send from. */
  readonly from: string;
  readonly body: unknown;
  readonly path?: string;
  readonly headers?: Record<string, string>;
  /** Closes the connection when aborted, before the answer. */
  readonly signal?: AbortSignal;
}

/** A response's whole text, and its JSON (undefined when it is not JSON). */
export function readJson(res: http.IncomingMessage): Promise<{ text: string; body: unknown }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('error', reject);
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      resolve({ text, body });
    });
  });
}

/** POSTs JSON from `from`; a request aborted by `signal` rejects. */
export function postFrom(server: TestServer, request: ClientRequest): Promise<Reply> {
  const url = new URL(request.path ?? '/exec', server.url);
  const payload = JSON.stringify(request.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        // An abandoned request closes its connection: it gets one of its own.
        ...(request.signal ? { localAddress: request.from, agent: false } : { agent: agentFor(request.from) }),
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          ...request.headers,
        },
        ...(request.signal && { signal: request.signal }),
      },
      (res) => {
        readJson(res).then(
          ({ text, body }) =>
            resolve({
              status: res.statusCode ?? 0,
              headers: new Headers(res.headers as Record<string, string>),
              body,
              text,
            }),
          reject,
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The pids of the engine processes: the children of the server process (Linux). */
export function enginePids(server: TestServer): number[] {
  const pid = server.child.pid as number;
  const pids: number[] = [];
  for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      for (const word of fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(/\s+/))
        if (word !== '') pids.push(Number(word));
    } catch {
      // the thread ended meanwhile
    }
  }
  return [...new Set(pids)];
}

/**
 * How many accepted connections the server still holds open: its sockets on
 * the listening port that are established or closed by the peer but not yet
 * by the server (Linux, from the kernel's socket tables). Zero means the
 * server has seen every client close and closed its end too.
 */
export function openServerConnections(server: TestServer): number {
  const port = Number(new URL(server.url).port).toString(16).toUpperCase().padStart(4, '0');
  let open = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue; // no IPv6 table on this machine
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      // 01 ESTABLISHED, 08 CLOSE_WAIT: the server has not closed its end yet.
      if (local?.endsWith(`:${port}`) && (state === '01' || state === '08')) open++;
    }
  }
  return open;
}
