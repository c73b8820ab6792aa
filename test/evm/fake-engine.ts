import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { jwtVerify } from 'jose';

type Hex = `0x${string}`;

interface FakeBlock {
  hash: Hex;
  number: bigint;
  parentHash: Hex;
  stateRoot: Hex;
  timestamp: bigint;
  gasLimit: Hex;
  transactions: Hex[];
}

const ZERO: Hex = `0x${'00'.repeat(32)}`;
const sha = (...parts: string[]): Hex => `0x${createHash('sha256').update(parts.join('|')).digest('hex')}`;
const quantity = (n: bigint): Hex => `0x${n.toString(16)}`;

/**
 * A small Engine API server for the paths EthereumJS cannot take: it implements
 * the rollup payload-attribute extension (`transactions`, `noTxPool`,
 * `gasLimit`) that rollup execution clients (the reth/op-geth family) have and
 * EthereumJS lacks. Its "state" is a hash chain over the txs, so two instances
 * fed the same blocks agree on every state root and block hash. It checks the
 * JWT of every call (HS256, `iat` within 60 s) like a real client.
 */
export class FakeEngine {
  readonly blocks: FakeBlock[] = [];
  private readonly byHash = new Map<Hex, FakeBlock>();
  private readonly payloads = new Map<Hex, FakeBlock>();
  private readonly pool: Hex[] = [];
  private head: FakeBlock;
  /** engine_newPayloadV3 answers SYNCING this many more times before it takes a payload. */
  syncingAnswers = 0;
  /** engine_newPayloadV3 judges every payload INVALID with this reason. */
  invalidReason: string | null = null;
  /** Every method called, in order. */
  readonly calls: string[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly jwtFile: string,
    private readonly secret: Uint8Array,
    readonly supportsExtension: boolean,
  ) {
    const genesis: FakeBlock = {
      hash: sha('genesis'),
      number: 0n,
      parentHash: ZERO,
      stateRoot: sha('genesis-state'),
      timestamp: 0n,
      gasLimit: '0x1c9c380',
      transactions: [],
    };
    this.add(genesis);
    this.head = genesis;
  }

  /** Listens on a free 127.0.0.1 port; writes a fresh jwt.hex in `dir`. */
  static async start(dir: string, opts: { supportsExtension: boolean }): Promise<FakeEngine> {
    const secretHex = randomBytes(32).toString('hex');
    const jwtFile = join(dir, 'fake-engine-jwt.hex');
    writeFileSync(jwtFile, secretHex);
    // No request comes before listen() resolves and the address is known, so `engine` is set by the first one.
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        void engine.answer(req.headers.authorization, body).then(([status, out]) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(out));
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const engine = new FakeEngine(server, `http://127.0.0.1:${port}`, jwtFile, new Uint8Array(Buffer.from(secretHex, 'hex')), opts.supportsExtension);
    return engine;
  }

  get height(): bigint {
    return this.head.number;
  }

  /** A tx for the next block it builds from its pool. */
  addToPool(tx: Hex): void {
    this.pool.push(tx);
  }

