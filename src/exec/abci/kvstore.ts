import { createHash, hash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { DeepPartial } from 'cosmjs-types/helpers';
import type { AbciApplication } from './server.js';
import type { RequestOf, ResponseOf } from './messages.js';

/** CheckTx and FinalizeBlock code of a tx that is not `key=value`. */
export const CODE_MALFORMED_TX = 1;
/** Query code of a path the app does not serve. */
export const CODE_UNKNOWN_PATH = 2;
const CODESPACE = 'kvstore';

/** One committed block as the log keeps it (keys and values base64). */
interface LogLine {
  height: number;
  app_hash: string;
  writes: Array<[string, string]>;
}

/** The key and value of a `key=value` tx (split at the first '='), or null when it is not one. */
function parseTx(tx: Uint8Array): { key: Buffer; value: Buffer } | null {
  const eq = tx.indexOf(0x3d);
  if (eq <= 0) return null;
  const bytes = Buffer.from(tx.buffer, tx.byteOffset, tx.byteLength);
  return { key: bytes.subarray(0, eq), value: bytes.subarray(eq + 1) };
}

const u64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(n);
  return b;
};

/**
 * The reference key/value ABCI app (`noded abci kvstore`): txs are `key=value`,
 * CheckTx refuses anything else with a code and a log, Query reads a key.
 * The app hash after block h is sha256(hash after h-1 ‖ h ‖ each applied tx,
 * length-prefixed): deterministic, and cheap however large the state grows.
 * Each Commit appends the block's writes to `<dir>/kvstore.log` (JSON lines,
 * fsynced), replayed at start; a torn last line from a crash is dropped.
 */
export class KvStoreApp implements AbciApplication {
  private readonly entries = new Map<string, Buffer>();
  private height = 0n;
  private appHash: Uint8Array = new Uint8Array(0);
  private initialHeight = 1n;
  /** InitChain's hash, the base of the first block's. */
  private genesisHash: Uint8Array = new Uint8Array(0);
  /** Entries the genesis app_state sets, committed with the first block. */
  private genesisWrites = new Map<string, Buffer>();
  /** The last FinalizeBlock, written out by the next Commit. */
  private finalized: { height: bigint; appHash: Uint8Array; writes: Map<string, Buffer> } | null = null;
  private readonly logFile: string;

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true });
    this.logFile = join(dir, 'kvstore.log');
    this.load();
  }

  private load(): void {
    if (!existsSync(this.logFile)) return;
    const text = readFileSync(this.logFile, 'utf8');
    let good = 0;
    for (const line of text.split('\n')) {
      if (line === '') break;
      let entry: LogLine;
      try {
        entry = JSON.parse(line) as LogLine;
      } catch {
        break;
      }
      for (const [k, v] of entry.writes) this.entries.set(Buffer.from(k, 'base64').toString('latin1'), Buffer.from(v, 'base64'));
      this.height = BigInt(entry.height);
      this.appHash = Buffer.from(entry.app_hash, 'hex');
      good += Buffer.byteLength(line) + 1;
    }
    if (good < Buffer.byteLength(text)) truncateSync(this.logFile, good);
  }

  info(): DeepPartial<ResponseOf<'info'>> {
    return { data: 'kvstore', version: '1.0.0', appVersion: 1n, lastBlockHeight: this.height, lastBlockAppHash: this.appHash };
  }

  initChain(request: RequestOf<'initChain'>): DeepPartial<ResponseOf<'initChain'>> {
    if (this.height > 0n) throw new Error(`InitChain: the app is already at height ${this.height}`);
    this.initialHeight = request.initialHeight > 0n ? request.initialHeight : 1n;
    this.genesisWrites = new Map();
    if (request.appStateBytes.length > 0) {
      const state: unknown = JSON.parse(Buffer.from(request.appStateBytes).toString('utf8'));
      if (typeof state !== 'object' || state === null || Array.isArray(state))
        throw new Error('InitChain: app_state must be a JSON object of key: "value" entries');
      for (const [k, v] of Object.entries(state)) this.genesisWrites.set(Buffer.from(k).toString('latin1'), Buffer.from(String(v)));
    }
    this.genesisHash = hash(
      'sha256',
      Buffer.concat([Buffer.from('kvstore genesis\0'), Buffer.from(request.chainId), Buffer.from([0]), request.appStateBytes]),
      'buffer',
    );
    this.finalized = null;
    return { appHash: this.genesisHash };
  }

  checkTx(request: RequestOf<'checkTx'>): DeepPartial<ResponseOf<'checkTx'>> {
    if (request.tx.indexOf(0x3d) > 0) return { code: 0 };
    return { code: CODE_MALFORMED_TX, codespace: CODESPACE, log: 'tx must be key=value with a non-empty key' };
  }

  finalizeBlock(request: RequestOf<'finalizeBlock'>): DeepPartial<ResponseOf<'finalizeBlock'>> {
    const expected = this.height === 0n ? this.initialHeight : this.height + 1n;
    if (request.height !== expected) throw new Error(`FinalizeBlock at height ${request.height}, expected ${expected}`);
    const writes = new Map(this.height === 0n ? this.genesisWrites : []);
    const hasher = createHash('sha256')
      .update(this.height === 0n ? this.genesisHash : this.appHash)
      .update(u64(request.height));
    const len = Buffer.alloc(4);
    const txResults = request.txs.map((tx) => {
      const kv = parseTx(tx);
      if (!kv) return { code: CODE_MALFORMED_TX, codespace: CODESPACE, log: 'tx must be key=value with a non-empty key' };
      writes.set(kv.key.toString('latin1'), kv.value);
      len.writeUInt32BE(tx.length);
      hasher.update(len).update(tx);
      return { code: 0 };
    });
    const appHash = hasher.digest();
    this.finalized = { height: request.height, appHash, writes };
    return { txResults, appHash };
  }

  commit(): DeepPartial<ResponseOf<'commit'>> {
    const block = this.finalized;
    if (!block) throw new Error('Commit without a FinalizeBlock before it');
    const line: LogLine = {
      height: Number(block.height),
      app_hash: Buffer.from(block.appHash).toString('hex'),
      writes: [...block.writes].map(([k, v]) => [Buffer.from(k, 'latin1').toString('base64'), v.toString('base64')]),
    };
    const fd = openSync(this.logFile, 'a');
    try {
      writeSync(fd, JSON.stringify(line) + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    for (const [k, v] of block.writes) this.entries.set(k, v);
    this.height = block.height;
    this.appHash = block.appHash;
    this.finalized = null;
    return { retainHeight: 0n };
  }

  query(request: RequestOf<'query'>): DeepPartial<ResponseOf<'query'>> {
    if (request.path !== '' && request.path !== '/store' && request.path !== '/key') {
      return {
        code: CODE_UNKNOWN_PATH,
        codespace: CODESPACE,
        log: `unknown query path ${JSON.stringify(request.path)}; use /store with the key as data`,
        height: this.height,
      };
    }
    const value = this.entries.get(Buffer.from(request.data).toString('latin1'));
    return { key: request.data, value: value ?? new Uint8Array(0), log: value ? 'exists' : 'does not exist', height: this.height };
  }
}
