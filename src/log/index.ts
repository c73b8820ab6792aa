import { pino, type Logger, type LevelWithSilent } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { builtFile, roundForPeople } from '../util/index.js';
import type { LogFile } from './file.js';

export type { Logger };
export type { LogFile };
export { readLogText } from './tail.js';

export interface LogOptions {
  level: LevelWithSilent;
  /** text: one readable line each (coloured on a TTY); json: one object a line with level, time, module, msg and context fields. */
  format: 'text' | 'json';
  /**
   * Where lines go besides the file: stderr (fd 2) by default, as DESIGN.md §11
   * says; this stream instead (tests); or nowhere (`start --dashboard` keeps the screen for itself).
   */
  destination?: { write(line: string): unknown } | false;
  /** Also append lines to this file (its directory created), rotated by size. */
  file?: LogFile;
  /** Strings no line may contain (the DA token, the JWT secret, key material), scrubbed wherever they appear in a line. */
  secrets?: readonly string[];
}

/** A warning or error the node logged, kept in memory for the dashboard's warnings panel. */
export interface LogProblem {
  /** Unix ms. */
  time: number;
  level: 'warn' | 'error' | 'fatal';
  module?: string;
  msg: string;
  /** The stable code of an error or fatal line (`DA_SUBMIT_FAILED`), or of a warning that has one. */
  code?: string;
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
const ERROR_LEVEL = 50;

function problemOf(args: unknown[], level: LogProblem['level'], bindings: Record<string, unknown>, scrub: (text: string) => string): LogProblem {
  const [first, second] = args;
  const fields = typeof first === 'object' && first !== null ? (first as Record<string, unknown>) : {};
  const msg = typeof first === 'string' ? first : typeof second === 'string' ? second : first instanceof Error ? first.message : '';
  const err = fields.err instanceof Error ? fields.err.message : fields.err;
  const detail = [fields.error, err, fields.reason].find((d): d is string => typeof d === 'string' && d !== '');
  const module = typeof bindings.module === 'string' ? bindings.module : undefined;
  const code = [fields.code, bindings.code].find((c): c is string => typeof c === 'string');
  // The dashboard and /node_info show these: they are scrubbed as the lines are.
  return { time: Date.now(), level, msg: scrub(msg), ...(module ? { module } : {}), ...(code ? { code } : {}), ...(detail ? { detail: scrub(detail) } : {}) };
}

/** Paths pino blanks whatever a caller passes, so secrets never reach a log line. */
const REDACT_PATHS = [
  'token',
  'auth_token',
  'authToken',
  'jwt',
  'jwt_secret',
  'priv_key',
  'privateKey',
  'secret',
  'authorization',
  '*.token',
  '*.auth_token',
  '*.authToken',
  '*.jwt',
  '*.jwt_secret',
  '*.priv_key',
  '*.privateKey',
  '*.secret',
  '*.authorization',
  '*.headers.authorization',
  'config.da.auth_token',
  'grpc_auth_token',
  '*.grpc_auth_token',
  'config.execution.grpc_auth_token',
  'password',
  '*.password',
  'config.ha.password',
];

const REDACTED = '[redacted]';
/** Shorter secrets are not scrubbed from text: replacing every "abc" would garble lines and protect nothing. */
const MIN_SECRET_LENGTH = 6;

/**
 * Replaces every occurrence of the secrets in a text, also as JSON escapes
 * them, so a secret is caught inside a message or an error text too, where
 * no redaction path reaches.
 */
export function secretScrubber(secrets: readonly string[]): (text: string) => string {
  const forms = new Set(secrets.filter((s) => s.length >= MIN_SECRET_LENGTH).flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]));
  if (forms.size === 0) return (text) => text;
  // Longest first, so a secret that contains another is replaced whole.
  const pattern = new RegExp(
    [...forms]
      .sort((a, b) => b.length - a.length)
      .map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('|'),
    'g',
  );
  return (text) => text.replace(pattern, REDACTED);
}

/** The `code` an error or fatal line gets when its caller gave none: the module's, `DA_SUBMITTER_ERROR`. */
export function defaultErrorCode(module: unknown): string {
  return typeof module === 'string' && module !== '' ? `${module.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_ERROR` : 'NODE_ERROR';
}

/**
 * The arguments of an error or fatal call with a `code` added when neither
 * they nor the logger's bindings carry one, so alerts can always match on it.
 */
