import { existsSync, rmSync } from 'node:fs';
import { NodeClient, NodeRequestError, NodeUnreachableError } from '../client/index.js';
import { daNamespace, type ConfigOverrides } from '../config/index.js';
import { signedHeaderProblem } from '../types/index.js';
import { CHAIN_ID_FORM, CHAIN_ID_PATTERN, HomeError, initHome, parseGenesisObject, type Genesis, type InitResult } from './index.js';

/** Why `init --join` could not make the home; `exit` 2 is bad usage (the URL), 1 the node's answer. */
export class JoinError extends Error {
  constructor(
    message: string,
    readonly code: 'JOIN_BAD_URL' | 'JOIN_UNREACHABLE' | 'JOIN_NOT_A_NODE' | 'JOIN_NOT_AGGREGATOR' | 'JOIN_BAD_GENESIS',
    readonly exit: 1 | 2 = 1,
  ) {
    super(message);
    this.name = 'JoinError';
  }
}

/** What a running aggregator tells a node that joins its chain. */
export interface JoinSource {
  /** The RPC URL asked (http://host:port). */
  url: string;
  /** config/genesis.json as the aggregator serves it (GET /genesis), written as is. */
  genesisJson: string;
  genesis: Genesis;
  /** The aggregator's P2P address, as another machine dials it. */
  peer: string;
  /** DA namespaces as GetNamespace answers them (0x + hex). */
  namespaces: { header: string; data: string };
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const hexNs = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;

/** The RPC URL, as `http(s)://host:port` without path; JoinError (exit 2) naming the form when it is not one. */
export function joinUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new JoinError(`--join: got ${JSON.stringify(text)}, expected the RPC URL of the chain's aggregator, e.g. http://10.0.0.5:7331`, 'JOIN_BAD_URL', 2);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || (url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) {
    throw new JoinError(
      `--join: got ${JSON.stringify(text)}, expected http://<host>:<port> of the aggregator's RPC listener (rpc.address, 7331 by default), no path`,
      'JOIN_BAD_URL',
      2,
    );
  }
  return `${url.protocol}//${url.host}`;
}

/**
 * The aggregator's P2P address as seen from `host`: the listen address on that
 * host if it has one, else its first with the host put in (it listens on
 * 0.0.0.0 or on an address the joining machine does not see).
 */
