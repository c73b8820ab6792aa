import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger, defaultErrorCode, recentProblems, secretScrubber, type LogOptions } from '../../src/log/index.js';
import { tempHome } from '../helpers/daemon.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A logger whose stderr-side lines are kept in memory. */
function capture(opts: Partial<LogOptions> = {}) {
  let text = '';
  const logger = createLogger({ level: 'info', format: 'json', destination: { write: (l: string) => (text += l) }, ...opts });
  return { logger, text: () => text, lines: () => text.split('\n').filter(Boolean) };
}

const TOKEN = 'da-token-8f3a9c1e77';
const JWT = 'ab'.repeat(32);

describe('createLogger', () => {
  it('json: one object a line with level, time, module and msg; context fields kept', () => {
    const { logger, lines } = capture();
    logger.child({ module: 'da' }).info({ height: 7 }, 'submitted blocks to DA');
    logger.child({ module: 'producer' }).warn('slow');
    const recs = lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(recs).toHaveLength(2);
    for (const r of recs) expect(Object.keys(r)).toEqual(expect.arrayContaining(['level', 'time', 'module', 'msg']));
    expect(recs[0]).toMatchObject({ level: 30, module: 'da', height: 7, msg: 'submitted blocks to DA' });
    expect(Number.isNaN(Date.parse(String(recs[0]!.time)))).toBe(false);
  });

  it('text rounds a gas price to 4 significant digits for a person; json keeps the exact number', () => {
    const line = { code: 'DA_SUBMIT_FAILED', reason: 'already_in_mempool', gasPrice: 0.0020513456789 };
    const text = capture({ format: 'text' });
    text.logger.child({ module: 'da-submitter' }).error(line, 'DA layer submission failed');
    expect(text.text()).toContain('"gasPrice":0.002051}');
    expect(text.text()).not.toContain('0.0020513');
    const json = capture();
    json.logger.child({ module: 'da-submitter' }).error(line, 'DA layer submission failed');
    expect(JSON.parse(json.lines()[0]!)).toMatchObject({ gasPrice: 0.0020513456789 });
  });

  it('every error and fatal line carries a code: the one given, else one named after the module', () => {
    const { logger, lines } = capture();
    const da = logger.child({ module: 'da-submitter' });
    da.error({ code: 'DA_SUBMIT_FAILED', error: 'refused' }, 'DA layer submission failed');
    da.error('no fields');
    da.error(new Error('an error alone'));
    da.error({ attempt: 2 }, 'fields without a code');
    logger.fatal({ err: new Error('boom') }, 'fatal, root logger');
    da.warn('a warning needs none');
    const recs = lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(recs.map((r) => r.code)).toEqual(['DA_SUBMIT_FAILED', 'DA_SUBMITTER_ERROR', 'DA_SUBMITTER_ERROR', 'DA_SUBMITTER_ERROR', 'NODE_ERROR', undefined]);
    expect(recs[2]).toMatchObject({ msg: 'an error alone', err: { message: 'an error alone' } });
    expect(recs[3]).toMatchObject({ attempt: 2 });
    expect(defaultErrorCode('local-da')).toBe('LOCAL_DA_ERROR');
    expect(recentProblems(logger).map((p) => p.code)).toEqual([
      'DA_SUBMIT_FAILED',
      'DA_SUBMITTER_ERROR',
      'DA_SUBMITTER_ERROR',
      'DA_SUBMITTER_ERROR',
      'NODE_ERROR',
      undefined,
    ]);
  });

  it('secrets are scrubbed wherever a caller puts them: fields, messages, error texts, stacks, the problems list', () => {
    const { logger, text } = capture({ secrets: [TOKEN, JWT, 'short'] });
    const log = logger.child({ module: 'da' });
    log.info({ token: 'any', auth_token: 'any', config: { da: { auth_token: TOKEN } }, headers: { authorization: `Bearer ${TOKEN}` } }, 'paths');
    log.info(`token in a message: ${TOKEN}`);
    log.error({ code: 'DA_SUBMIT_FAILED', error: `401 for Bearer ${TOKEN}` }, 'DA layer submission failed');
    log.error({ code: 'X', err: new Error(`jwt ${JWT} rejected`) }, 'engine');
    log.info({ nested: { deeper: [JWT, TOKEN] } }, 'deep');
    const out = text();
    expect(out).not.toContain(TOKEN);
    expect(out).not.toContain(JWT);
    expect(out).toContain('[redacted]');
    // Shorter than a real secret: not hunted in text (it would garble lines), but still blanked by field name.
    expect(out).not.toContain('"token":"any"');
    for (const p of recentProblems(logger)) expect(JSON.stringify(p)).not.toContain(TOKEN);
  });

  it('a secret with characters JSON escapes is caught in its escaped form', () => {
    const odd = 'tok"en\\with/quotes';
    expect(secretScrubber([odd])(JSON.stringify({ msg: `x ${odd} y` }))).toBe('{"msg":"x [redacted] y"}');
  });

  it('text: one readable line per event, module in brackets, no colour when not a TTY', () => {
    const { logger, text } = capture({ format: 'text', secrets: [TOKEN] });
    logger.child({ module: 'da' }).error({ code: 'DA_SUBMIT_FAILED', reason: 'refused' }, `DA layer submission failed for ${TOKEN}`);
    logger.child({ module: 'status' }).info({ status: { height: 3 } }, 'synced | height 3');
    logger.child({ module: 'node' }).fatal({ code: 'UNEXPECTED_ERROR', err: new Error('boom') }, 'fatal error; stopping the node');
    const [first, second, third, ...rest] = text().split('\n');
    expect(first).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] ERROR: \[da\] DA layer submission failed for \[redacted\] \{"code":"DA_SUBMIT_FAILED","reason":"refused"\}$/,
    );
    // The status line's fields are its message, in words: not repeated as JSON.
    expect(second).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[status\] synced \| height 3$/);
    // One event, one line: an error's stack stays on it, escaped.
    expect(third).toMatch(
      /FATAL: \[node\] fatal error; stopping the node \{"code":"UNEXPECTED_ERROR","err":\{"type":"Error","message":"boom","stack":"Error: boom\\n/,
    );
    expect(rest).toEqual(['']);
    expect(text()).not.toContain('\u001b[');
  });

  it('log.file: lines go to stderr and the file, in the configured format; without a destination (dashboard) only to the file', async () => {
    const dir = tempHome('noded-log-');
    cleanups.push(dir.cleanup);
    const path = join(dir.dir, 'logs', 'node.log');
    const file = { path, maxBytes: 1 << 20, maxFiles: 2 };
    const both = capture({ file, secrets: [TOKEN] });
    both.logger.child({ module: 'node' }).info(`both ${TOKEN}`);
    expect(both.lines()).toHaveLength(1);
    // The file is written by a worker thread: flush waits until it holds the line.
    await new Promise((resolve) => both.logger.flush(resolve));
    const fileOnly = createLogger({ level: 'info', format: 'text', destination: false, file });
    fileOnly.child({ module: 'node' }).info('file only');
    await new Promise((resolve) => fileOnly.flush(resolve));
    const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
    expect(JSON.parse(lines[0]!)).toMatchObject({ module: 'node', msg: 'both [redacted]' });
    expect(lines[1]).toMatch(/INFO: \[node\] file only$/);
  });
});
