/**
 * Loads a module afresh with some of the modules it requires replaced. The fresh copy is a module
 * of its own: its classes are not the ones other imports of it see. tap's mock plugin does this
 * too, but it starts a module-loader thread in every test process of the suite (about 0.1 s of
 * CPU each, some 14 s a run) for the one test file that mocks; this costs nothing elsewhere.
 */
import Module from 'node:module';

/**
 * `target` and the keys of `mocks` are resolved as `from` (a test file's __filename) would
 * require them. Only `target` itself is loaded again; what it requires that is not mocked is the
 * module every other import sees.
 */
export function requireWith<T>(from: string, target: string, mocks: Record<string, unknown>): T {
  const requireFrom = Module.createRequire(from);
  const cache = requireFrom.cache;
  const saved = new Map<string, NodeJS.Module | undefined>();
  const replace = (file: string, entry: NodeJS.Module | undefined): void => {
    if (!saved.has(file)) saved.set(file, cache[file]);
    if (entry === undefined) delete cache[file];
    else cache[file] = entry;
  };
  for (const [name, exports] of Object.entries(mocks)) {
    const file = requireFrom.resolve(name);
    const fake = new Module(file);
    Object.assign(fake, { filename: file, loaded: true, exports });
    replace(file, fake);
  }
  const targetFile = requireFrom.resolve(target);
  replace(targetFile, undefined);
  try {
    return requireFrom(targetFile) as T;
  } finally {
    for (const [file, entry] of saved) {
      if (entry === undefined) delete cache[file];
      else cache[file] = entry;
    }
  }
}
