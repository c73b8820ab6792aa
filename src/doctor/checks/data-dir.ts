import { accessSync, constants, lstatSync, statSync, type Stats } from 'node:fs';
import type { Check, Verdict } from '../types.js';

const KEY_MODE_MASK = 0o077;

const uid = () => (typeof process.getuid === 'function' ? process.getuid() : undefined);
const mode = (st: Stats) => (st.mode & 0o777).toString(8).padStart(4, '0');

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** A directory the node writes: exists (when required), is a directory, owned by and writable for this user. */
function dirProblem(path: string, required: boolean): Verdict | undefined {
  const st = statOrUndefined(path);
  if (!st) {
    return required
      ? { status: 'fail', message: `${path} does not exist`, remedy: `create the home with \`noded init\`, or \`mkdir -p ${path}\` in an existing one` }
      : undefined;
  }
  if (!st.isDirectory()) {
    return {
      status: 'fail',
      message: `${path} is not a directory (${st.isFile() ? 'a file' : 'not a file either'}); the node cannot keep its data there`,
      remedy: `move the file out of the way (\`mv ${path} ${path}.bak\`) and let the node create the directory, or run \`noded reset soft\``,
    };
  }
  const me = uid();
  if (me !== undefined && me !== 0 && st.uid !== me) {
    return {
      status: 'fail',
      message: `${path} is owned by uid ${st.uid}, not by uid ${me} that runs the node`,
      remedy: `\`chown -R ${me} ${path}\`, or run the node as its owner`,
    };
  }
  try {
    accessSync(path, constants.W_OK | constants.X_OK);
  } catch {
    return { status: 'fail', message: `${path} is not writable for this user (mode ${mode(st)})`, remedy: `\`chmod u+rwx ${path}\`` };
  }
  return undefined;
}

export const dataDirCheck: Check = {
  id: 'data-dir',
  verifies: 'data/ exists, is a directory owned by and writable for this user (data/store and data/cache too); the key files config/signer.json and config/node_key.json are 0600',
  async run(ctx) {
    const { paths } = ctx;
    const problem = dirProblem(paths.dataDir, true) ?? dirProblem(paths.storeDir, false) ?? dirProblem(paths.cacheDir, false);
    if (problem) return problem;
    const linked = lstatSync(paths.dataDir).isSymbolicLink() ? ' (a symlink)' : '';
    const open: string[] = [];
    for (const file of [paths.signerFile, paths.nodeKeyFile]) {
      const st = statOrUndefined(file);
      if (st && (st.mode & KEY_MODE_MASK) !== 0) open.push(`${file} is ${mode(st)}`);
    }
    if (open.length > 0) {
      return {
        status: 'fail',
        message: `key files readable by others: ${open.join(', ')}`,
        remedy: `\`chmod 600 ${[paths.signerFile, paths.nodeKeyFile].join(' ')}\``,
      };
    }
    return { status: 'ok', message: `${paths.dataDir}${linked} is a writable directory; key files are 0600` };
  },
};