function withCode(args: unknown[], bindings: Record<string, unknown>): unknown[] {
  const [first, ...rest] = args;
  if (bindings.code !== undefined) return args;
  if (first instanceof Error) return [{ err: first, code: defaultErrorCode(bindings.module) }, ...(rest.length > 0 ? rest : [first.message])];
  if (typeof first === 'object' && first !== null) {
    return 'code' in first ? args : [{ ...first, code: defaultErrorCode(bindings.module) }, ...rest];
  }
  return [{ code: defaultErrorCode(bindings.module) }, ...args];
}

const FORMAT_OPTIONS = {
  translateTime: 'SYS:HH:MM:ss.l',
  singleLine: true,
  // No key is error-like: an `err` or `error` stays on its event's line (stack included, escaped), so one event is one line.
  errorLikeObjectKeys: [],
  // `status` holds the periodic status line's fields, which its message already says in words.
  ignore: 'pid,hostname,module,status',
  messageFormat: '{if module}[{module}] {end}{msg}',
  // Rounded for a person reading the line; the JSON format keeps the exact number. On a single line pino-pretty
  // writes what a prettifier returns as JSON, so a number returned stays a number (its types say string).
  customPrettifiers: { gasPrice: (v: unknown) => (typeof v === 'number' ? roundForPeople(v) : v) as string },
};

type FileSink = ReturnType<typeof openLogFile>;

/** Where each (already scrubbed) JSON line goes, in the configured format; and the log file's stream, to flush. */
function sinks(opts: LogOptions): { writes: Array<(line: string) => void>; file?: FileSink } {
  const out: Array<(line: string) => void> = [];
  const format = (colorize: boolean) => (opts.format === 'text' ? prettyFactory({ ...FORMAT_OPTIONS, colorize }) : (line: string) => line);
  if (opts.destination !== false) {
    const dest = opts.destination ?? pino.destination({ fd: 2, sync: true });
    const toLine = format(opts.destination === undefined && process.stderr.isTTY === true && !process.env.NO_COLOR);
    out.push((line) => dest.write(toLine(line)));
  }
  if (opts.file) {
    const file = openLogFile(opts.file);
    const toLine = format(false);
    out.push((line) => file.write(toLine(line)));
    return { writes: out, file };
  }
  return { writes: out };
}

/**
 * The log file's stream: lines go to a worker thread that appends them and
 * rotates the file (rotating-file.ts), so file I/O never blocks the event loop.
 * pino flushes and ends it on exit, process.exit included. A file that cannot
 * be opened fails here, at once; a write that fails later is told once on
 * stderr and does not stop the node.
 */
function openLogFile(file: LogFile): { write(line: string): unknown; flush(done: (err?: Error) => void): void } {
  mkdirSync(dirname(file.path), { recursive: true });
  closeSync(openSync(file.path, 'a'));
  const stream = pino.transport({ target: builtFile(import.meta.url, './rotating-file.js'), options: file });
  let failing = false;
  stream.on('error', (err: Error) => {
    if (!failing) process.stderr.write(`cannot write the log file ${file.path}: ${err.message}\n`);
    failing = true;
  });
  return stream;
}

/** The root logger; modules take `logger.child({ module: 'producer' })`. */
export function createLogger(opts: LogOptions): Logger {
  const problems: LogProblem[] = [];
  const scrub = secretScrubber(opts.secrets ?? []);
  const targets = sinks(opts);
  // pino serialises each line once, as JSON; it is scrubbed, then written to every sink in its format.
  const stream = {
    write(line: string) {
      const clean = scrub(line);
      for (const write of targets.writes) write(clean);
    },
    /** logger.flush(cb): calls back once the log file holds every line logged before. */
    flush(done: (err?: Error) => void) {
      if (targets.file) targets.file.flush(done);
      else done();
    },
  };
  const logger = pino(
    {
      level: opts.level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      hooks: {
        logMethod(this: Logger, args: unknown[], method: (...a: unknown[]) => void, level: number) {
          const problemLevel = PROBLEM_LEVELS[level];
          if (problemLevel) {
            const bindings = this.bindings();
            if (level >= ERROR_LEVEL) args = withCode(args, bindings);
            problems.push(problemOf(args, problemLevel, bindings, scrub));
            if (problems.length > PROBLEMS_KEPT) problems.shift();
          }
          method.apply(this, args);
        },
      },
    },
    stream,
  );
  problemsByLogger.set(logger, problems);
  return logger;
}

/** A logger that drops everything, for library use and tests. */
export const silentLogger = (): Logger => pino({ level: 'silent' });
