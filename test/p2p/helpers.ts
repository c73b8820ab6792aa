import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { P2PHost, type EncodedBlockAt, type P2PHostOptions } from '../../src/p2p/index.js';
import { Ed25519Key, buildBlock, encodeBlock, fullDataHash, headerHash, validateBlock, type Block } from '../../src/types/index.js';
import { waitFor as waitForShared } from '../helpers/wait.js';

export const CHAIN_ID = 'p2p-test';

/** A signed chain of `count` blocks (heights 1..count), each linked to the one before. */
export function makeBlocks(signer: Ed25519Key, count: number, opts: { chainId?: string; startTime?: bigint } = {}): Block[] {
  const blocks: Block[] = [];
  let lastHeaderHash: Uint8Array = new Uint8Array(0);
  let lastDataHash: Uint8Array = new Uint8Array(0);
  for (let h = 1n; h <= BigInt(count); h++) {
    const block = buildBlock({
      chainId: opts.chainId ?? CHAIN_ID,
      height: h,
      time: (opts.startTime ?? 1_700_000_000_000_000_000n) + h * 1_000_000_000n,
      txs: [new TextEncoder().encode(`k${h}=v${h}`)],
      lastHeaderHash,
      lastDataHash,
      appHash: new Uint8Array(32),
      signer,
    });
    lastHeaderHash = headerHash(block.header!.header!);
    lastDataHash = fullDataHash(block.data!);
    blocks.push(block);
  }
  return blocks;
}

/** The next block after `prev`, signed by `signer` (another key makes a forgery). */
export function nextBlock(prev: Block, signer: Ed25519Key, proposer = signer): Block {
  const block = buildBlock({
    chainId: prev.header!.header!.chainId,
    height: prev.header!.header!.height + 1n,
    time: prev.header!.header!.time + 1_000_000_000n,
    txs: [new TextEncoder().encode('forged=1')],
    lastHeaderHash: headerHash(prev.header!.header!),
    lastDataHash: fullDataHash(prev.data!),
    appHash: new Uint8Array(32),
    signer,
  });
  if (proposer !== signer) block.header!.header!.proposerAddress = proposer.address;
  return block;
}

/** A chain in memory with the checks Chain.apply makes (signature, proposer, height, links, data hash). */
export class MemChain {
  readonly blocks: Block[] = [];
  /** Every block handed to apply, accepted or not. */
  readonly attempts: Block[] = [];

  constructor(
    readonly proposer: Ed25519Key,
    readonly chainId = CHAIN_ID,
  ) {}

  static holding(proposer: Ed25519Key, blocks: Block[]): MemChain {
    const chain = new MemChain(proposer);
    chain.blocks.push(...blocks);
    return chain;
  }

  get height(): bigint {
    return BigInt(this.blocks.length);
  }

  get nextHeight(): bigint {
    return this.height + 1n;
  }

  async apply(block: Block): Promise<void> {
    this.attempts.push(block);
    const last = this.blocks.at(-1);
    validateBlock(block, {
      chainId: this.chainId,
      height: this.nextHeight,
      proposerAddress: this.proposer.address,
      lastHeaderHash: last ? headerHash(last.header!.header!) : new Uint8Array(0),
    });
    this.blocks.push(block);
  }

  /** A BlockSource over this chain. */
  source = async (from: bigint, to: bigint): Promise<Block[]> => this.blocks.slice(Number(from) - 1, Number(to));

  /** An EncodedBlockSource over this chain (what BlockSync serves from): heights and protobuf bytes. */
  encodedSource = async (from: bigint, to: bigint): Promise<EncodedBlockAt[]> =>
    (await this.source(from, to)).map((block) => ({ height: block.header!.header!.height, bytes: encodeBlock(block) }));
}

export interface CapturedLogger {
  logger: Logger;
  lines: Array<Record<string, unknown>>;
  has(msg: string): boolean;
}

/** A pino logger whose JSON lines are kept for assertions. */
export function captureLogger(): CapturedLogger {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  const logger = pino({ level: 'debug', base: undefined }, stream);
  return { logger, lines, has: (msg) => lines.some((l) => l.msg === msg) };
}

export const silent = (): Logger => pino({ level: 'silent' });

/** The shared waitFor (test/helpers/wait.ts), `what` first as these tests write it. */
export const waitFor = (what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> =>
  waitForShared(check, what, ms).then(() => undefined);

/** Hosts created by a test file; close them all in afterEach/afterAll. */
export class Hosts {
  private readonly all: P2PHost[] = [];

  async start(opts: Partial<P2PHostOptions> & { key?: Ed25519Key } = {}): Promise<P2PHost> {
    const key = opts.key ?? Ed25519Key.generate();
    const host = await P2PHost.create({
      seed: key.seed,
      listen: '/ip4/127.0.0.1/tcp/0',
      peers: [],
      chainId: CHAIN_ID,
      logger: silent(),
      redial: { minMs: 50, maxMs: 400, dialTimeoutMs: 2000 },
      ...opts,
    });
    this.all.push(host);
    return host;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.all.splice(0).map((h) => h.close()));
  }
}

export const addressOf = (host: P2PHost): string => {
  const addr = host.listenAddresses().find((a) => a.startsWith('/ip4/127.0.0.1/'));
  if (!addr) throw new Error(`host ${host.peerId} has no 127.0.0.1 address: ${host.listenAddresses().join(', ')}`);
  return addr;
};
