import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createLogger, readLogText } from '../../src/log/index.js';
import { initHome } from '../../src/home/index.js';
import { CHECKS, buildContext, runCheck } from '../../src/doctor/index.js';
import { tempHome } from '../helpers/daemon.js';
import { packageRoot } from '../../src/util/index.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function dir(): string {
  const d = tempHome('noded-rotate-');
  cleanups.push(d.cleanup);
  return d.dir;
}

/** A JSON logger writing only to `path`, rotated at `maxBytes`, keeping `maxFiles`. */
function fileLogger(path: string, maxBytes: number, maxFiles: number) {
  return createLogger({ level: 'info', format: 'json', destination: false, file: { path, maxBytes, maxFiles } }).child({ module: 'test' });
}

/** Resolves once the log file holds every line logged before (pino's flush, through the worker thread to the file). */
const flushed = (log: { flush(cb: (err?: Error) => void): void }) =>
  new Promise<void>((resolve, reject) => log.flush((err) => (err ? reject(err) : resolve())));

const seqs = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { seq: number }).seq);

describe('log file rotation', () => {
  it('with a small size cap the file rotates, keeps exactly max_files rotated files, each rotated at the cap, and loses no kept line', async () => {
    const d = dir();
    const path = join(d, 'node.log');
    const log = fileLogger(path, 2048, 3);
    for (let seq = 0; seq < 400; seq++) log.info({ seq }, 'a line long enough to fill a small log file quickly');
    await flushed(log);
    expect(readdirSync(d).sort()).toEqual(['node.log', 'node.log.1', 'node.log.2', 'node.log.3']);
    const files = ['node.log.3', 'node.log.2', 'node.log.1', 'node.log'].map((f) => join(d, f));
    // A file is rotated by the line that takes it to the cap: it ends less than one line past it.
    const longestLine = Math.max(
      ...files.flatMap((f) =>
        readFileSync(f, 'utf8')
          .split('\n')
          .map((l) => l.length + 1),
      ),
    );
    for (const f of files) expect(statSync(f).size).toBeLessThan(2048 + longestLine);
    for (const f of files.slice(0, -1)) expect(statSync(f).size).toBeGreaterThanOrEqual(2048);
    // Oldest file first, the kept lines are one unbroken run ending at the last line logged.
    const kept = files.flatMap((f) => seqs(readFileSync(f, 'utf8')));
    expect(kept.at(-1)).toBe(399);
    expect(kept).toEqual(kept.map((_, i) => kept[0]! + i));
  });

  it('a restart appends to the file it finds; a smaller max_files drops the rotated files past it', async () => {
    const d = dir();
    const path = join(d, 'node.log');
    const first = fileLogger(path, 1024, 4);
    for (let seq = 0; seq < 200; seq++) first.info({ seq }, 'filling');
    await flushed(first);
    expect(existsSync(`${path}.4`)).toBe(true);
    const before = statSync(path).size;
    const second = fileLogger(path, 1024, 2);
    second.info({ seq: 200 }, 'x');
    await flushed(second);
    expect(statSync(path).size).toBeGreaterThan(before);
    for (let seq = 201; seq < 260; seq++) second.info({ seq }, 'filling');
    await flushed(second);
    expect(readdirSync(d).sort()).toEqual(['node.log', 'node.log.1', 'node.log.2']);
  });

  it('max_files 0 keeps no rotated file: the log starts over', async () => {
    const d = dir();
    const log = fileLogger(join(d, 'node.log'), 1024, 0);
    for (let seq = 0; seq < 100; seq++) log.info({ seq }, 'filling');
    await flushed(log);
    expect(readdirSync(d)).toEqual(['node.log']);
    expect(seqs(readFileSync(join(d, 'node.log'), 'utf8')).at(-1)).toBe(99);
  });

  it('lines logged just before process.exit are in the file: pino flushes the worker thread on exit', async () => {
    const d = dir();
    const path = join(d, 'node.log');
    // The built logger (vitest's globalSetup builds dist/) in a process of its own, which exits right after logging.
    const script = [
      `const { createLogger } = await import(${JSON.stringify(join(packageRoot(), 'dist', 'src', 'log', 'index.js'))});`,
      `const log = createLogger({ level: 'info', format: 'json', destination: false, file: { path: ${JSON.stringify(path)}, maxBytes: 1 << 30, maxFiles: 1 } });`,
      // Once the worker runs (a flush answered), as in a node that has been up a while.
      `log.info({ seq: 0 }, 'first');`,
      'await new Promise((resolve) => log.flush(resolve));',
      `for (let seq = 1; seq < 5000; seq++) log.info({ seq }, 'a line logged just before exit');`,
      'process.exit(3);',
    ].join('\n');
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    const code = await new Promise((resolve) => child.on('exit', resolve));
    expect(code, stderr).toBe(3);
    expect(seqs(readFileSync(path, 'utf8')), stderr).toEqual([...Array(5000).keys()]);
  });

  it('readLogText reads the latest lines across a rotation, oldest first, from a line boundary', async () => {
    const d = dir();
    const path = join(d, 'node.log');
    const log = fileLogger(path, 4096, 2);
    for (let seq = 0; seq < 100; seq++) log.info({ seq }, 'filling');
    await flushed(log);
    const live = seqs(readFileSync(path, 'utf8'));
    expect(live.length).toBeLessThan(100);
    const tail = seqs(await readLogText(path, 6000));
    expect(tail.length).toBeGreaterThan(live.length);
    expect(tail.at(-1)).toBe(99);
    expect(tail).toEqual(tail.map((_, i) => tail[0]! + i));
    await expect(readLogText(join(d, 'missing.log'), 100)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('doctor scans log.file across a rotation: a code 19 failure just rotated into node.log.1 still fails da-balance', async () => {
    // A stand-in DA that answers nothing but "method not found": the balance check alone only warns.
    const server: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const { id } = JSON.parse(body || '{}') as { id?: number };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'method not found' } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))));
    const home = dir();
    const da = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    initHome({
      home,
      chainId: 'rotate-1',
      aggregator: true,
      force: false,
      config: { 'da.address': da, 'log.file': 'logs/node.log', 'da.request_timeout': '2s' },
    });
    const failure = {
      level: 50,
      time: new Date().toISOString(),
      module: 'da-submitter',
      code: 'DA_SUBMIT_FAILED',
      error: 'codespace sdk code 19: tx already in mempool',
      msg: 'DA layer submission failed',
    };
    mkdirSync(join(home, 'logs'));
    writeFileSync(join(home, 'logs', 'node.log.1'), `${JSON.stringify(failure)}\n`);
    writeFileSync(join(home, 'logs', 'node.log'), `${JSON.stringify({ level: 30, time: new Date().toISOString(), module: 'status', msg: 'synced' })}\n`);
    const result = await runCheck(
      CHECKS.find((c) => c.id === 'da-balance')!,
      buildContext({ home, env: {} }),
    );
    expect(result).toMatchObject({ status: 'fail', message: expect.stringMatching(/^1 DA submission failure\(s\) with codespace sdk code 19 in .*node\.log/) });
  });
});
