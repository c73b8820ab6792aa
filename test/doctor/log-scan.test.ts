import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger } from '../../src/log/index.js';
import { describeStatus, type StatusFields } from '../../src/node/notifier.js';
import { initHome } from '../../src/home/index.js';
import type { CheckResult } from '../../src/doctor/index.js';
import { killAll, runCli, tempHome } from '../helpers/daemon.js';
import { DaServer } from '../helpers/da.js';

const homes: Array<ReturnType<typeof tempHome>> = [];
let da: DaServer;

beforeAll(async () => {
  const h = tempHome('noded-logscan-da-');
  homes.push(h);
  da = await DaServer.start(h.dir);
});
afterAll(async () => {
  await killAll();
  for (const h of homes) h.cleanup();
});

const CODE_19 = 'blob.Submit to DA node 127.0.0.1:26658: broadcast tx error: codespace sdk, code 19: tx already in mempool';

/**
 * A node log as the node writes it, through the real logger in `format`:
 * `failures` code-19 submission failures, each followed by three periodic
 * status lines that echo it as the last error.
 */
function writeNodeLog(path: string, format: 'text' | 'json', failures: number): void {
  const logger = createLogger({ level: 'info', format, destination: false, file: { path, maxBytes: 1 << 20, maxFiles: 1 } });
  const submitter = logger.child({ module: 'da-submitter' });
  const status = logger.child({ module: 'status' });
  for (let attempt = 1; attempt <= failures; attempt++) {
    submitter.error({ code: 'DA_SUBMIT_FAILED', error: CODE_19, reason: 'already_in_mempool', attempt, heights: '1-4' }, 'DA layer submission failed');
    for (let echo = 0; echo < 3; echo++) {
      const fields: StatusFields = {
        height: 4 + echo,
        bestKnown: 4 + echo,
        catchingUp: false,
        unready: null,
        daIncluded: 0,
        daPending: 4 + echo,
        maxPending: 100,
        peers: 0,
        lastError: { code: 'DA_SUBMIT_FAILED', msg: 'DA layer submission failed', detail: CODE_19, time: new Date().toISOString() },
      };
      status.info({ status: fields }, describeStatus(fields));
    }
  }
}

/** An aggregator home whose DA is the test's DA server, with extra node.yml keys. */
function home(config: Record<string, string> = {}): string {
  const h = tempHome('noded-logscan-');
  homes.push(h);
  initHome({ home: h.dir, chainId: 'logscan-1', aggregator: true, force: false, config: { 'da.address': da.address, ...config } });
  return h.dir;
}

async function daBalance(homeDir: string, args: string[] = []): Promise<CheckResult> {
  const res = await runCli(['doctor', '--home', homeDir, '--check', 'da-balance', '--timeout', '5s', '--json', ...args]);
  let results: CheckResult[];
  try {
    results = JSON.parse(res.stdout) as CheckResult[];
  } catch {
    throw new Error(`doctor printed no JSON (exit ${res.code}):\n${res.stdout}\n${res.stderr}`);
  }
  return results[0]!;
}

describe('doctor scans the node log without flags, and counts each failure once', () => {
  it.each(['text', 'json'] as const)('log.file from node.yml (%s lines): the failures, not their echoes in the status line', async (format) => {
    const dir = home({ 'log.file': 'logs/node.log', 'log.format': format });
    writeNodeLog(join(dir, 'logs', 'node.log'), format, 2);
    const result = await daBalance(dir);
    expect(result.status, JSON.stringify(result)).toBe('fail');
    expect(result.message).toMatch(
      /^2 DA submission failure\(s\) with codespace sdk code 19 in .*logs\/node\.log, the last at \S+, and no submission succeeded since/,
    );
    expect(result.remedy).toContain('raise --node.da.gas_price');
  });

  it('--log overrides log.file', async () => {
    const dir = home({ 'log.file': 'logs/node.log' });
    writeNodeLog(join(dir, 'logs', 'node.log'), 'text', 2);
    const other = join(dir, 'other.log');
    writeNodeLog(other, 'text', 3);
    const result = await daBalance(dir, ['--log', other]);
    expect(result.message).toMatch(/^3 DA submission failure\(s\) .* in .*other\.log/);
  });

  it('with log.file unset, the log that `start --dashboard` writes (logs/node.log) is scanned', async () => {
    const dir = home();
    mkdirSync(join(dir, 'logs'));
    writeNodeLog(join(dir, 'logs', 'node.log'), 'text', 1);
    const result = await daBalance(dir);
    expect(result.status, JSON.stringify(result)).toBe('fail');
    expect(result.message).toMatch(/^1 DA submission failure\(s\) with codespace sdk code 19 in .*logs\/node\.log/);
  });

  it('with no log at all, it says how to give one', async () => {
    const dir = home();
    const result = await daBalance(dir);
    expect(result).toMatchObject({ status: 'ok', message: expect.stringContaining('no log to scan (give --log FILE, or set log.file)') });
  });
});
