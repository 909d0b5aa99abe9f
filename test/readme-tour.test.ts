/**
 * The README's tour, followed literally as a new user follows it from a
 * fresh clone: every `$` command of its ```console blocks runs in order,
 * through bash, in a checkout with no data/ yet, and prints what the README
 * shows under it. The same for the class cards block of docs/api.md (one
 * student's secret cut out of cards.csv and sent with curl).
 *
 * What differs from run to run is masked on both sides: times, session ids,
 * secrets, the version, the port (the pages show 127.0.0.1:8080, the test
 * listens on a free one) and paths (the checkout shows as /home/you/sqlscribe,
 * /tmp/ as a scratch directory). Seqs are not masked: from an empty data
 * directory they are the same every time, and a wrong seq is what a reader
 * following the tour would notice first.
 */
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { consoleSteps, onPath, ShellSession, type ConsoleStep } from './helpers/console-blocks';
import { scratchDir } from './helpers/scratch-dir';
import { startServer, type TestServer } from './helpers/server';

t.setTimeout(300_000);

const ROOT = path.resolve(__dirname, '..');
const SHOWN_ADDRESS = '127.0.0.1:8080';
const SHOWN_CHECKOUT = '/home/you/sqlscribe';
/** `npm start [-- flags]`: the test starts the built server itself (what npm start runs), on a port of its own. */
const NPM_START = /^npm start(?:\s+--\s+(.*))?$/;

/** A checkout as a fresh clone has it after `npm ci`, as far as the tour reaches it; no data/ yet. */
function checkout(tt: Test): string {
  const dir = fs.realpathSync(scratchDir(tt));
  fs.copyFileSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  for (const link of ['dist', 'node_modules', 'test/fixtures/chinook']) {
    fs.mkdirSync(path.dirname(path.join(dir, link)), { recursive: true });
    fs.symlinkSync(path.join(ROOT, link), path.join(dir, link));
  }
  fs.mkdirSync(path.join(dir, 'tmp'));
  return dir;
}

/** A new terminal's environment: none of tap's or the outer npm's variables, this test's node first on PATH. */
function terminalEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^(npm_|_?tap|NODE_OPTIONS$|NODE_V8_COVERAGE$)/i.test(name)) env[name] = value;
  }
  // npm's update notice is one of "npm's own lines", but it comes at random: keep it out.
  return {
    ...env,
    PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    npm_config_update_notifier: 'false',
    ...extra,
  };
}

/** What changes from run to run, the same on both sides. */
function masked(text: string): string {
  return text
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, '<time>')
    .replace(/"expires_unix":\d+/g, '"expires_unix":<unix>')
    .replace(/\b[0-9a-f]{16}\b/g, '<session>')
    .replace(/sqs_[A-Za-z0-9_-]{43}/g, 'sqs_<secret>')
    .replace(/\b(sqlscribe(?: replay| tail)?) \d+\.\d+\.\d+\S*/g, '$1 <version>')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trimEnd();
}

/** npm's own lines (`> sqlscribe@0.1.0 replay`, `> node dist/…`, blanks), which the pages leave out. */
function withoutNpmLines(output: string): string {
  return output
    .split('\n')
    .filter((line) => !line.startsWith('> ') && line.trim() !== '')
    .join('\n');
}

/** One reader's session: a server (restarted at each `npm start`) and a terminal in the checkout. */
class Tour {
  private server: TestServer | undefined;
  private addr = '127.0.0.1:0';

  constructor(
    tt: Test,
    private readonly dir: string,
    private readonly shell: ShellSession,
  ) {
    tt.teardown(async () => {
      await this.server?.stop();
    });
  }

  /** The command's output as the page would show it. */
  async run(tt: Test, step: ConsoleStep): Promise<string> {
    const start = NPM_START.exec(step.command);
    if (start !== null) return this.shown(await this.start(await this.shell.words(start[1] ?? '')));
    const command = step.command.replaceAll(SHOWN_ADDRESS, this.addr).replaceAll('/tmp/', `${this.dir}/tmp/`);
    const { code, output } = await this.shell.run(command);
    tt.equal(code, 0, `line ${step.line}: $ ${step.command} exits 0`);
    return this.shown(step.command.startsWith('npm ') ? withoutNpmLines(output) : output);
  }

  /** (Re)starts the server with `args` on the same port, as Ctrl-C and npm start again do; its start-up lines. */
  async start(args: string[]): Promise<string> {
    await this.server?.stop();
    this.server = await startServer(args, { cwd: this.dir, addr: this.addr });
    this.addr = new URL(this.server.url).host;
    const stderr = this.server.stderr();
    return stderr.slice(0, stderr.indexOf('\n', stderr.indexOf('sqlscribe ready')));
  }

  private shown(output: string): string {
    return output
      .replaceAll(`${this.dir}/tmp/`, '/tmp/')
      .replaceAll(this.dir, SHOWN_CHECKOUT)
      .replaceAll(this.addr, SHOWN_ADDRESS);
  }
}

function missingTools(tt: Test): boolean {
  const missing = ['bash', 'curl', 'sqlite3'].filter((tool) => !onPath(tool));
  if (missing.length > 0) tt.fail(`the tour needs ${missing.join(' and ')}: apt-get install -y ${missing.join(' ')}`);
  return missing.length > 0;
}

async function follow(tt: Test, page: string, tour: Tour): Promise<void> {
  const steps = consoleSteps(fs.readFileSync(path.join(ROOT, page), 'utf8'));
  tt.ok(steps.length > 0, `${page} has console blocks`);
  for (const step of steps) {
    const printed = await tour.run(tt, step);
    tt.equal(masked(printed), masked(step.expected), `${page}:${step.line}: $ ${step.command}`);
  }
}

t.test('the README tour prints what the README shows, run in order from an empty data directory', async (tt) => {
  if (missingTools(tt)) return;
  const dir = checkout(tt);
  const shell = new ShellSession(dir, terminalEnv({}), path.join(scratchDir(tt), 'env.sh'));
  await follow(tt, 'README.md', new Tour(tt, dir, shell));
});

t.test("docs/api.md's class cards: the documented grep and cut give a secret that curl can send", async (tt) => {
  if (missingTools(tt)) return;
  const admin = 'admin-secret-of-the-docs';
  const dir = checkout(tt);
  const shell = new ShellSession(dir, terminalEnv({ ADMIN: admin }), path.join(scratchDir(tt), 'env.sh'));
  const tour = new Tour(tt, dir, shell);
  await tour.start(['-token', admin]);
  await follow(tt, 'docs/api.md', tour);
  tt.notMatch(fs.readFileSync(path.join(dir, 'cards.csv'), 'utf8'), /\r/, 'cards.csv has no CR');
});
