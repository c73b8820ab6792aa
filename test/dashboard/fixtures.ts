import type { FollowerDaInfo, NodeInfo, SubmitterDaInfo } from '../../src/rpc/index.js';
import type { BlockDetail, BlockSummary, DashboardSource, NodeSnapshot } from '../../src/dashboard/index.js';

/** A healthy aggregator `ageMs` after its latest block, read at `now`. */
export function healthyInfo(now: number, overrides: Partial<Omit<NodeInfo, 'da'>> = {}): NodeInfo & { da: SubmitterDaInfo } {
  return {
    chain_id: 'test-chain',
    listeners: { rpc: '127.0.0.1:7331', status: '127.0.0.1:26657' },
    version: '0.1.0',
    role: 'aggregator',
    started_at: now - 3_723_000,
    height: 120,
    best_known_height: 120,
    catching_up: false,
    last_block_time: now - 400,
    health: { live: { ok: true }, ready: { ok: true }, checks: { blocks: { ok: true }, da: { ok: true } } },
    da: {
      mode: 'submit',
      included_height: 117,
      pending_blocks: 3,
      max_pending_blocks: 100,
      last_success_at: now - 2_000,
      failing_since: 0,
      last_error: null,
      gas_price: -1,
      production_paused: null,
    },
    p2p: {
      id: '12D3KooWAbCdEfGhIjKlMnOpQrStUvWxYz',
      listen_addresses: ['/ip4/127.0.0.1/tcp/7676/p2p/12D3KooWAbCdEfGhIjKlMnOpQrStUvWxYz'],
      configured_peers: 2,
      peers: [
        { id: '12D3KooWPeerOne111111111111111111', address: '/ip4/10.1.0.5/tcp/7676/p2p/12D3KooWPeerOne111111111111111111' },
        { id: '12D3KooWPeerTwo222222222222222222', address: '/ip4/10.1.0.6/tcp/7676/p2p/12D3KooWPeerTwo222222222222222222' },
      ],
    },
    execution: { type: 'kv', reachable: true, height: null },
    children: [],
    warnings: [],
    ...overrides,
  };
}

/** A healthy full node following the same chain over P2P, 2 blocks ahead of what it found on DA so far. */
export function fullNodeInfo(now: number, overrides: Partial<Omit<NodeInfo, 'da'>> = {}): NodeInfo & { da: FollowerDaInfo } {
  const { da: _submitter, ...aggregator } = healthyInfo(now);
  return {
    ...aggregator,
    role: 'full node',
    da: {
      mode: 'follow',
      included_height: 118,
      scan_height: 1203,
      head_height: 1205,
      behind_blocks: 2,
      last_success_at: now - 300,
      failing_since: 0,
      last_error: null,
    },
    ...overrides,
  };
}

/** `count` blocks one second apart, newest (at `height`, `now - 400` ms) first; block h has h % 7 txs. */
export function blocksUpTo(height: number, now: number, count = 30): BlockSummary[] {
  const blocks: BlockSummary[] = [];
  for (let h = height; h > height - count && h > 0; h--) {
    blocks.push({ height: h, time: now - 400 - (height - h) * 1000, txs: h % 7, hash: h.toString(16).toUpperCase().padStart(64, 'A') });
  }
  return blocks;
}

export function detailOf(b: BlockSummary): BlockDetail {
  return {
    ...b,
    header: [
      ['chain_id', 'test-chain'],
      ['app_hash', 'B'.repeat(64)],
    ],
    signer: 'C'.repeat(64),
    header_da_height: 40,
    data_da_height: 41,
    txList: ['greeting=hello', '0x00ff'],
  };
}

/** A source answering with whatever `next` is set to: a snapshot, or an error to throw. */
export class FakeSource implements DashboardSource {
  readonly target = '127.0.0.1:7331';
  next: NodeSnapshot | Error;
  opened: number[] = [];

  constructor(next: NodeSnapshot | Error) {
    this.next = next;
  }

  async snapshot(): Promise<NodeSnapshot> {
    if (this.next instanceof Error) throw this.next;
    return this.next;
  }

  async block(height: number): Promise<BlockDetail> {
    this.opened.push(height);
    if (this.next instanceof Error) throw this.next;
    const found = this.next.blocks.find((b) => b.height === height);
    if (!found) throw new Error(`no block at height ${height}`);
    return detailOf(found);
  }
}
