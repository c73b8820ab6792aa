/**
 * How much memory the built-in DA holds per MB posted, and what GetAll costs
 * (issue 19, soak). Not a figure of `npm run bench`: run it beside the same
 * script on another checkout to compare, under the same load.
 *
 *   node --expose-gc --import tsx bench/local-da-memory.ts [MB posted, default 64]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DaClient, type Blob } from '../src/da/client.js';
import { daNamespace } from '../src/config/index.js';
import { silentLogger } from '../src/log/index.js';
import { LocalDa, localCommitment } from '../src/da/local/index.js';

const BLOB_BYTES = 256 * 1024;
const HEADERS = daNamespace('local-da-memory-headers');
const DATA = daNamespace('local-da-memory-data');

const MB = 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

function memory(): { heapMb: number; rssMb: number } {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return { heapMb: m.heapUsed / MB, rssMb: m.rss / MB };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function getAllLatencies(da: LocalDa, heights: bigint[]): Promise<string> {
  const client = new DaClient({ address: da.address, authToken: '', requestTimeoutMs: 30_000 });
  const ms: number[] = [];
  for (const h of heights) {
    const t0 = performance.now();
    const got = await client.getAll(h, [HEADERS, DATA]);
    ms.push(performance.now() - t0);
    if (got.length === 0) throw new Error(`height ${h} lost its blobs`);
  }
  await client.close();
  ms.sort((a, b) => a - b);
  return `GetAll of ${heights.length} heights (2 namespaces, ~${((2 * BLOB_BYTES) / MB).toFixed(1)} MB each): p50 ${percentile(ms, 50).toFixed(2)} ms, p99 ${percentile(ms, 99).toFixed(2)} ms`;
}

async function main(): Promise<void> {
  const postMb = Number(process.argv[2] ?? 64);
  const dir = mkdtempSync(join(tmpdir(), 'noded-local-da-memory-'));
  const opts = { dir, listen: '127.0.0.1:0', blockTimeMs: 20, maxBlobSize: 2 * MB, logger: silentLogger() };
  try {
    let da = await LocalDa.start(opts);
    const before = memory();
    const client = new DaClient({ address: da.address, authToken: '', requestTimeoutMs: 30_000 });
    const heights: bigint[] = [];
    for (let posted = 0, i = 0; posted < postMb * MB; posted += 2 * BLOB_BYTES, i++) {
      const blobs: Blob[] = [HEADERS, DATA].map((ns) => {
        const data = Buffer.alloc(BLOB_BYTES, i % 251);
        return { namespace: ns, data, commitment: localCommitment(ns, data) };
      });
      heights.push(await client.submit(blobs, { is_gas_price_set: true }));
    }
    await client.close();
    const after = memory();
    console.log(`posted ${postMb} MB in ${heights.length} submissions`);
    console.log(`after posting: heap +${(after.heapMb - before.heapMb).toFixed(1)} MB, RSS +${(after.rssMb - before.rssMb).toFixed(1)} MB`);
    console.log(await getAllLatencies(da, heights));
    await da.close();
    const closed = memory();
    const t0 = performance.now();
    da = await LocalDa.start(opts);
    const startMs = performance.now() - t0;
    const restarted = memory();
    console.log(
      `restart (replay ${heights.length} blocks): ${startMs.toFixed(0)} ms, heap +${(restarted.heapMb - closed.heapMb).toFixed(1)} MB, RSS +${(restarted.rssMb - closed.rssMb).toFixed(1)} MB`,
    );
    console.log(await getAllLatencies(da, heights));
    await da.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
