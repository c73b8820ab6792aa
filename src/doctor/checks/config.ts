import { existsSync } from 'node:fs';
import { ConfigError } from '../../config/index.js';
import { HomeError, readHome } from '../../home/index.js';
import type { Check, DoctorContext, Verdict } from '../types.js';

const SYNTAX = /:(\d+):(\d+): invalid YAML: ([^\n]*)/;
/** Problems about p2p.peers: the `peers` check reports those, with the format. */
const PEERS_PROBLEM = /(^|: )p2p\.peers: got /;

function configVerdict(ctx: DoctorContext): Verdict | undefined {
  const err = ctx.configError;
  if (!err) return undefined;
  const file = ctx.paths.configFile;
  if (!(err instanceof ConfigError)) {
    return { status: 'fail', message: `cannot load the config: ${err.message}`, remedy: `check ${file}` };
  }
  if (err.code === 'CONFIG_SYNTAX') {
    const m = SYNTAX.exec(err.message);
    const where = m ? `line ${m[1]}, column ${m[2]}` : 'somewhere';
    return {
      status: 'fail',
      message: `${file} is not valid YAML at ${where}: ${m?.[3] ?? err.message}`,
      remedy: `fix the YAML at ${where} of ${file} (indentation, a missing ":" or closing quote or bracket); \`noded init --force\` writes a fresh one, but also new keys`,
    };
  }
  if (err.code === 'CONFIG_UNREADABLE') {
    return { status: 'fail', message: err.message, remedy: `make ${file} readable for the user that runs the node` };
  }
  const problems = err.problems.filter((p) => !PEERS_PROBLEM.test(p));
  if (problems.length === 0) return undefined;
  return {
    status: 'fail',
    message: `the config does not validate: ${problems.join('; ')}`,
    remedy:
      err.code === 'CONFIG_UNKNOWN_KEY'
        ? `rename or remove the unknown key(s) in ${file} (each problem names where it was set); the README's configuration table lists every key`
        : `give each key named above a value of the expected form, where the problem says it was set (${file}, an env var NODED_* or a --node.* flag)`,
  };
}

export const configCheck: Check = {
  id: 'config',
  verifies:
    'config/node.yml exists, parses (line and column of a syntax error) and validates (key and expected form), with env and flags over it; genesis.json and the key files read',
  async run(ctx) {
    const file = ctx.paths.configFile;
    if (!existsSync(file)) {
      return {
        status: 'fail',
        message: `no config at ${file}: ${existsSync(ctx.home) ? 'the directory is not a node home' : `${ctx.home} does not exist`}`,
        remedy: `create the home with \`noded init --home ${ctx.home} --chain-id <id>\`, or pass the right --home (or NODED_HOME)`,
      };
    }
    const verdict = configVerdict(ctx);
    if (verdict) return verdict;
    let chainId: string;
    try {
      chainId = readHome(ctx.home).genesis.chainId;
    } catch (err) {
      if (!(err instanceof HomeError)) throw err;
      return {
        status: 'fail',
        message: err.message,
        remedy:
          err.code === 'HOME_MISSING'
            ? `restore the file from a backup (a full node copies genesis.json from its chain), or re-create the home with \`noded init --force\``
            : 'fix the file as the message says, or restore it from a backup',
      };
    }
    const peersNote = ctx.configError ? '; p2p.peers is reported by the peers check' : '';
    return {
      status: 'ok',
      message: `${file} valid; chain ${chainId}, ${ctx.config.node.aggregator ? 'aggregator' : 'full node'}, execution ${ctx.config.execution.type}${peersNote}`,
    };
  },
};
