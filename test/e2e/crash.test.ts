import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { readGetBlockJson } from '../../src/rpc/json.js';
import { headerHash, type Block } from '../../src/types/index.js';
import { parseJsonExact } from '../../src/util/index.js';
import { Daemon, getBlockJson, killAll, runCli, tempHome, waitFor } from '../helpers/daemon.js';

// The acceptance: kill -9 the daemon at random moments five times while txs flow; after each restart
// the chain goes on at height+1, no height missing or repeated, and every accepted tx that was committed before
// a kill is in the chain exactly once.

const KILLS = 5;
const START_ARGS = ['--node.node.block_time', '50ms'];
/** The kill comes once the run has committed an accepted tx, after a random number (up to this) of further accepted txs. */
const KILL_AFTER_TXS = 40;

let home: ReturnType<typeof tempHome> | undefined;

afterEach(async () => {
  await killAll();
});

afterAll(() => {
  home?.cleanup();
});

/** The height the node loaded from its store, from its "node started" log line. */
function startedHeight(d: Daemon): number {
  const line = d.stderr.split('\n').find((l) => l.includes('"node started"'));
  if (!line) throw new Error(`no "node started" line in:\n${d.stderr}`);
  return JSON.parse(line).height as number;
}

/** A block by height, decoded from the spec JSON; null while it does not exist. */
async function fetchBlock(rpc: string, height: number): Promise<Block | null> {
  const r = await getBlockJson(rpc, { height });
  if (r.status === 404) return null;
  if (r.status !== 200) throw new Error(`GetBlock ${height}: HTTP ${r.status} ${r.text}`);
  const block = readGetBlockJson(parseJsonExact(r.text) as never).block!;
  expect(Number(block.header!.header!.height)).toBe(height);
  return block;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const txText = (tx: Uint8Array) => Buffer.from(tx).toString('utf8');
const stop = () => new Promise((r) => setTimeout(r, 5));

describe('kill -9 while txs flow', () => {
  it(`keeps the chain contiguous and every committed accepted tx exactly once across ${KILLS} crashes`, async () => {
    home = tempHome('noded-crash-');
    const init = await runCli(['init', '--home', home.dir, '--chain-id', 'test-1', '--aggregator']);
    expect(init.code, init.stderr).toBe(0);

    let nextTx = 0;
    const accepted = new Set<number>(); // tx numbers answered 200 by /tx
    const unexpected: string[] = []; // /tx answers other than 200 (or 503 mempool full)
    const committedAt = new Map<string, number>(); // accepted tx → the height it was seen committed at, before a kill
    const seenHash = new Map<number, string>(); // height → header hash, as served by some run of the node
    let lastSeenHeight = 0;
    let lastStarted = 0;

    /** Posts unique txs until aborted, recording which were accepted. */
    const poster = async (rpc: string, signal: AbortSignal) => {
      while (!signal.aborted) {
        const n = nextTx++;
        try {
          const res = await fetch(`${rpc}/tx`, { method: 'POST', body: `k${n}=v${n}`, signal });
          const text = await res.text();
          if (res.status === 200) {
            accepted.add(n);
            if (!/^"[0-9A-F]{64}"$/.test(JSON.stringify(JSON.parse(text).tx_hash))) unexpected.push(`k${n}: 200 without a tx_hash: ${text}`);
          } else if (res.status !== 503) unexpected.push(`k${n}: HTTP ${res.status} ${text}`);
        } catch {
          if (!signal.aborted) await stop(); // the node is being killed: the loop ends with the abort
        }
      }
    };

    /** Reads every block as it is committed, recording heights, hashes and which accepted txs they hold. */
    const watcher = async (rpc: string, from: number, signal: AbortSignal) => {
      let h = from;
      while (!signal.aborted) {
        let block: Block | null = null;
        try {
          block = await fetchBlock(rpc, h);
        } catch {
          // Killed mid-request: nothing more to see from this run.
        }
        if (!block) {
          await stop();
          continue;
        }
        seenHash.set(h, hex(headerHash(block.header!.header!)));
        for (const tx of block.data!.txs) {
          const m = /^k(\d+)=v\1$/.exec(txText(tx));
          if (m && accepted.has(Number(m[1]))) committedAt.set(txText(tx), h);
        }
        lastSeenHeight = Math.max(lastSeenHeight, h);
        h++;
      }
    };

    /**
     * After a (re)start: the node resumes at the last committed block, which holds everything seen before the
     * kill, and its first new block is exactly that height + 1, linked to it, made by this run.
     */
    const checkResume = async (node: Daemon, spawnedAt: number): Promise<number> => {
      const s = startedHeight(node);
      expect(s, 'the store holds every block seen before the kill').toBeGreaterThanOrEqual(lastSeenHeight);
      expect(s).toBeGreaterThanOrEqual(lastStarted);
      const first = await waitFor(() => fetchBlock(node.rpc, s + 1), `block ${s + 1} after restart`);
      const firstTime = first.header!.header!.time;
      expect(firstTime, 'block s+1 was made by the new run').toBeGreaterThanOrEqual(BigInt(spawnedAt) * 1_000_000n);
      if (s > 0) {
        const last = (await fetchBlock(node.rpc, s))!;
        expect(last, `block ${s}`).not.toBeNull();
        expect(last.header!.header!.time, `block ${s} was committed before the kill`).toBeLessThan(BigInt(spawnedAt) * 1_000_000n);
        expect(hex(first.header!.header!.lastHeaderHash)).toBe(hex(headerHash(last.header!.header!)));
        if (seenHash.has(s)) expect(hex(headerHash(last.header!.header!)), `block ${s} unchanged`).toBe(seenHash.get(s));
      }
      lastStarted = s;
      return s;
    };

    for (let cycle = 0; cycle < KILLS; cycle++) {
      const spawnedAt = Date.now();
      const node = await Daemon.start(home.dir, START_ARGS);
      const s = await checkResume(node, spawnedAt);
      const ctl = new AbortController();
      const [committedBefore, acceptedBefore] = [committedAt.size, accepted.size];
      const loops = [poster(node.rpc, ctl.signal), poster(node.rpc, ctl.signal), watcher(node.rpc, s + 1, ctl.signal)];
      // The crash: at a random point of the tx stream (not of the clock), once this run has committed something.
      await waitFor(() => committedAt.size > committedBefore, `an accepted tx committed by run ${cycle + 1}`);
      const killAt = accepted.size + Math.floor(Math.random() * KILL_AFTER_TXS);
      await waitFor(() => accepted.size >= killAt, `${killAt - acceptedBefore} accepted txs in run ${cycle + 1}`);
      node.child.kill('SIGKILL');
      await node.exited;
      expect(node.child.signalCode).toBe('SIGKILL');
      ctl.abort();
      await Promise.all(loops);
    }

    // The last restart: it must resume like the others; then walk the whole chain.
    const spawnedAt = Date.now();
    const node = await Daemon.start(home.dir, START_ARGS);
    const s = await checkResume(node, spawnedAt);
    await waitFor(() => fetchBlock(node.rpc, s + 2), `block ${s + 2}`);

    expect(unexpected).toEqual([]);
    expect(accepted.size, 'txs were accepted').toBeGreaterThan(0);
    expect(committedAt.size, 'accepted txs were seen committed before a kill').toBeGreaterThan(0);

    const head = s + 2;
    const txHeights = new Map<string, number[]>();
    let prev: Block | null = null;
    for (let h = 1; h <= head; h++) {
      const block = await fetchBlock(node.rpc, h);
      expect(block, `block ${h} (no height missing)`).not.toBeNull();
      const header = block!.header!.header!;
      expect(Number(block!.data!.metadata!.height)).toBe(h);
      if (prev) {
        expect(hex(header.lastHeaderHash), `block ${h} links to block ${h - 1}`).toBe(hex(headerHash(prev.header!.header!)));
        expect(header.time).toBeGreaterThan(prev.header!.header!.time);
      }
      if (seenHash.has(h)) expect(hex(headerHash(header)), `block ${h} is the one served before a kill`).toBe(seenHash.get(h));
      for (const tx of block!.data!.txs) {
        const t = txText(tx);
        const m = /^k(\d+)=v\1$/.exec(t);
        expect(m && Number(m[1]) < nextTx, `tx ${t} at ${h} was posted by this test`).toBeTruthy();
        txHeights.set(t, [...(txHeights.get(t) ?? []), h]);
      }
      prev = block;
    }
    const twice = [...txHeights].filter(([, hs]) => hs.length > 1);
    expect(twice, 'no tx appears twice in the chain').toEqual([]);
    for (const [tx, h] of committedAt) expect(txHeights.get(tx), `${tx} committed at ${h} before a kill`).toEqual([h]);

    // The kv state agrees with the committed txs.
    const sample = [...committedAt.keys()].filter((_, i, all) => i % Math.max(1, Math.floor(all.length / 5)) === 0).slice(0, 5);
    for (const tx of sample) {
      const [key, value] = tx.split('=') as [string, string];
      const res = await fetch(`${node.rpc}/kv/${key}`);
      expect(res.status, key).toBe(200);
      expect(await res.text()).toBe(value);
    }
  }, 180_000); // six starts of the node: on a loaded machine each can take 10 s
});
