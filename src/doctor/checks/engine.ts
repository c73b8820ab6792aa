import { request } from 'undici';
import { formatDuration, resolveHomePath } from '../../config/index.js';
import { NodeClient } from '../../client/index.js';
import { JwtSecretError, engineJwt, readJwtSecret } from '../../exec/evm/jwt.js';
import type { Check, DoctorContext, Verdict } from '../types.js';

/** Node and execution layer may differ by the block being executed right now. */
const HEIGHT_TOLERANCE = 1;

type EngineAnswer = { ok: true; height: number } | { ok: false; verdict: Verdict };

/** `eth_blockNumber` (empty params) on the Engine API with a fresh JWT. */
export async function engineBlockNumber(url: string, secret: Uint8Array, timeoutMs: number, signal?: AbortSignal): Promise<EngineAnswer> {
  const token = await engineJwt(secret);
  const timeout = AbortSignal.timeout(timeoutMs);
  let status: number;
  let text: string;
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    status = res.statusCode;
    text = await res.body.text();
  } catch (err) {
    const e = err as { code?: string; name?: string; message?: string };
    const timedOut = e.name === 'TimeoutError' || e.name === 'AbortError' || /TIMEOUT/.test(e.code ?? '');
    return {
      ok: false,
      verdict: {
        status: 'fail',
        message: timedOut
          ? `Engine API at ${url} did not answer within ${formatDuration(timeoutMs)}`
          : `Engine API unreachable at ${url}: ${e.code ?? e.message}`,
        remedy: `start the execution client with its Engine API on ${url}, or point execution.engine_url (--node.execution.engine_url) at it`,
      },
    };
  }
  if (status === 401 || status === 403) {
    return {
      ok: false,
      verdict: {
        status: 'fail',
        message: `Engine API at ${url} rejected the JWT (HTTP ${status}: ${text.trim().slice(0, 120)})`,
        remedy:
          "the node and the execution client must share one secret: give the client the same jwt.hex (execution.jwt_secret_file), and check both machines' clocks (the token's iat must be within 60 s)",
      },
    };
  }
  let rpc: { result?: unknown; error?: { message?: string } };
  try {
    rpc = JSON.parse(text) as typeof rpc;
  } catch {
    return {
      ok: false,
      verdict: {
        status: 'fail',
        message: `Engine API at ${url} answered HTTP ${status}, not JSON-RPC: ${text.slice(0, 120)}`,
        remedy: 'check that execution.engine_url is the Engine API port (8551 by default)',
      },
    };
  }
  if (typeof rpc.result !== 'string' || !/^0x[0-9a-f]+$/i.test(rpc.result)) {
    return {
      ok: false,
      verdict: {
        status: 'fail',
        message: `eth_blockNumber on ${url} failed: ${rpc.error?.message ?? text.slice(0, 120)}`,
        remedy: "check the execution client's logs",
      },
    };
  }
  return { ok: true, height: Number(BigInt(rpc.result)) };
}

async function nodeHeight(ctx: DoctorContext): Promise<number | undefined> {
  if (ctx.node.state !== 'running') return undefined;
  try {
    const status = await new NodeClient(ctx.config.rpc.address, ctx.config.rpc.status_address, ctx.timeoutMs).status();
    return Number(status.sync_info.latest_block_height);
  } catch {
    return undefined; // the node check reports a node that does not answer
  }
}

export const engineCheck: Check = {
  id: 'engine',
  verifies:
    "for execution.type evm: jwt.hex holds 32 bytes of hex, and eth_blockNumber on execution.engine_url answers with a fresh JWT; its height beside the node's",
  async run(ctx, signal) {
    const { execution } = ctx.config;
    if (execution.type !== 'evm') return { status: 'ok', message: `execution.type is ${execution.type}: no Engine API to check` };
    const file = resolveHomePath(ctx.home, execution.jwt_secret_file);
    let secret: Uint8Array;
    try {
      secret = readJwtSecret(file);
    } catch (err) {
      if (!(err instanceof JwtSecretError)) throw err;
      return {
        status: 'fail',
        message: err.message,
        remedy: `write 32 random bytes as hex (\`openssl rand -hex 32 > ${file}\`) and give the execution client the same file, or point execution.jwt_secret_file at the client's`,
      };
    }
    // The node's height read before and after the execution layer's: a node making blocks moves on while the
    // questions travel (more so on a busy host), so the execution layer is in sync when its height lies between
    // the two, give or take one block, however long the answers took.
    const before = await nodeHeight(ctx);
    const answer = await engineBlockNumber(execution.engine_url, secret, ctx.timeoutMs, signal);
    if (!answer.ok) return answer.verdict;
    const seen = `Engine API at ${execution.engine_url} reachable and authorised; execution layer at height ${answer.height}`;
    const after = before === undefined ? undefined : await nodeHeight(ctx);
    if (before === undefined || after === undefined) return { status: 'ok', message: `${seen} (node not answering: heights not compared)` };
    const height = answer.height < before ? before : after;
    if (answer.height < before - HEIGHT_TOLERANCE || answer.height > after + HEIGHT_TOLERANCE) {
      return {
        status: 'warn',
        message: `execution layer out of sync: at height ${answer.height}, the node at ${height} (${answer.height < height ? 'behind' : 'ahead'})`,
        remedy: "check the execution client's logs and its Engine API connectivity; if its state is lost, `noded reset evm` rebuilds it",
      };
    }
    return { status: 'ok', message: `${seen}, the node at ${height}` };
  },
};
