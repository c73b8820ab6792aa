import { afterEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { createLogger, readLogText } from '../../src/log/index.js';
import { initHome } from '../../src/home/index.js';
import { CHECKS, buildContext, runCheck } from '../../src/doctor/index.js';
import { tempHome } from '../helpers/daemon.js';

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

const seqs = (text: string) => text.split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { seq: number }).seq);

describe('log file rotation', () => {
  it('with a small size cap the file rotates, keeps exactly max_files rotated files, each under the cap, and loses no kept line', () => {
    const d = dir();
    const path = join(d, 'node.log');
    const log = fileLogger(path, 2048, 3);
    for (let seq = 0; seq < 400; seq++) log.info({ seq }, 'a line long enough to fill a small log file quickly');
    expect(readdirSync(d).sort()).toEqual(['node.log', 'node.log.1', 'node.log.2', 'node.log.3']);
    const files = ['node.log.3', 'node.log.2', 'node.log.1', 'node.log'].map((f) => join(d, f));
    for (const f of files) expect(statSync(f).size).toBeLessThanOrEqual(2048);
    // Oldest file first, the kept lines are one unbroken run ending at the last line logged.
    const kept = files.flatMap((f) => seqs(readFileSync(f, 'utf8')));
    expect(kept.at(-1)).toBe(399);
    expect(kept).toEqual(kept.map((_, i) => kept[0]! + i));
  });

  it('a restart appends to the file it finds; a smaller max_files drops the rotated files past it', () => {
    const d = dir();
    const path = join(d, 'node.log');
    const first = fileLogger(path, 1024, 4);
    for (let seq = 0; seq < 200; seq++) first.info({ seq }, 'filling');
    expect(existsSync(`${path}.4`)).toBe(true);
    const before = statSync(path).size;
    const second = fileLogger(path, 1024, 2);
    second.info({ seq: 200 }, 'x');
    expect(statSync(path).size).toBeGreaterThan(before);
    for (let seq = 201; seq < 260; seq++) second.info({ seq }, 'filling');
    expect(readdirSync(d).sort()).toEqual(['node.log', 'node.log.1', 'node.log.2']);
  });

  it('max_files 0 keeps no rotated file: the log starts over', () => {
    const d = dir();
    const log = fileLogger(join(d, 'node.log'), 1024, 0);
    for (let seq = 0; seq < 100; seq++) log.info({ seq }, 'filling');
    expect(readdirSync(d)).toEqual(['node.log']);
    expect(seqs(readFileSync(join(d, 'node.log'), 'utf8')).at(-1)).toBe(99);
  });

  it('readLogText reads the latest lines across a rotation, oldest first, from a line boundary', async () => {
    const d = dir();
    const path = join(d, 'node.log');
    const log = fileLogger(path, 4096, 2);
    for (let seq = 0; seq < 100; seq++) log.info({ seq }, 'filling');
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
    initHome({ home, chainId: 'rotate-1', aggregator: true, force: false, config: { 'da.address': da, 'log.file': 'logs/node.log', 'da.request_timeout': '2s' } });
    const failure = { level: 50, time: new Date().toISOString(), module: 'da-submitter', code: 'DA_SUBMIT_FAILED', error: 'codespace sdk code 19: tx already in mempool', msg: 'DA layer submission failed' };
    mkdirSync(join(home, 'logs'));
    writeFileSync(join(home, 'logs', 'node.log.1'), `${JSON.stringify(failure)}\n`);
    writeFileSync(join(home, 'logs', 'node.log'), `${JSON.stringify({ level: 30, time: new Date().toISOString(), module: 'status', msg: 'synced' })}\n`);
    const result = await runCheck(CHECKS.find((c) => c.id === 'da-balance')!, buildContext({ home, env: {} }));
    expect(result).toMatchObject({ status: 'fail', message: expect.stringMatching(/^1 DA submission failure\(s\) with codespace sdk code 19 in .*node\.log/) });
  });
});
