import { request } from 'undici';
import type { GetBlockResponse } from '../types/index.js';
import { parseJsonExact } from '../util/index.js';
import type { NodeInfo } from '../rpc/index.js';
import { readGetBlockJson } from '../rpc/json.js';

/** Nothing answers at the node's address: the message says where and what to check. */
export class NodeUnreachableError extends Error {
  readonly code = 'NODE_UNREACHABLE';
  constructor(readonly address: string) {
    super(`no node answering at ${address} (is \`noded start\` running?)`);
  }
}

/** The node answered with an error; `connectCode` is the Connect code when there is one. */
export class NodeRequestError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly connectCode?: string,
  ) {
    super(message);
  }
}

export type BlockSelector = { height: bigint } | { hash: Uint8Array };

export interface CometStatus {
  node_info: { id: string; network: string; version: string; moniker: string; listen_addr: string };
  sync_info: {
    latest_block_hash: string;
    latest_app_hash: string;
    latest_block_height: string;
    latest_block_time: string;
    catching_up: boolean;
  };
  validator_info: { address: string; voting_power: string };
}

export interface HealthAnswer {
  ok: boolean;
  /** The plain-text body: `OK`, `READY`, `UNREADY: <reason>`, … */
  text: string;
}

const withScheme = (address: string) => (/^https?:\/\//.test(address) ? address : `http://${address}`).replace(/\/+$/, '');

/** Reads a running node over its RPC and status listeners, as `status` and `block get` do. */
export class NodeClient {
  readonly rpcUrl: string;
  readonly statusUrl: string;

  constructor(rpcAddress: string, statusAddress: string, private readonly timeoutMs = 5000) {
    this.rpcUrl = withScheme(rpcAddress);
    this.statusUrl = withScheme(statusAddress);
  }

  private async send(url: string, init: { method?: 'GET' | 'POST'; body?: string; headers?: Record<string, string> } = {}) {
    try {
      const res = await request(url, {
        method: init.method ?? 'GET',
        body: init.body,
        headers: init.headers,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      return { status: res.statusCode, text: await res.body.text() };
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'EHOSTUNREACH') {
        throw new NodeUnreachableError(new URL(url).host);
      }
      throw err;
    }
  }

  /** A GET on the RPC listener (`/genesis`): its status and body text. */
  async get(path: string): Promise<{ status: number; text: string }> {
    return this.send(`${this.rpcUrl}${path}`);
  }

  /** Calls a Connect unary method with JSON; returns the raw body text on success. */
  async callJson(path: string, body: unknown): Promise<string> {
    const res = await this.send(`${this.rpcUrl}${path}`, {
      method: 'POST',
      body: JSON.stringify(body, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)),
      headers: { 'content-type': 'application/json' },
    });
    if (res.status !== 200) {
      let parsed: { code?: string; message?: string } = {};
      try {
        parsed = JSON.parse(res.text);
      } catch {
        // Not a Connect error body; report the status alone.
      }
      throw new NodeRequestError(parsed.message ?? `HTTP ${res.status} from ${path}`, res.status, parsed.code);
    }
    return res.text;
  }

  /** A block as the raw GetBlock JSON (exact digits) and parsed. */
  async getBlock(selector: BlockSelector): Promise<{ raw: string; response: GetBlockResponse }> {
    const body = 'hash' in selector ? { hash: Buffer.from(selector.hash).toString('base64') } : { height: selector.height.toString() };
    const raw = await this.callJson('/node.v1.StoreService/GetBlock', body);
    return { raw, response: readGetBlockJson(parseJsonExact(raw) as never) };
  }

  /** A metadata value, or null when the key is not set. */
  async getMetadata(key: string): Promise<Uint8Array | null> {
    try {
      const raw = await this.callJson('/node.v1.StoreService/GetMetadata', { key });
      return Buffer.from(JSON.parse(raw).value as string, 'base64');
    } catch (err) {
      if (err instanceof NodeRequestError && err.connectCode === 'not_found') return null;
      throw err;
    }
  }

  async health(which: 'live' | 'ready'): Promise<HealthAnswer> {
    const res = await this.send(`${this.rpcUrl}/health/${which}`);
    return { ok: res.status === 200, text: res.text.trim() };
  }

  /** /health/ready's checks as its JSON answer gives them (`Accept: application/json`), each with its reason when it fails. */
  async readyChecks(): Promise<Record<string, { status: 'pass' | 'fail'; reason?: string }>> {
    const res = await this.send(`${this.rpcUrl}/health/ready`, { headers: { accept: 'application/json' } });
    return (JSON.parse(res.text) as { checks: Record<string, { status: 'pass' | 'fail'; reason?: string }> }).checks;
  }

  async status(): Promise<CometStatus> {
    return this.statusMethod<CometStatus>('status');
  }

  /** What the dashboard shows beside the blocks (noded's `GET /node_info`). */
  async nodeInfo(): Promise<NodeInfo> {
    return this.statusMethod<NodeInfo>('node_info');
  }

  private async statusMethod<T>(method: string): Promise<T> {
    const res = await this.send(`${this.statusUrl}/${method}`);
    const body = JSON.parse(res.text) as { result?: T; error?: { data?: string } };
    if (!body.result) throw new NodeRequestError(`${method} failed: ${body.error?.data ?? res.text}`, res.status);
    return body.result;
  }
}

/** `noded status` in one object: what an operator asks first about a node. */
export interface NodeStatusReport {
  node: string;
  role: 'aggregator' | 'full node';
  chain_id: string;
  height: number;
  last_block_time: string;
  last_block_age_seconds: number;
  catching_up: boolean;
  health: { live: HealthAnswer; ready: HealthAnswer };
  /** Blocks produced or synced but not yet included on DA. */
  pending_blocks: number;
  /** The child processes the node supervises (`supervise:` in node.yml). */
  children: NodeInfo['children'];
}

/** Gathers the status report from a running node's endpoints. */
export async function fetchNodeStatus(client: NodeClient, now = Date.now()): Promise<NodeStatusReport> {
  // The RPC listener first, so a node that is not running is reported by its RPC address.
  const live = await client.health('live');
  const [status, ready, daIncluded, info] = await Promise.all([
    client.status(),
    client.health('ready'),
    client.getMetadata('da_included_height'),
    client.nodeInfo(),
  ]);
  const height = Number(status.sync_info.latest_block_height);
  const included = daIncluded && daIncluded.length === 8 ? Number(Buffer.from(daIncluded).readBigUInt64BE()) : 0;
  const lastBlockMs = Date.parse(status.sync_info.latest_block_time);
  return {
    node: client.rpcUrl,
    role: status.validator_info.voting_power !== '0' ? 'aggregator' : 'full node',
    chain_id: status.node_info.network,
    height,
    last_block_time: status.sync_info.latest_block_time,
    last_block_age_seconds: Math.max(0, Math.round((now - lastBlockMs) / 100) / 10),
    catching_up: status.sync_info.catching_up,
    health: { live, ready },
    pending_blocks: Math.max(0, height - included),
    children: info.children,
  };
}