export function peerAddressFor(host: string, listen: readonly string[]): string | undefined {
  const bare = host.replace(/^\[|\]$/g, '');
  const proto = /^\d+\.\d+\.\d+\.\d+$/.test(bare) ? 'ip4' : bare.includes(':') ? 'ip6' : 'dns4';
  const own = listen.find((a) => a.startsWith(`/${proto}/${bare}/`));
  if (own) return own;
  const first = listen.find((a) => /^\/(ip4|ip6|dns4|dns6|dns)\/[^/]+\/tcp\/\d+\/p2p\//.test(a));
  return first?.replace(/^\/[^/]+\/[^/]+\//, `/${proto}/${bare}/`);
}

/** A failed request to the node at `url`, in the operator's words. */
function joinErrorOf(url: string, what: string, err: unknown): JoinError {
  if (err instanceof NodeUnreachableError)
    return new JoinError(`no node answers at ${url}; check the URL (the aggregator's rpc.address) and that it runs`, 'JOIN_UNREACHABLE');
  if (err instanceof NodeRequestError) return new JoinError(`${url} is not a noded RPC listener: ${what} answered ${err.message}`, 'JOIN_NOT_A_NODE');
  return new JoinError(`${url}: ${what} failed: ${(err as Error).message}`, 'JOIN_UNREACHABLE');
}

async function ask<T>(url: string, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw joinErrorOf(url, what, err);
  }
}

/** The `error` of a `{"error": …}` answer, or undefined. */
function errorText(text: string): string | undefined {
  try {
    const error = (JSON.parse(text) as { error?: unknown } | null)?.error;
    return typeof error === 'string' ? error : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Asks the node at `url` for what a full node of its chain needs — genesis
 * (GET /genesis), its P2P address (GetNetInfo), its DA namespaces
 * (GetNamespace) — and verifies it: the genesis parses with a chain id init
 * would take and a 32-byte proposer, the node is that proposer (GetSignerInfo:
 * the aggregator), and its first block is signed by that proposer.
 */
export async function fetchJoinSource(urlText: string, timeoutMs: number): Promise<JoinSource> {
  const url = joinUrl(urlText);
  const client = new NodeClient(url, url, timeoutMs);
  const res = await ask(url, 'GET /genesis', () => client.get(`${client.rpcUrl}/genesis`));
  // The listener's own refusal (a Host it does not answer to) says why and which key admits it.
  const refusal = res.status === 403 ? errorText(res.text) : undefined;
  if (refusal) throw new JoinError(`${url} refused GET /genesis (HTTP 403): ${refusal}`, 'JOIN_NOT_A_NODE');
  if (res.status !== 200)
    throw new JoinError(
      `${url} is not a noded RPC listener: GET /genesis answered HTTP ${res.status}; give the aggregator's rpc.address (7331 by default), not its status listener`,
      'JOIN_NOT_A_NODE',
    );
  let raw: unknown;
  try {
    raw = JSON.parse(res.text);
  } catch {
    throw new JoinError(`${url}: GET /genesis is not JSON; is this a noded RPC listener?`, 'JOIN_NOT_A_NODE');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new JoinError(`${url}: GET /genesis is not a JSON object`, 'JOIN_BAD_GENESIS');
  if ('jsonrpc' in raw) {
    throw new JoinError(
      `${url} is a status listener (CometBFT JSON-RPC, rpc.status_address); give the aggregator's RPC listener (rpc.address, 7331 by default)`,
      'JOIN_NOT_A_NODE',
    );
  }
  let genesis: Genesis;
  try {
    genesis = parseGenesisObject(raw as Record<string, unknown>, `the genesis ${url} serves`);
  } catch (err) {
    if (err instanceof HomeError) throw new JoinError(err.message, 'JOIN_BAD_GENESIS');
    throw err;
  }
  if (!CHAIN_ID_PATTERN.test(genesis.chainId)) {
    throw new JoinError(`the genesis ${url} serves has chain_id ${JSON.stringify(genesis.chainId)}, expected ${CHAIN_ID_FORM}`, 'JOIN_BAD_GENESIS');
  }

  const signer = JSON.parse(await ask(url, 'GetSignerInfo', () => client.callJson('/node.v1.ConfigService/GetSignerInfo', {}))) as { address: string };
  if (signer.address !== b64(genesis.proposerAddress)) {
    throw new JoinError(
      `${url} is a full node, not the aggregator of chain ${genesis.chainId} (its signer ${signer.address} is not the genesis proposer ${b64(genesis.proposerAddress)}); give the aggregator's RPC URL`,
      'JOIN_NOT_AGGREGATOR',
    );
  }
  let first;
  try {
    first = (await client.getBlock({ height: genesis.initialHeight })).response.block?.header;
  } catch (err) {
    if (err instanceof NodeRequestError && err.connectCode === 'not_found') {
      throw new JoinError(
        `${url} has no block ${genesis.initialHeight} yet, so its genesis cannot be checked against it; try again after its first block`,
        'JOIN_BAD_GENESIS',
      );
    }
    throw joinErrorOf(url, `GetBlock ${genesis.initialHeight}`, err);
  }
  const problem = !first?.header
    ? 'it has no header'
    : first.header.chainId !== genesis.chainId
      ? `its chain id is ${JSON.stringify(first.header.chainId)}`
      : first.header.height !== genesis.initialHeight
        ? `its height is ${first.header.height}`
        : signedHeaderProblem(first, genesis.proposerAddress);
  if (problem)
    throw new JoinError(
      `the genesis ${url} serves does not verify: its block ${genesis.initialHeight} is not the genesis proposer's (${problem})`,
      'JOIN_BAD_GENESIS',
    );

  const net = JSON.parse(await ask(url, 'GetNetInfo', () => client.callJson('/node.v1.P2PService/GetNetInfo', {}))) as {
    net_info: { listen_addresses: string[] };
  };
  const peer = peerAddressFor(new URL(url).hostname, net.net_info.listen_addresses);
  if (!peer) throw new JoinError(`${url} reports no P2P listen address (GetNetInfo: ${JSON.stringify(net.net_info.listen_addresses)})`, 'JOIN_NOT_A_NODE');
  const ns = JSON.parse(await ask(url, 'GetNamespace', () => client.callJson('/node.v1.ConfigService/GetNamespace', {}))) as {
    header_namespace: string;
    data_namespace: string;
  };
  return { url, genesisJson: res.text, genesis, peer, namespaces: { header: ns.header_namespace, data: ns.data_namespace } };
}

/**
 * node.yml settings a full node needs to follow the source: the peer, and the
 * DA namespaces unless they are the ones its chain id gives anyway.
 */
export function joinConfig(source: JoinSource, daAddress: string | undefined): ConfigOverrides {
  const byChainId = hexNs(daNamespace(source.genesis.chainId));
  const { header, data } = source.namespaces;
  return {
    'p2p.peers': source.peer,
    ...(header !== byChainId ? { 'da.namespace': header } : {}),
    ...(data !== header ? { 'da.data_namespace': data } : {}),
    ...(daAddress ? { 'da.address': daAddress } : {}),
  };
}

/**
 * Writes a full-node home of the source's chain: its genesis as served, the
 * peer and namespaces in node.yml, keys of its own. A home that did not exist
 * before is removed again if writing fails, so nothing half-written is left.
 */
export function writeJoinedHome(opts: { home: string; force: boolean; source: JoinSource; daAddress?: string }): InitResult {
  const existed = existsSync(opts.home);
  try {
    return initHome({
      home: opts.home,
      chainId: opts.source.genesis.chainId,
      aggregator: false,
      force: opts.force,
      config: joinConfig(opts.source, opts.daAddress),
      genesisJson: opts.source.genesisJson,
    });
  } catch (err) {
    if (!existed && !(err instanceof HomeError)) rmSync(opts.home, { recursive: true, force: true });
    throw err;
  }
}
