/**
 * Debian's nginx (apt-get install nginx) in front of a test's server, with
 * deploy/nginx/sqlscribe.conf rendered by sed as an operator would edit it:
 * its upstream, listen port, certificate paths and pid/log/temp directory
 * replaced. Started as a child process (`-g 'daemon off;'`), never the
 * system service; the certificate is a throw-away self-signed one. A test
 * file without nginx or openssl fails, saying how to install them.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { scratchDir } from './scratch-dir';
import { sleep } from './wait';

export const NGINX_INSTALL = 'apt-get install -y nginx openssl';
export const NGINX_CONF = path.resolve(__dirname, '../../deploy/nginx/sqlscribe.conf');

interface HasTeardown {
  teardown(fn: () => void | Promise<void>): void;
}

export interface Proxy {
  /** https://localhost:<port> */
  readonly url: string;
  readonly port: number;
  /** The self-signed certificate (PEM), to trust as a CA. */
  readonly cert: string;
  readonly child: ChildProcess;
  /** nginx's error log so far. */
  errorLog(): string;
}

/** The nginx binary: on PATH, else /usr/sbin (not on a non-root PATH). */
export function nginxPath(
  searchDirs: readonly string[] = [
    ...(process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir !== ''),
    '/usr/sbin',
  ],
): string {
  for (const dir of searchDirs) {
    try {
      accessSync(path.join(dir, 'nginx'), constants.X_OK);
      return path.join(dir, 'nginx');
    } catch {
      // Not here; the next.
    }
  }
  throw new Error(`nginx was not found (looked in ${searchDirs.join(', ')}); install it with: ${NGINX_INSTALL}`);
}

/** Throws, naming the apt-get line, when nginx or openssl is missing; else nginx's path. */
export function requireNginx(): string {
  const binary = nginxPath();
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
  } catch {
    throw new Error(`openssl was not found; install it with: ${NGINX_INSTALL}`);
  }
  return binary;
}

/** The operator's file with this test's values, by the same sed an operator could run. */
export function renderConf(options: {
  upstream: string;
  port: number;
  cert: string;
  key: string;
  prefix: string;
}): string {
  const script = [
    `s#/var/lib/sqlscribe-nginx#${options.prefix}#g`,
    `s#server 127\\.0\\.0\\.1:8080;#server ${options.upstream};#`,
    `s#listen 443 ssl;#listen 127.0.0.1:${options.port} ssl;#`,
    `s#/etc/ssl/sqlscribe/fullchain\\.pem#${options.cert}#`,
    `s#/etc/ssl/sqlscribe/privkey\\.pem#${options.key}#`,
  ];
  return execFileSync('sed', [...script.flatMap((line) => ['-e', line]), NGINX_CONF], { encoding: 'utf8' });
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether nginx answers on the port yet. */
function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** nginx in front of `upstream` (host:port of a sqlscribe server), listening on 127.0.0.1 over HTTPS. */
export async function startNginx(tt: HasTeardown, upstream: string): Promise<Proxy> {
  const binary = requireNginx();
  const prefix = scratchDir(tt);
  // nginx started by root runs its workers as nobody: they must reach the temp directories.
  chmodSync(prefix, 0o755);
  for (const dir of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(path.join(prefix, dir));
  const cert = path.join(prefix, 'cert.pem');
  const key = path.join(prefix, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
      '-days',
      '1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  const port = await freePort();
  const conf = path.join(prefix, 'nginx.conf');
  writeFileSync(conf, renderConf({ upstream, port, cert, key, prefix }));
  let stderr = '';
  const child = spawn(binary, ['-c', conf, '-p', prefix, '-e', path.join(prefix, 'error.log'), '-g', 'daemon off;'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  tt.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });
  const errorLog = (): string => {
    try {
      return readFileSync(path.join(prefix, 'error.log'), 'utf8');
    } catch {
      return '';
    }
  };
  for (let i = 0; i < 100 && !(await accepting(port)); i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${stderr}${errorLog()}`);
    await sleep(50);
  }
  if (!(await accepting(port))) throw new Error(`nginx did not listen on ${port}: ${stderr}${errorLog()}`);
  return { url: `https://localhost:${port}`, port, cert: readFileSync(cert, 'utf8'), child, errorLog };
}
