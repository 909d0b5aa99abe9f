/**
 * Runs the ```console blocks of a Markdown page as a reader would: each
 * `$ command` line through bash, in order, in one directory, every shell
 * variable set by one command still set for the next (as in one terminal);
 * the lines under a command are what it printed. Tests compare the two, so
 * that a page's examples cannot drift from what the service does.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';

export interface ConsoleStep {
  /** The command, without its `$ ` prompt. */
  readonly command: string;
  /** The lines the page shows under it (stdout and stderr), joined with `\n`; '' when none. */
  readonly expected: string;
  /** 1-based line of the command in the page, for messages. */
  readonly line: number;
}

const FENCE_OPEN = /^```console\s*$/;
const FENCE_CLOSE = /^```\s*$/;

/** Every `$` command of every ```console block, in page order. @throws when a block's output has no command above it. */
export function consoleSteps(markdown: string): ConsoleStep[] {
  const steps: Array<{ command: string; expected: string[]; line: number }> = [];
  let inBlock = false;
  let current: { command: string; expected: string[]; line: number } | undefined;
  for (const [index, text] of markdown.split('\n').entries()) {
    if (!inBlock) {
      inBlock = FENCE_OPEN.test(text);
      current = undefined;
    } else if (FENCE_CLOSE.test(text)) {
      inBlock = false;
    } else if (text.startsWith('$ ')) {
      current = { command: text.slice(2), expected: [], line: index + 1 };
      steps.push(current);
    } else if (current === undefined) {
      throw new Error(`line ${index + 1}: output with no "$ " command above it in a console block`);
    } else {
      current.expected.push(text);
    }
  }
  return steps.map(({ command, expected, line }) => ({ command, expected: expected.join('\n'), line }));
}

export interface ShellRun {
  readonly code: number | null;
  /** stdout and stderr as one stream, in the order written. */
  readonly output: string;
}

/**
 * One bash "terminal": each command runs in its own `bash -c`, after the
 * variables the previous commands left (kept in `envFile` with `export -p`;
 * `set -a` exports every assignment, `S=…` included).
 */
export class ShellSession {
  constructor(
    private readonly cwd: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly envFile: string,
  ) {}

  run(command: string, timeoutMs = 120_000): Promise<ShellRun> {
    const script = [
      `[ -f "$TOUR_ENV_FILE" ] && source "$TOUR_ENV_FILE"`,
      'exec 2>&1',
      'set -a',
      command,
      'tour_status=$?',
      'set +a',
      'export -n tour_status',
      'export -p > "$TOUR_ENV_FILE"',
      'exit "$tour_status"',
    ].join('\n');
    return new Promise((resolve, reject) => {
      const child = spawn('bash', ['-c', script], {
        cwd: this.cwd,
        env: { ...this.env, TOUR_ENV_FILE: this.envFile },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.once('error', reject);
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
    });
  }

  /** The words `text` expands to in this shell (its variables, its quoting), e.g. `-token "$TOKEN"`. */
  async words(text: string): Promise<string[]> {
    if (text.trim() === '') return [];
    const run = await this.run(`printf '%s\\n' ${text}`);
    if (run.code !== 0) throw new Error(`cannot expand ${text}: ${run.output}`);
    return run.output.split('\n').slice(0, -1);
  }
}

/** Whether `name` is a command on PATH. */
export function onPath(name: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && fs.existsSync(`${dir}/${name}`));
}
