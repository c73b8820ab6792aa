import { hash } from 'node:crypto';
import { hostname } from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { CheckTxRejectedError, TxRejectedError } from '../exec/index.js';
import { decodeStoredBlock } from '../store/index.js';
import { cometNodeId, headerHash, nanosOfTimestamp, type Block } from '../types/index.js';
import type { RpcBackend } from './backend.js';
import { readBody, BodyTooLargeError } from './http.js';

type Req = IncomingMessage | Http2ServerRequest;
type Res = ServerResponse | Http2ServerResponse;

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex').toUpperCase();
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

/** Unix nanoseconds → RFC 3339 with nanoseconds, as CometBFT writes times. */
export function rfc3339Nano(ns: bigint): string {
  const ms = ns / 1_000_000n;
  const iso = new Date(Number(ms)).toISOString();
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return `${iso.slice(0, 19)}.${frac}Z`;
}

class RpcError extends Error {
  constructor(
    readonly rpcCode: number,
    message: string,
    readonly data: string,
    readonly httpStatus: number,
  ) {
    super(message);
  }
}

const invalidParams = (data: string) => new RpcError(-32602, 'Invalid params', data, 400);

/** A URL param may come "quoted", as CometBFT's URI form writes strings. */
const unquote = (v: unknown) => String(v).replace(/^"(.*)"$/s, '$1');

