import { pino, type Logger, type LevelWithSilent } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

export interface LogOptions {
  level: LevelWithSilent;
  format: 'text' | 'json';
  /** Where lines go; stderr (fd 2) by default, as DESIGN.md §11 says. */
  destination?: NodeJS.WritableStream;
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
  const base = { level: opts.level, base: undefined, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  if (opts.format === 'json') {
    return pino({ ...base, timestamp: pino.stdTimeFunctions.isoTime }, opts.destination ?? pino.destination({ fd: 2, sync: true }));
  }
  const stream = pretty({
    destination: opts.destination ?? 2,
    sync: true,
    colorize: opts.destination ? false : process.stderr.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
    ignore: 'pid,hostname,module',
    messageFormat: '{if module}[{module}] {end}{msg}',
  });
  return pino(base, stream);
}

/** A logger that drops everything, for library use and tests. */
export const silentLogger = (): Logger => pino({ level: 'silent' });
