import { accessSync, constants, lstatSync, readFileSync, statSync, type Stats } from 'node:fs';
import { parse } from 'yaml';
import type { HomePaths } from '../../config/index.js';
import type { Check, Verdict } from '../types.js';

const KEY_MODE_MASK = 0o077;
/** Read permission for group or others. */
const READABLE_BY_OTHERS = 0o044;

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

/** True when node.yml itself sets a non-empty da.auth_token (env and flags aside: this is about the file). */
function configHoldsToken(configFile: string): boolean {
  try {
    const doc = parse(readFileSync(configFile, 'utf8')) as { da?: { auth_token?: unknown } } | null;
    const token = doc?.da?.auth_token;
    return token !== undefined && token !== null && token !== '';
  } catch {
    // Unreadable or not YAML: the config check reports it.
    return false;
  }
}

/** A node.yml holding the DA token that group or others can read. */
function exposedToken(paths: HomePaths): Verdict | undefined {
  const st = statOrUndefined(paths.configFile);
  if (!st || (st.mode & READABLE_BY_OTHERS) === 0 || !configHoldsToken(paths.configFile)) return undefined;
  return {
    status: 'warn',
    message: `${paths.configFile} holds da.auth_token and is readable by ${st.mode & 0o004 ? 'every user' : 'its group'} (mode ${mode(st)})`,
    remedy: `\`chmod 600 ${paths.configFile}\``,
  };
}

export const dataDirCheck: Check = {
  id: 'data-dir',
  verifies:
    'data/ exists, is a directory owned by and writable for this user (data/store and data/cache too); the key files config/signer.json and config/node_key.json are 0600; a node.yml holding da.auth_token is not readable by group or others',
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
    return exposedToken(paths) ?? { status: 'ok', message: `${paths.dataDir}${linked} is a writable directory; key files are 0600` };
  },
};
