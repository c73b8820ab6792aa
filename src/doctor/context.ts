import { existsSync, readFileSync } from 'node:fs';
import { parseDocument, stringify } from 'yaml';
import { configKeys, defaultConfig, homePaths, loadConfig, parseConfigText, resolveHomePath, type Config, type ConfigFlags } from '../config/index.js';
import { dashboardLogFile } from '../dashboard/tty.js';
import { nodeProcess } from './process.js';
import { CHECK_IDS, type CheckId, type DoctorContext, type RawValue } from './types.js';

export interface DoctorOptions {
  home: string;
  /** Config flags given on the command line, keyed by YAML path (`rpc.address`), as `start` takes them. */
  flags?: ConfigFlags;
  env?: NodeJS.ProcessEnv;
  /** Each check's bound; da.request_timeout when undefined. */
  timeoutMs?: number;
  /** Checks to run; every one when undefined or empty. */
  checks?: readonly CheckId[];
  /** Log file to scan for DA failures; log.file from the config when undefined, else the log `start --dashboard` writes. */
  logFile?: string;
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** node.yml's values as written, as far as the file parses (a syntax error keeps what came before it). */
function fileValues(file: string): Map<string, RawValue> {
  const out = new Map<string, RawValue>();
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return out;
  }
  let content: unknown;
  try {
    content = parseDocument(text, { schema: 'failsafe' }).toJS();
  } catch {
    return out;
  }
  if (!isMap(content)) return out;
  for (const [section, entries] of Object.entries(content)) {
    if (!isMap(entries)) continue;
    for (const [key, value] of Object.entries(entries)) {
      if (typeof value === 'string') out.set(`${section}.${key}`, { value, source: file });
    }
  }
  return out;
}

/** Raw values by YAML path: node.yml < env NODED_* < flags, as `start` layers them. */
export function rawConfig(home: string, flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env): Map<string, RawValue> {
  const raw = fileValues(homePaths(home).configFile);
  for (const k of configKeys()) {
    const value = env[k.env];
    if (value !== undefined && value !== '') raw.set(k.path, { value, source: `env ${k.env}` });
  }
  for (const [path, value] of Object.entries(flags)) {
    if (value !== undefined) raw.set(path, { value, source: `flag --node.${path}` });
  }
  return raw;
}

function validate(values: Record<string, RawValue['value']>): Config {
  const nested: Record<string, Record<string, unknown>> = {};
  for (const [path, value] of Object.entries(values)) {
    const dot = path.indexOf('.');
    (nested[path.slice(0, dot)] ??= {})[path.slice(dot + 1)] = value;
  }
  return parseConfigText(stringify(nested), 'config');
}

/** Every known key whose value is valid on its own, over the defaults; the cross-key rule dropped if it fails. */
export function salvageConfig(raw: ReadonlyMap<string, RawValue>): Config {
  const known = new Set(configKeys().map((k) => k.path as string));
  const good: Record<string, RawValue['value']> = {};
  for (const [path, { value }] of raw) {
    if (!known.has(path)) continue;
    try {
      validate({ [path]: value });
      good[path] = value;
    } catch {
      // Left at its default: the config check names it.
    }
  }
  try {
    return validate(good);
  } catch {
    delete good['node.block_time'];
    delete good['node.lazy_block_interval'];
  }
  try {
    return validate(good);
  } catch {
    return defaultConfig();
  }
}

/** Reads the home once for every check: config (salvaged when it does not load), pid file, log file, bounds. */
export function buildContext(opts: DoctorOptions): DoctorContext {
  const paths = homePaths(opts.home);
  const env = opts.env ?? process.env;
  const raw = rawConfig(paths.home, opts.flags, env);
  let config: Config;
  let configError: Error | undefined;
  try {
    config = loadConfig({ home: paths.home, flags: opts.flags ?? {}, env });
  } catch (err) {
    configError = err as Error;
    config = salvageConfig(raw);
  }
  const log = opts.logFile
    ? { file: opts.logFile, source: '--log' }
    : config.log.file
      ? { file: resolveHomePath(paths.home, config.log.file), source: 'log.file' }
      : // With log.file unset, `start --dashboard` writes its lines here: scan them when it did.
        existsSync(dashboardLogFile(paths.home))
        ? { file: dashboardLogFile(paths.home), source: 'the log of `start --dashboard`' }
        : undefined;
  return {
    home: paths.home,
    paths,
    config,
    configError,
    raw,
    timeoutMs: opts.timeoutMs ?? config.da.request_timeout,
    selected: new Set(opts.checks && opts.checks.length > 0 ? opts.checks : CHECK_IDS),
    log,
    node: nodeProcess(paths),
  };
}
