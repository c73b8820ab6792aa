import { pino, type Logger, type LevelWithSilent } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

export interface LogOptions {
  level: LevelWithSilent;
  format: 'text' | 'json';
  /** Where lines go; stderr (fd 2) by default, as DESIGN.md §11 says. */
  destination?: NodeJS.WritableStream;
  /** Append lines to this file (its directory created) instead; `start --dashboard` keeps the screen for itself. */
  file?: string;
}

/** A warning or error the node logged, kept in memory for the dashboard's warnings panel. */
export interface LogProblem {
  /** Unix ms. */
  time: number;
  level: 'warn' | 'error' | 'fatal';
  module?: string;
  msg: string;
  /** The error text the line carried (`error`, `err.message` or `reason`), when it had one. */
  detail?: string;
}

/** How many of the latest warnings and errors a root logger keeps. */
const PROBLEMS_KEPT = 50;
const problemsByLogger = new WeakMap<Logger, LogProblem[]>();

/** The latest warnings and errors logged through this root logger or its children, oldest first. */
export function recentProblems(logger: Logger): readonly LogProblem[] {
  return problemsByLogger.get(logger) ?? [];
}

const PROBLEM_LEVELS: Record<number, LogProblem['level']> = { 40: 'warn', 50: 'error', 60: 'fatal' };

function problemOf(args: unknown[], level: LogProblem['level'], bindings: Record<string, unknown>): LogProblem {
  const [first, second] = args;
  const fields = typeof first === 'object' && first !== null ? (first as Record<string, unknown>) : {};
  const msg = typeof first === 'string' ? first : typeof second === 'string' ? second : first instanceof Error ? first.message : '';
  const err = fields.err instanceof Error ? fields.err.message : undefined;
  const detail = [fields.error, err, fields.reason].find((d): d is string => typeof d === 'string' && d !== '');
  const module = typeof bindings.module === 'string' ? bindings.module : undefined;
  return { time: Date.now(), level, msg, ...(module ? { module } : {}), ...(detail ? { detail } : {}) };
}

/** Paths pino blanks whatever a caller passes, so secrets never reach a log line. */
const REDACT_PATHS = [
  'token',
  'auth_token',
  'authToken',
  'jwt',
  'priv_key',
  'privateKey',
  'secret',
  '*.token',
  '*.auth_token',
  '*.authToken',
  '*.jwt',
  '*.priv_key',
  '*.secret',
  'config.da.auth_token',
];

/** The root logger; modules take `logger.child({ module: 'producer' })`. */
export function createLogger(opts: LogOptions): Logger {
  const problems: LogProblem[] = [];
  const base = {
    level: opts.level,
    base: undefined,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    hooks: {
      logMethod(this: Logger, args: unknown[], method: (...a: unknown[]) => void, level: number) {
        const problemLevel = PROBLEM_LEVELS[level];
        if (problemLevel) {
          problems.push(problemOf(args, problemLevel, this.bindings()));
          if (problems.length > PROBLEMS_KEPT) problems.shift();
        }
        method.apply(this, args);
      },
    },
  };
  const logger =
    opts.format === 'json'
      ? pino({ ...base, timestamp: pino.stdTimeFunctions.isoTime }, opts.destination ?? pino.destination({ ...(opts.file ? { dest: opts.file, mkdir: true } : { fd: 2 }), sync: true }))
      : pino(base, prettyStream(opts));
  problemsByLogger.set(logger, problems);
  return logger;
}

function prettyStream(opts: LogOptions) {
  return pretty({
    destination: opts.destination ?? opts.file ?? 2,
    mkdir: opts.file !== undefined,
    sync: true,
    colorize: opts.destination || opts.file ? false : process.stderr.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
    ignore: 'pid,hostname,module',
    messageFormat: '{if module}[{module}] {end}{msg}',
  });
}

/** A logger that drops everything, for library use and tests. */
export const silentLogger = (): Logger => pino({ level: 'silent' });
