/**
 * One HTTP(S) request from a chosen local address (`localAddress`: 127.0.0.2
 * and 127.0.0.3 are two clients on loopback), with any headers, forged
 * X-Forwarded-For included. fetch cannot bind its socket; node:http can.
 */
import http from 'node:http';
import https from 'node:https';

export interface BoundReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface BoundRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  localAddress?: string;
  /** HTTPS: the certificate to trust (a test's self-signed one). */
  ca?: string | Buffer;
  timeoutMs?: number;
}

export function boundRequest(url: string, options: BoundRequest = {}): Promise<BoundReply> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  const headers: Record<string, string | number> = { ...options.headers };
  if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
  return new Promise((resolve, reject) => {
    const req = client.request(
      target,
      {
        method: options.method ?? 'GET',
        headers,
        localAddress: options.localAddress,
        agent: false,
        ...(options.ca === undefined ? {} : { ca: options.ca, servername: 'localhost' }),
        timeout: options.timeoutMs ?? 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${options.method ?? 'GET'} ${url}: no answer in time`)));
    req.on('error', reject);
    req.end(options.body);
  });
}
