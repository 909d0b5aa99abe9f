/**
 * A GET over a given `node:http` Agent, so that the test decides which
 * connection a request uses: the one an earlier request kept alive, or a new
 * one. Tests of the connection ceiling hold and reuse connections this way.
 */
import http from 'node:http';

export interface AgentReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  retryAfter: string | undefined;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: any;
  /** Whether it went over a connection kept from an earlier request. */
  reused: boolean;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function getOver(agent: http.Agent, url: string, pathAndQuery: string): Promise<AgentReply> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.get({ hostname, port, path: pathAndQuery, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          retryAfter: res.headers['retry-after'],
          text,
          body: parsed(text),
          reused: req.reusedSocket,
        }),
      );
    });
    req.on('error', reject);
  });
}

/** An agent that keeps one connection alive. */
export const keepAliveAgent = (): http.Agent => new http.Agent({ keepAlive: true, maxSockets: 1 });
