import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../src/log/index.js';
import { BLOCK_LOG_FILE, BlockLog, logBlobs, type BlockSummary, type SealedBlock, type StoredBlob } from '../../src/da/local/block-log.js';
import { localCommitment } from '../../src/da/local/index.js';
import { daNamespace } from '../../src/config/index.js';
import { tempHome } from '../helpers/daemon.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

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

const A = daNamespace('block-log-a');
const B = daNamespace('block-log-b');

describe('BlockLog', () => {
  it('writes each block as the JSON line earlier servers wrote (JSON.stringify of the block), so old and new logs replay alike', async () => {
    const h = tempHome('noded-block-log-');
    cleanups.push(h.cleanup);
    const dir = join(h.dir, 'local-da');
    const first = [stored(A, 'one'), stored(B, 'two')];
    const second = [stored(A, 'three')];
    const blocks: SealedBlock[] = [
      { height: 1, time: '2025-01-01T00:00:00.000Z', blobs: [] },
      { height: 2, time: '2025-01-01T00:00:00.100Z', blobs: [...first, ...second] },
      { height: 3, time: '2025-01-01T00:00:00.200Z', blobs: second },
    ];
    const { log } = await openLog(dir);
    const appended = [
      log.append(1, blocks[0]!.time, []),
      log.append(2, blocks[1]!.time, [logBlobs(first), logBlobs(second)]),
      log.append(3, blocks[2]!.time, [logBlobs(second)]),
    ];
    expect(readFileSync(join(dir, BLOCK_LOG_FILE), 'utf8')).toBe(blocks.map((b) => JSON.stringify(b) + '\n').join(''));
    expect(appended.map((s) => s.namespaces)).toEqual([[], [first[0]!.namespace, first[1]!.namespace], [second[0]!.namespace]]);
    expect(await log.read(appended[1]!.span, 2)).toEqual(blocks[1]);
    await log.close();

    const again = await openLog(dir);
    expect(again.replayed).toEqual(appended);
  });

  it('keeps the commitment earlier servers gave: sha256(namespace ‖ data)', () => {
    const data = Buffer.from('commitment');
    expect(localCommitment(A, data)).toEqual(createHash('sha256').update(A).update(data).digest());
  });
});
