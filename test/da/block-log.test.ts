import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../src/log/index.js';
import { BLOCK_LOG_FILE, BlockLog, type BlockSummary, type SealedBlock, type StoredBlob } from '../../src/da/local/block-log.js';
import { localCommitment } from '../../src/da/local/index.js';
import { daNamespace } from '../../src/config/index.js';
import { tempHome } from '../helpers/daemon.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function newDir(): string {
  const h = tempHome('noded-block-log-');
  cleanups.push(h.cleanup);
  return join(h.dir, 'local-da');
}

async function openLog(dir: string): Promise<{ log: BlockLog; replayed: BlockSummary[] }> {
  const replayed: BlockSummary[] = [];
  const log = await BlockLog.open(dir, silentLogger(), (b) => replayed.push(b));
  cleanups.push(() => log.close());
  return { log, replayed };
}

function stored(namespace: Uint8Array, text: string): StoredBlob {
  const data = Buffer.from(text);
  return {
    namespace: Buffer.from(namespace).toString('base64'),
    data: data.toString('base64'),
    commitment: localCommitment(namespace, data).toString('base64'),
  };
}

const lines = (dir: string) => readFileSync(join(dir, BLOCK_LOG_FILE), 'utf8').split('\n');
const A = daNamespace('block-log-a');
const B = daNamespace('block-log-b');

describe('BlockLog', () => {
  it('carries on a log written by earlier servers (height and time first) with lines that read back as the same blocks', async () => {
    const dir = newDir();
    mkdirSync(dir, { recursive: true });
    const first = [stored(A, 'one'), stored(B, 'two')];
    const second = [stored(A, 'three')];
    const old: SealedBlock = { height: 1, time: '2025-01-01T00:00:00.000Z', blobs: second };
    writeFileSync(join(dir, BLOCK_LOG_FILE), JSON.stringify(old) + '\n');
    const blocks: SealedBlock[] = [
      old,
      { height: 2, time: '2025-01-01T00:00:00.100Z', blobs: [] },
      { height: 3, time: '2025-01-01T00:00:00.200Z', blobs: [...first, ...second] },
    ];
    const { log, replayed } = await openLog(dir);
    const sealed = [...replayed, log.seal(2, blocks[1]!.time)];
    log.add(first);
    log.add(second);
    sealed.push(log.seal(3, blocks[2]!.time));
    expect(sealed.map((s) => s.namespaces)).toEqual([[second[0]!.namespace], [], [first[0]!.namespace, first[1]!.namespace]]);
    for (const [i, s] of sealed.entries()) expect(await log.read(s.span, s.height)).toEqual(blocks[i]);
    // Each line is one JSON object, which is all a reader of either order looks for.
    expect(lines(dir).map((l) => (l ? JSON.parse(l) : l))).toEqual([...blocks, '']);
    await log.close();

    const again = await openLog(dir);
    expect(again.replayed).toEqual(sealed);
  });

  it('cuts off a block that was being filled when the server stopped or died: none of its blobs was confirmed', async () => {
    const dir = newDir();
    const { log } = await openLog(dir);
    const sealed = log.seal(1, '2025-01-01T00:00:00.000Z');
    log.add([stored(A, 'never sealed')]);
    // A crash leaves the unfinished line: a copy of the file as it is now.
    const crashed = newDir();
    mkdirSync(crashed, { recursive: true });
    copyFileSync(join(dir, BLOCK_LOG_FILE), join(crashed, BLOCK_LOG_FILE));
    expect(lines(crashed)[1]).toMatch(/^\{"blobs":\[\{"namespace":"[^"]+","data":"[^"]+","commitment":"[^"]+"\}$/);
    await log.close();
    expect(lines(dir)).toEqual([JSON.stringify({ blobs: [], height: 1, time: '2025-01-01T00:00:00.000Z' }), '']);

    for (const d of [dir, crashed]) {
      const { log: reopened, replayed } = await openLog(d);
      expect(replayed).toEqual([sealed]);
      reopened.add([stored(B, 'sealed')]);
      const next = reopened.seal(2, '2025-01-01T00:00:00.100Z');
      expect((await reopened.read(next.span, 2)).blobs).toEqual([stored(B, 'sealed')]);
    }
  });

  it('keeps the commitment earlier servers gave: sha256(namespace ‖ data)', () => {
    const data = Buffer.from('commitment');
    expect(localCommitment(A, data)).toEqual(createHash('sha256').update(A).update(data).digest());
  });
});
