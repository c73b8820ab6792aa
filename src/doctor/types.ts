import type { Config, HomePaths } from '../config/index.js';
import type { NodeProcess } from './process.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of the doctor's report; `--json` prints an array of these, in check order. */
export interface CheckResult {
  id: CheckId;
  status: CheckStatus;
  /** What the check saw, in plain words. */
  message: string;
  /** What to do about it; empty when the check passed. */
  remedy: string;
}

/** What a check returns; the runner adds the id. */
export interface Verdict {
  status: CheckStatus;
  message: string;
  remedy?: string;
}

/** Every check, in the order the report lists them. */
export const CHECK_IDS = ['config', 'data-dir', 'ports', 'da-health', 'da-sync', 'da-auth', 'da-balance', 'engine', 'peers', 'node', 'genesis', 'ha'] as const;
export type CheckId = (typeof CHECK_IDS)[number];

export interface Check {
  id: CheckId;
  /** What it verifies, for `--list-checks`. */
  verifies: string;
  run(ctx: DoctorContext, signal: AbortSignal): Promise<Verdict>;
}

/** Where one raw config value came from, for messages that name the file, env var or flag to fix. */
export interface RawValue {
  value: string | boolean | number;
  source: string;
}

/** Everything the checks share; built once per run. */
export interface DoctorContext {
  home: string;
  paths: HomePaths;
  /**
   * The config the checks use: what `start` would load, or, when that fails,
   * every key that is valid on its own (defaults for the rest), so one bad key
   * does not blind the other checks. The `config` check reports the problem.
   */
  config: Config;
  /** Why `start` could not load the config (the `config` check's subject); undefined when it loads. */
  configError: Error | undefined;
  /** Values as written (node.yml < env < flags), valid or not, by YAML path. */
  raw: ReadonlyMap<string, RawValue>;
  /** Each check's bound, in milliseconds. */
  timeoutMs: number;
  /** The checks of this run: a check whose cause another selected check reports defers to it. */
  selected: ReadonlySet<CheckId>;
  /** The node log to scan (`--log`, else log.file, else the log `start --dashboard` wrote), with where it came from. */
  log: { file: string; source: string } | undefined;
  /** This home's node process, from data/node.pid. */
  node: NodeProcess;
}
