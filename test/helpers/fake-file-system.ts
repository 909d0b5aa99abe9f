/**
 * A file system for the journal writer's unit tests: node's real one in a test
 * directory, with faults injected on demand (an errno on any call, a disk that
 * fills up after so many bytes), and every call counted.
 */
import path from 'node:path';
import { nodeFileSystem, type JournalFileHandle, type JournalFileSystem } from '../../journal/file-system';

export type Op =
  | 'open'
  | 'write'
  | 'datasync'
  | 'truncate'
  | 'stat'
  | 'close'
  | 'size'
  | 'rename'
  | 'unlink'
  | 'readdir'
  | 'mkdir'
  | 'readFile'
  | 'syncDirectory';

interface Fault {
  op: Op;
  code: string;
  /** Only calls on a path whose base name matches. */
  name?: RegExp;
  /** How many calls fail before the fault clears by itself. */
  times: number;
  /** How many matching calls go through before the fault starts. */
  after: number;
}

function errno(code: string, op: Op): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected fault, ${op}`), { code });
}

export class FakeFileSystem implements JournalFileSystem {
  readonly calls = new Map<Op, number>();
  private faults: Fault[] = [];
  /** Bytes the disk can still take; undefined means room enough. Writes beyond it are short, then ENOSPC. */
  spaceLeft: number | undefined;

  fail(op: Op, code: string, options: { times?: number; name?: RegExp; after?: number } = {}): this {
    this.faults.push({
      op,
      code,
      times: options.times ?? Infinity,
      after: options.after ?? 0,
      ...(options.name ? { name: options.name } : {}),
    });
    return this;
  }

  /** Clears every fault and gives the disk room again. */
  heal(): void {
    this.faults = [];
    this.spaceLeft = undefined;
  }

  count(op: Op): number {
    return this.calls.get(op) ?? 0;
  }

  private check(op: Op, file: string): void {
    this.calls.set(op, this.count(op) + 1);
    const fault = this.faults.find(
      (f) => f.op === op && f.times > 0 && (f.name === undefined || f.name.test(path.basename(file))),
    );
    if (fault === undefined) return;
    if (fault.after > 0) {
      fault.after--;
      return;
    }
    fault.times--;
    throw errno(fault.code, op);
  }

  async open(file: string, flags: 'r+' | 'w'): Promise<JournalFileHandle> {
    this.check('open', file);
    return this.wrap(file, await nodeFileSystem.open(file, flags));
  }

  private wrap(file: string, real: JournalFileHandle): JournalFileHandle {
    return {
      write: async (buffer, offset, length, position) => {
        this.check('write', file);
        const room = this.spaceLeft ?? Infinity;
        if (room <= 0) throw errno('ENOSPC', 'write');
        const allowed = Math.min(length, room);
        const result = await real.write(buffer, offset, allowed, position);
        if (this.spaceLeft !== undefined) this.spaceLeft -= result.bytesWritten;
        return result;
      },
      datasync: async () => {
        this.check('datasync', file);
        await real.datasync();
      },
      truncate: async (length) => {
        this.check('truncate', file);
        await real.truncate(length);
      },
      stat: async () => {
        this.check('stat', file);
        return real.stat();
      },
      close: async () => {
        this.check('close', file);
        await real.close();
      },
    };
  }

  async size(file: string): Promise<number | undefined> {
    this.check('size', file);
    return nodeFileSystem.size(file);
  }

  async rename(from: string, to: string): Promise<void> {
    this.check('rename', from);
    await nodeFileSystem.rename(from, to);
  }

  async unlink(file: string): Promise<void> {
    this.check('unlink', file);
    await nodeFileSystem.unlink(file);
  }

  async readdir(directory: string): Promise<string[]> {
    this.check('readdir', directory);
    return nodeFileSystem.readdir(directory);
  }

  async mkdir(directory: string): Promise<void> {
    this.check('mkdir', directory);
    await nodeFileSystem.mkdir(directory);
  }

  async readFile(file: string): Promise<Buffer> {
    this.check('readFile', file);
    return nodeFileSystem.readFile(file);
  }

  async syncDirectory(directory: string): Promise<void> {
    this.check('syncDirectory', directory);
    await nodeFileSystem.syncDirectory(directory);
  }
}
