import { request } from 'undici';
import type { GetBlockResponse } from '../types/index.js';
import { formatHostPort, parseHostPort } from '../config/index.js';
import { parseJsonExact } from '../util/index.js';
import type { NodeInfo } from '../rpc/index.js';

/** Nothing answers at the node's address: the message says where and what to check. */
export class NodeUnreachableError extends Error {
  readonly code = 'NODE_UNREACHABLE';
  constructor(
    readonly address: string,
    message = `no node answering at ${address} (is \`noded start\` running?)`,
  ) {
    super(message);
  }
}

/** Something answers at the address, but not as a noded listener, or a node answers that is not the home's. */
export class WrongNodeError extends Error {
  constructor(
    message: string,
    readonly code: 'NOT_A_NODE' | 'NOT_THIS_HOME',
  ) {
    super(message);
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

  constructor(
    rpcAddress: string,
    statusAddress: string,
    private readonly timeoutMs = 5000,
  ) {
    this.rpcUrl = withScheme(rpcAddress);
    this.statusUrl = withScheme(statusAddress);
  }

  /** A GET of any URL; NodeUnreachableError when nothing answers there. */
  get(url: string): Promise<{ status: number; text: string }> {
    return this.send(url);
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

  /** Calls a Connect unary method with JSON; returns the raw body text on success. */
  async callJson(path: string, body: unknown): Promise<string> {
    const res = await this.send(`${this.rpcUrl}${path}`, {
      method: 'POST',
      body: JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)),
      headers: { 'content-type': 'application/json' },
    });
    if (res.status !== 200) {
      let parsed: { code?: string; message?: string } = {};
      try {
        parsed = JSON.parse(res.text) as typeof parsed;
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
    // Loaded here, not with the client: the protobuf and Connect code it reads with costs every other command its start-up time.
    const { readGetBlockJson } = await import('../rpc/json.js');
    return { raw, response: readGetBlockJson(parseJsonExact(raw) as never) };
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

  /** What the dashboard shows beside the blocks: noded's `GET /node_info`, as the RPC listener serves it. */
  async nodeInfo(): Promise<NodeInfo> {
    const res = await this.send(`${this.rpcUrl}/node_info`);
    if (res.status !== 200) throw new NodeRequestError(`GET /node_info: HTTP ${res.status}: ${res.text.trim()}`, res.status);
    return JSON.parse(res.text) as NodeInfo;
  }

  /**
   * The height of the block holding the tx whose sha256 is `txHash`, or null
   * while no block holds it: CometBFT's `tx` method (rpc/core/tx.go) over the
   * node's tx index, which answers `tx (<hash>) not found` until then.
   */
  async txHeight(txHash: Uint8Array): Promise<bigint | null> {
    const res = await this.send(`${this.statusUrl}/tx?hash=0x${Buffer.from(txHash).toString('hex')}`);
    const body = JSON.parse(res.text) as { result?: { height: string }; error?: { data?: string; message?: string } };
    if (body.result) return BigInt(body.result.height);
    const why = body.error?.data ?? res.text;
    if (/not found/.test(why)) return null;
    throw new NodeRequestError(`tx failed: ${why}`, res.status);
  }

  private async statusMethod<T>(method: string): Promise<T> {
    const res = await this.send(`${this.statusUrl}/${method}`);
    const body = JSON.parse(res.text) as { result?: T; error?: { data?: string } };
    if (!body.result) throw new NodeRequestError(`${method} failed: ${body.error?.data ?? res.text}`, res.status);
    return body.result;
  }
}

/**
 * Which node a command reads: the one at an address the operator gave (either
 * of its listeners), or the node of a home, at the home's rpc.address and
 * checked to be that home's (same chain id, same P2P peer id).
 */
export type NodeTarget =
  | { address: string }
  | {
      home: string;
      rpcAddress: string;
      chainId: string;
      peerId: string;
      nodeKeyFile: string;
      /** The home's node process per data/node.pid, when one runs: then it listens elsewhere than the config says. */
      runningPid?: number;
    };

/** The NodeInfo at `<url>/node_info`: the RPC listener serves it bare, the status listener in a JSON-RPC envelope. */
async function readNodeInfo(client: NodeClient, url: string): Promise<{ info: NodeInfo; listener: 'rpc' | 'status' } | { answer: string }> {
  const res = await client.get(`${url}/node_info`);
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    return { answer: `GET /node_info: HTTP ${res.status}, not JSON` };
  }
  const envelope = body as { jsonrpc?: unknown; result?: unknown };
  const [info, listener] = envelope.jsonrpc === '2.0' ? [envelope.result, 'status' as const] : [body, 'rpc' as const];
  const i = info as Partial<NodeInfo> | undefined;
  if (res.status !== 200 || typeof i?.chain_id !== 'string' || typeof i.listeners?.rpc !== 'string' || typeof i.p2p?.id !== 'string') {
    return { answer: `GET /node_info: HTTP ${res.status}, no node's NodeInfo` };
  }
  return { info: i as NodeInfo, listener };
}

/**
 * A listener the node reports (`0.0.0.0:26657`) as a URL this client can use:
 * a wildcard host is reached the way the other listener was.
 */
function reachableUrl(listen: string, via: URL): string {
  const { host, port } = parseHostPort(listen);
  const wildcard = host === '0.0.0.0' || host === '::';
  return `${via.protocol}//${formatHostPort(wildcard ? via.hostname.replace(/^\[|\]$/g, '') : host, port)}`;
}

/**
 * A client for exactly one node: asks the target's address for its NodeInfo,
 * which names both of its listeners, so every later request goes to that node
 * whichever listener was given. A home's node must also be the home's: a node
 * of another home holding the default ports is not reported as this one.
 */
export async function connectNode(target: NodeTarget, timeoutMs = 5000): Promise<NodeClient> {
  const given = withScheme('address' in target ? target.address : target.rpcAddress);
  const probe = new NodeClient(given, given, timeoutMs);
  let read;
  try {
    read = await readNodeInfo(probe, given);
  } catch (err) {
    if (err instanceof NodeUnreachableError && 'home' in target) {
      throw new NodeUnreachableError(
        err.address,
        target.runningPid === undefined
          ? `no node of home ${target.home} is running: nothing answers at ${err.address} (its rpc.address); start it with \`noded start --home ${target.home}\`, or give --node URL if it runs on other addresses`
          : `the node of home ${target.home} runs (pid ${target.runningPid}, data/node.pid) but nothing answers at ${err.address} (its rpc.address): it was started with other addresses; give --node URL with its RPC or status address`,
      );
    }
    throw err;
  }
  const where = new URL(given).host;
  if ('answer' in read) {
    throw new WrongNodeError(
      `something answers at ${where}, but not as a noded RPC or status listener (${read.answer}); give --node the node's rpc.address (7331 by default) or rpc.status_address (26657)`,
      'NOT_A_NODE',
    );
  }
  const { info, listener } = read;
  if ('home' in target) {
    const differs: string[] = [];
    if (info.chain_id !== target.chainId)
      differs.push(`its chain id is ${JSON.stringify(info.chain_id)}, the home's genesis says ${JSON.stringify(target.chainId)}`);
    if (info.p2p.id !== target.peerId) differs.push(`its peer id is ${info.p2p.id}, the home's peer id (${target.nodeKeyFile}) is ${target.peerId}`);
    if (differs.length > 0) {
      throw new WrongNodeError(
        `no node of home ${target.home} is running: the node answering at ${where} (its rpc.address) is another node (${differs.join('; ')}); start this home's node with \`noded start --home ${target.home}\`, or give --node URL to read the node at ${where}`,
        'NOT_THIS_HOME',
      );
    }
  }
  const via = new URL(given);
  return listener === 'rpc'
    ? new NodeClient(given, reachableUrl(info.listeners.status, via), timeoutMs)
    : new NodeClient(reachableUrl(info.listeners.rpc, via), given, timeoutMs);
}

/**
 * A client for the target's address as given, not checked against any node:
 * for a watcher started before its node, which reads the RPC listener alone
 * (health, node_info, blocks) and waits for the node to answer there.
 */
export function uncheckedClient(target: NodeTarget, timeoutMs = 5000): NodeClient {
  const rpc = 'address' in target ? target.address : target.rpcAddress;
  return new NodeClient(rpc, rpc, timeoutMs);
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
  /** An aggregator's DA-included height and pending queue, or what a full node follows on DA (as `/node_info` has it). */
  da: NodeInfo['da'];
  /** The child processes the node supervises (`supervise:` in node.yml). */
  children: NodeInfo['children'];
  /** An HA node's election (ha.enabled): its node id, its role and the leader's node id. */
  ha?: NodeInfo['ha'];
}

/** Gathers the status report from a running node's endpoints. */
export async function fetchNodeStatus(client: NodeClient, now = Date.now()): Promise<NodeStatusReport> {
  // The RPC listener first, so a node that is not running is reported by its RPC address.
  const live = await client.health('live');
  const [status, ready, info] = await Promise.all([client.status(), client.health('ready'), client.nodeInfo()]);
  const height = Number(status.sync_info.latest_block_height);
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
    da: info.da,
    children: info.children,
    ...(info.ha ? { ha: info.ha } : {}),
  };
}