  /** Builds and makes head `count` blocks of its own (an execution client ahead of the node). */
  advance(count: number): void {
    for (let i = 0; i < count; i++) {
      const block = this.build(this.head, this.head.timestamp + 1n, [sha('own', String(i))]);
      this.add(block);
      this.head = block;
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private add(block: FakeBlock): void {
    this.byHash.set(block.hash, block);
    this.blocks[Number(block.number)] = block;
  }

  private build(parent: FakeBlock, timestamp: bigint, transactions: Hex[]): FakeBlock {
    const stateRoot = sha(parent.stateRoot, ...transactions);
    const number = parent.number + 1n;
    return {
      hash: sha(parent.hash, String(number), String(timestamp), stateRoot),
      number,
      parentHash: parent.hash,
      stateRoot,
      timestamp,
      gasLimit: parent.gasLimit,
      transactions,
    };
  }

  private async answer(authorization: string | undefined, body: string): Promise<[number, unknown]> {
    try {
      const { payload } = await jwtVerify((authorization ?? '').replace(/^Bearer /, ''), this.secret, { algorithms: ['HS256'] });
      if (typeof payload.iat !== 'number' || Math.abs(payload.iat - Date.now() / 1000) > 60) throw new Error('Stale jwt token');
    } catch (err) {
      return [401, { error: (err as Error).message }];
    }
    const { id, method, params } = JSON.parse(body) as { id: number; method: string; params: any[] };
    this.calls.push(method);
    try {
      return [200, { jsonrpc: '2.0', id, result: this.call(method, params) }];
    } catch (err) {
      const e = err as Error & { rpcCode?: number };
      return [200, { jsonrpc: '2.0', id, error: { code: e.rpcCode ?? -32000, message: e.message } }];
    }
  }

  private call(method: string, params: any[]): unknown {
    switch (method) {
      case 'eth_blockNumber':
        return quantity(this.head.number);
      case 'eth_getBlockByNumber': {
        const block = this.blocks[Number(BigInt(params[0]))];
        return block ? { ...block, number: quantity(block.number), timestamp: quantity(block.timestamp) } : null;
      }
      case 'eth_sendRawTransaction':
        this.pool.push(params[0]);
        return sha(params[0]);
      case 'engine_forkchoiceUpdatedV3':
        return this.forkchoice(params[0], params[1]);
      case 'engine_getPayloadV3': {
        const block = this.payloads.get(params[0]);
        if (!block) throw Object.assign(new Error('Unknown payload'), { rpcCode: -38001 });
        return { executionPayload: this.toPayload(block) };
      }
      case 'engine_newPayloadV3':
        return this.newPayload(params[0]);
      default:
        throw Object.assign(new Error(`the method ${method} does not exist`), { rpcCode: -32601 });
    }
  }

  private forkchoice(state: { headBlockHash: Hex }, attributes: Record<string, any> | null): unknown {
    const head = this.byHash.get(state.headBlockHash);
    if (!head) return { payloadStatus: { status: 'SYNCING', latestValidHash: null, validationError: null }, payloadId: null };
    this.head = head;
    const valid = { status: 'VALID', latestValidHash: head.hash, validationError: null };
    if (!attributes) return { payloadStatus: valid, payloadId: null };
    const extended = 'transactions' in attributes || 'noTxPool' in attributes || 'gasLimit' in attributes;
    if (extended && !this.supportsExtension) throw Object.assign(new Error('PayloadAttributesV3 MUST be used for forkchoiceUpdatedV3'), { rpcCode: -32602 });
    const txs: Hex[] = extended ? attributes.transactions : this.pool.splice(0);
    const block = this.build(head, BigInt(attributes.timestamp), txs);
    const payloadId: Hex = `0x${randomBytes(8).toString('hex')}`;
    this.payloads.set(payloadId, block);
    return { payloadStatus: valid, payloadId };
  }

  private newPayload(payload: Record<string, any>): unknown {
    if (this.syncingAnswers > 0) {
      this.syncingAnswers--;
      return { status: 'SYNCING', latestValidHash: null, validationError: null };
    }
    if (this.invalidReason) return { status: 'INVALID', latestValidHash: this.head.hash, validationError: this.invalidReason };
    const parent = this.byHash.get(payload.parentHash);
    if (!parent) return { status: 'SYNCING', latestValidHash: null, validationError: null };
    const block = this.build(parent, BigInt(payload.timestamp), payload.transactions);
    if (block.hash !== payload.blockHash) return { status: 'INVALID_BLOCK_HASH', latestValidHash: null, validationError: 'block hash mismatch' };
    this.add(block);
    return { status: 'VALID', latestValidHash: block.hash, validationError: null };
  }

  private toPayload(block: FakeBlock): Record<string, unknown> {
    return {
      parentHash: block.parentHash,
      feeRecipient: `0x${'00'.repeat(20)}`,
      stateRoot: block.stateRoot,
      receiptsRoot: ZERO,
      logsBloom: `0x${'00'.repeat(256)}`,
      prevRandao: ZERO,
      blockNumber: quantity(block.number),
      gasLimit: block.gasLimit,
      gasUsed: '0x0',
      timestamp: quantity(block.timestamp),
      extraData: '0x',
      baseFeePerGas: '0x7',
      blockHash: block.hash,
      transactions: block.transactions,
      withdrawals: [],
      blobGasUsed: '0x0',
      excessBlobGas: '0x0',
    };
  }
}