function uintParam(name: string, value: unknown): bigint {
  const text = unquote(value);
  if (!/^\d{1,20}$/.test(text)) throw invalidParams(`${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return BigInt(text);
}

/**
 * A bytes param as CometBFT reads one: 0x-prefixed hex or a "quoted string"
 * (the URL form), else `plain` — base64 for a tx, hex for abci_query's data,
 * as CometBFT's JSON-RPC bodies carry them.
 */
function bytesParam(name: string, value: unknown, plain: 'base64' | 'hex'): Uint8Array {
  const text = String(value);
  if (/^".*"$/s.test(text)) return new TextEncoder().encode(text.slice(1, -1));
  const hexText = text.startsWith('0x') ? text.slice(2) : plain === 'hex' ? text : null;
  if (hexText !== null) {
    if (!/^(?:[0-9a-fA-F]{2})*$/.test(hexText)) throw invalidParams(`${name} must be hex (an even number of 0-9a-f digits), got ${JSON.stringify(value)}`);
    return Buffer.from(hexText, 'hex');
  }
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw invalidParams(`${name} must be base64 (or 0x-prefixed hex, or a "quoted string" in a URL), got ${JSON.stringify(value)}`);
  return Buffer.from(text, 'base64');
}

/** A call to the ABCI app; an app that is down or broke the protocol is answered 503 with the reason. */
async function fromApp<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw new RpcError(-32603, 'Internal error', (err as Error).message, 503);
  }
}

/**
 * The CometBFT-compatible JSON-RPC server (DESIGN.md §7): integers as strings,
 * hashes upper-case hex, times RFC 3339, so Cosmos tools (CosmJS) read it.
 */
export class StatusServer {
  private readonly methods: Record<string, (params: Record<string, unknown>) => Promise<unknown>>;

  constructor(private readonly backend: RpcBackend) {
    this.methods = {
      status: () => this.status(),
      health: async () => ({}),
      block: (p) => this.block(p.height),
      net_info: async () => this.netInfo(),
      // noded's own, not CometBFT's: the dashboard's view of the node (NodeInfo).
      node_info: async () => this.backend.info(),
      abci_info: () => this.abciInfo(),
      abci_query: (p) => this.abciQuery(p),
      broadcast_tx_sync: (p) => this.broadcastTxSync(p.tx),
    };
  }

  /** The ABCI app's Info (execution.type abci), else the node's own height and state root. */
  private async abciInfo() {
    const abci = this.backend.abci;
    if (!abci) {
      const s = this.backend.state();
      return {
        response: { data: 'noded', version: this.backend.version, last_block_height: s.lastBlockHeight.toString(), last_block_app_hash: b64(s.appHash) },
      };
    }
    const info = await fromApp(() => abci.info());
    return {
      response: {
        data: info.data,
        version: info.version,
        app_version: info.appVersion.toString(),
        last_block_height: info.lastBlockHeight.toString(),
        last_block_app_hash: b64(info.lastBlockAppHash),
      },
    };
  }

  private async abciQuery(p: Record<string, unknown>) {
    const abci = this.backend.abci;
    if (!abci) throw new RpcError(-32603, 'Internal error', 'abci_query needs an ABCI app (execution.type abci); a kv node serves GET /kv/<key> on its RPC listener', 404);
    const height = p.height === undefined || p.height === '' ? 0n : uintParam('height', p.height);
    const request = { path: unquote(p.path ?? ''), data: bytesParam('data', p.data ?? '', 'hex'), height, prove: unquote(p.prove ?? '') === 'true' || p.prove === true };
    const r = await fromApp(() => abci.query(request));
    return {
      response: {
        code: r.code,
        log: r.log,
        info: r.info,
        index: r.index.toString(),
        key: b64(r.key),
        value: b64(r.value),
        proofOps: null,
        height: r.height.toString(),
        codespace: r.codespace,
      },
    };
  }

  /** Submits a tx as POST /tx does and answers with its CheckTx result; refusals before the app (mempool full, …) are errors. */
  private async broadcastTxSync(txParam: unknown) {
    if (txParam === undefined) throw invalidParams('tx is required: base64 in a JSON-RPC body, 0x-prefixed hex or a "quoted string" in a URL');
    const tx = bytesParam('tx', txParam, 'base64');
    const result = { code: 0, data: '', log: '', codespace: '', hash: hex(hash('sha256', tx, 'buffer')) };
    try {
      await this.backend.submitTx(tx);
    } catch (err) {
      if (err instanceof CheckTxRejectedError) {
        const r = err.response;
        return { ...result, code: r.code, data: b64(r.data), log: r.log, codespace: r.codespace };
      }
      if (err instanceof TxRejectedError) throw new RpcError(-32603, 'Internal error', err.message, err.httpStatus);
      throw err;
    }
    return result;
  }

  /** The route a path counts under in the metrics: `/` (JSON-RPC POST), `/<method>` of a known method, else "other". */
  readonly routeLabel = (path: string): string => (path === '/' || Object.hasOwn(this.methods, path.slice(1)) ? path : 'other');

  readonly handler = (req: Req, res: Res): void => {
    this.handle(req, res).catch((err) => this.send(res, 500, null, { code: -32603, message: 'Internal error', data: String(err?.message ?? err) }));
  };

  private async handle(req: Req, res: Res): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (req.method === 'GET' && url.pathname !== '/') {
      const method = url.pathname.slice(1);
      const params = Object.fromEntries(url.searchParams);
      return this.call(res, -1, method, params);
    }
    if (req.method !== 'POST' || url.pathname !== '/') {
      return this.send(res, 405, null, { code: -32600, message: 'Invalid Request', data: 'use GET /<method>?params or POST / with a JSON-RPC 2.0 body' });
    }
    let body: unknown;
    try {
      body = JSON.parse((await readBody(req, 1024 * 1024)).toString('utf8'));
    } catch (err) {
      const data = err instanceof BodyTooLargeError ? err.message : `request body is not valid JSON: ${(err as Error).message}`;
      return this.send(res, 400, null, { code: -32700, message: 'Parse error', data });
    }
    const rpc = body as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
    if (typeof rpc !== 'object' || rpc === null || rpc.jsonrpc !== '2.0' || typeof rpc.method !== 'string') {
      return this.send(res, 400, null, { code: -32600, message: 'Invalid Request', data: 'expected {"jsonrpc":"2.0","id":N,"method":"status","params":{}}' });
    }
    const params = typeof rpc.params === 'object' && rpc.params !== null && !Array.isArray(rpc.params) ? (rpc.params as Record<string, unknown>) : {};
    return this.call(res, rpc.id ?? null, rpc.method, params);
  }

  private async call(res: Res, id: unknown, method: string, params: Record<string, unknown>): Promise<void> {
    const fn = this.methods[method];
    if (!fn) {
      return this.send(res, 404, id, { code: -32601, message: 'Method not found', data: `unknown method ${JSON.stringify(method)}; known: ${Object.keys(this.methods).join(', ')}` });
    }
    try {
      this.send(res, 200, id, undefined, await fn(params));
    } catch (err) {
      if (!(err instanceof RpcError)) throw err;
      this.send(res, err.httpStatus, id, { code: err.rpcCode, message: err.message, data: err.data });
    }
  }

  private send(res: Res, status: number, id: unknown, error?: { code: number; message: string; data: string }, result?: unknown): void {
    const body = JSON.stringify(error ? { jsonrpc: '2.0', id, error } : { jsonrpc: '2.0', id, result });
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body);
  }

  private async blockAt(height: bigint): Promise<{ block: Block; hash: Uint8Array } | null> {
    const stored = await this.backend.store.getBlock(height);
    if (!stored) return null;
    const block = decodeStoredBlock(stored);
    return { block, hash: headerHash(block.header!.header!) };
  }

  /** CometBFT's /net_info shape, with libp2p ids and multiaddrs in place of Comet's. */
  private netInfo() {
    const net = this.backend.netInfo();
    return {
      listening: net.listen_addresses.length > 0,
      listeners: net.listen_addresses,
      n_peers: String(net.connected_peers.length),
      peers: net.connected_peers.map((p) => ({
        node_info: { id: p.id, listen_addr: p.address, network: this.backend.chainId, moniker: p.id },
        remote_ip: p.address.split('/')[2] ?? '',
      })),
    };
  }

  private async status() {
    const b = this.backend;
    const state = b.state();
    const latest = state.lastBlockHeight > 0n ? await this.blockAt(state.lastBlockHeight) : null;
    const earliestHeight = state.lastBlockHeight > 0n ? state.initialHeight : 0n;
    const earliest = earliestHeight > 0n ? await this.blockAt(earliestHeight) : null;
    return {
      node_info: {
        protocol_version: { p2p: '8', block: '11', app: '0' },
        id: cometNodeId(b.nodeKey.publicKey),
        listen_addr: b.netInfo().listen_addresses[0] ?? '',
        network: b.chainId,
        // CosmJS picks its client by this prefix; the node speaks CometBFT 0.38's RPC.
        version: `0.38.0+noded-${b.version}`,
        channels: '',
        moniker: hostname() || 'noded',
        other: { tx_index: 'off', rpc_address: `tcp://${b.statusAddress}` },
      },
      sync_info: {
        latest_block_hash: latest ? hex(latest.hash) : '',
        latest_app_hash: hex(state.appHash),
        latest_block_height: state.lastBlockHeight.toString(),
        latest_block_time: rfc3339Nano(nanosOfTimestamp(state.lastBlockTime)),
        earliest_block_hash: earliest ? hex(earliest.hash) : '',
        earliest_app_hash: earliest ? hex(earliest.block.header!.header!.appHash) : '',
        earliest_block_height: earliestHeight.toString(),
        earliest_block_time: earliest ? rfc3339Nano(earliest.block.header!.header!.time) : rfc3339Nano(nanosOfTimestamp(state.lastBlockTime)),
        catching_up: b.catchingUp(),
      },
      validator_info: {
        address: hex(b.signer.address),
        pub_key: { type: 'tendermint/PubKeyEd25519', value: b64(b.signer.publicKey) },
        voting_power: b.aggregator ? '1' : '0',
      },
    };
  }

  private async block(heightParam: unknown) {
    const latest = this.backend.state().lastBlockHeight;
    let height = latest;
    if (heightParam !== undefined && heightParam !== '') {
      const text = String(heightParam).replace(/^"|"$/g, '');
      if (!/^\d{1,20}$/.test(text)) throw invalidParams(`height must be a positive integer, got ${JSON.stringify(heightParam)}`);
      height = BigInt(text);
    }
    const found = height > 0n ? await this.blockAt(height) : null;
    if (!found) throw new RpcError(-32603, 'Internal error', `no block at height ${height} (latest is ${latest})`, 404);
    const { block, hash } = found;
    const h = block.header!.header!;
    const blockId = (id: Uint8Array) => ({ hash: hex(id), parts: { total: 1, hash: hex(id) } });
    return {
      block_id: blockId(hash),
      block: {
        header: {
          version: { block: h.version?.block.toString() ?? '0', app: h.version?.app.toString() ?? '0' },
          chain_id: h.chainId,
          height: h.height.toString(),
          time: rfc3339Nano(h.time),
          last_block_id: blockId(h.lastHeaderHash),
          // ev-node headers no longer carry the commit, consensus and results hashes (evnode.proto reserves them).
          last_commit_hash: '',
          data_hash: hex(h.dataHash),
          validators_hash: hex(h.validatorHash),
          next_validators_hash: hex(h.validatorHash),
          consensus_hash: '',
          app_hash: hex(h.appHash),
          last_results_hash: '',
          evidence_hash: '',
          proposer_address: hex(h.proposerAddress),
        },
        data: { txs: block.data!.txs.map(b64) },
        evidence: { evidence: [] },
        last_commit: {
          height: (h.height - 1n).toString(),
          round: 0,
          block_id: blockId(h.lastHeaderHash),
          signatures: [],
        },
      },
    };
  }
}
