import { request } from 'undici';
import { formatDuration } from '../../config/index.js';
// The client alone, not src/da's index: that loads the built-in DA server, the submitter and the store with it.
import { DaClient } from '../../da/client.js';
import { DA_REMEDY, DaError } from '../../da/errors.js';
import type { SyncState } from '../../da/types.js';
import { readLogText } from '../../log/tail.js';
import type { Check, DoctorContext, Verdict } from '../types.js';

/** A REST answer of the DA node: status, body and how long it took. */
interface RestAnswer {
  status: number;
  text: string;
  ms: number;
}

function daClient(ctx: DoctorContext): DaClient {
  return new DaClient({ address: ctx.config.da.address, authToken: ctx.config.da.auth_token, requestTimeoutMs: ctx.timeoutMs });
}

async function withClient<T>(ctx: DoctorContext, fn: (client: DaClient) => Promise<T>): Promise<T> {
  const client = daClient(ctx);
  try {
    return await fn(client);
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** `GET {da.address}{path}` with the token; network failures become DaErrors classified as the DA client does. */
async function restGet(ctx: DoctorContext, path: string, signal: AbortSignal): Promise<RestAnswer> {
  const url = new URL(path, ctx.config.da.address.replace(/\/*$/, '/'));
  const headers: Record<string, string> = {};
  if (ctx.config.da.auth_token) headers.authorization = `Bearer ${ctx.config.da.auth_token}`;
  const started = performance.now();
  try {
    const res = await request(url, { method: 'GET', headers, signal: AbortSignal.any([signal, AbortSignal.timeout(ctx.timeoutMs)]) });
    const text = await res.body.text();
    return { status: res.statusCode, text, ms: Math.round(performance.now() - started) };
  } catch (err) {
    const e = err as { code?: string; name?: string; message?: string };
    const where = `GET ${url.pathname} to DA node ${url.host}`;
    if (e.name === 'TimeoutError' || e.name === 'AbortError' || /TIMEOUT/.test(e.code ?? '')) {
      throw new DaError(`${where} timed out after ${formatDuration(ctx.timeoutMs)}`, 'timeout');
    }
    if (['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENOTFOUND', 'UND_ERR_SOCKET', 'EAI_AGAIN'].includes(e.code ?? '')) {
      throw new DaError(`${where}: connection refused (${e.code})`, 'connection_refused');
    }
    throw new DaError(`${where} failed: ${e.message ?? String(err)}`, 'other');
  }
}

const unreachable = (err: unknown): err is DaError => err instanceof DaError && (err.reason === 'connection_refused' || err.reason === 'timeout');
const rejectedToken = (err: unknown): err is DaError => err instanceof DaError && err.reason === 'unauthorized';
const isOk = (status: number) => status >= 200 && status < 300;
/** HTTP 401 is go-jsonrpc's answer to a token it cannot verify (auth/handler.go); 403 is the built-in DA's REST answer without one. */
const isTokenRefused = (status: number) => status === 401 || status === 403;

/**
 * A dependent DA check that hit a cause another check owns (unreachable →
 * da-health, token → da-auth): a warning pointing there when that check runs
 * too, so one cause makes exactly one check fail; a failure of its own when it
 * runs alone.
 */
function deferred(ctx: DoctorContext, err: unknown): Verdict | undefined {
  if (unreachable(err)) {
    if (ctx.selected.has('da-health')) return { status: 'warn', message: 'not checked: the DA endpoint is unreachable', remedy: 'see da-health' };
    return { status: 'fail', message: `DA endpoint unreachable: ${err.message}`, remedy: DA_REMEDY[err.reason] };
  }
  if (rejectedToken(err)) {
    if (ctx.selected.has('da-auth'))
      return { status: 'warn', message: 'not checked: the DA node refuses da.auth_token (missing or wrong)', remedy: 'see da-auth' };
    return { status: 'fail', message: `DA token missing or wrong: ${err.message}`, remedy: DA_REMEDY.unauthorized };
  }
  return undefined;
}

export const daHealthCheck: Check = {
  id: 'da-health',
  verifies:
    "the DA node answers at da.address: GET /health, or, on any other answer (a celestia-node's RPC port answers a GET with HTTP 400), JSON-RPC header.NetworkHead",
  async run(ctx, signal) {
    const address = ctx.config.da.address;
    let answer: RestAnswer;
    try {
      answer = await restGet(ctx, '/health', signal);
    } catch (err) {
      if (!unreachable(err)) throw err;
      return {
        status: 'fail',
        message: `DA endpoint unreachable: ${err.message}`,
        remedy: `start the DA node, or point --node.da.address (now ${address}) at it${err.reason === 'timeout' ? ', or raise --node.da.request_timeout' : ''}`,
      };
    }
    if (isOk(answer.status)) return { status: 'ok', message: `DA node answers at ${address} (GET /health: HTTP ${answer.status} in ${answer.ms} ms)` };
    if (answer.status === 401) {
      return { status: 'ok', message: `DA node answers at ${address} (GET /health: HTTP 401, it refuses the token: see da-auth)` };
    }
    // No REST path (celestia-node's go-jsonrpc port answers HTTP 400): ask over JSON-RPC, as the node itself does.
    const rest = `GET /health: HTTP ${answer.status}`;
    try {
      const started = performance.now();
      const head = await withClient(ctx, (c) => c.networkHead(signal));
      return {
        status: 'ok',
        message: `DA node answers at ${address} (JSON-RPC header.NetworkHead: height ${head} in ${Math.round(performance.now() - started)} ms; ${rest})`,
      };
    } catch (err) {
      if (unreachable(err)) return { status: 'fail', message: `DA endpoint unreachable: ${err.message}`, remedy: DA_REMEDY[err.reason] };
      if (rejectedToken(err))
        return { status: 'ok', message: `DA node answers at ${address} (JSON-RPC header.NetworkHead wants a valid token: see da-auth; ${rest})` };
      return {
        status: 'fail',
        message: `something answers at ${address}, but not as a DA node: ${rest} and header.NetworkHead failed: ${(err as Error).message}`,
        remedy: `check that --node.da.address points at the DA node's RPC port (26658 by default), not another service`,
      };
    }
  },
};

/** `{height, to_height}` from the REST body or the JSON-RPC result. */
function readSyncState(body: unknown): { height: number; to: number } | undefined {
  const s = body as Partial<SyncState> | null;
  const height = Number(s?.height);
  const to = Number(s?.to_height);
  return Number.isFinite(height) && Number.isFinite(to) ? { height, to } : undefined;
}

export const daSyncCheck: Check = {
  id: 'da-sync',
  verifies:
    'the DA node is synced (GET /header/sync_state, or JSON-RPC header.SyncState on any other answer): how far behind, and how fast it answers (slow → raise --node.da.request_timeout)',
  async run(ctx, signal) {
    let state: { height: number; to: number } | undefined;
    let ms: number;
    let via: string;
    /** Why JSON-RPC answered instead of REST, when it did. */
    let fallback = '';
    try {
      const answer = await restGet(ctx, '/header/sync_state', signal);
      if (isTokenRefused(answer.status))
        throw new DaError(`GET /header/sync_state: HTTP ${answer.status}, the auth token is missing or refused`, 'unauthorized');
      if (isOk(answer.status)) {
        via = 'GET /header/sync_state';
        ms = answer.ms;
        try {
          state = readSyncState(JSON.parse(answer.text));
        } catch {
          state = undefined;
        }
      } else {
        // No REST path (celestia-node's go-jsonrpc port answers a GET with HTTP 400): ask over JSON-RPC.
        via = 'JSON-RPC header.SyncState';
        fallback = `; GET /header/sync_state answered HTTP ${answer.status}`;
        const started = performance.now();
        state = readSyncState(await withClient(ctx, (c) => c.syncState()));
        ms = Math.round(performance.now() - started);
      }
    } catch (err) {
      const v = deferred(ctx, err);
      if (v) return v;
      throw err;
    }
    if (!state) return { status: 'fail', message: `${via} did not answer with {height, to_height}`, remedy: DA_REMEDY.other };
    const timeout = formatDuration(ctx.config.da.request_timeout);
    if (state.to > state.height) {
      return {
        status: 'fail',
        message: `DA node not synced: at height ${state.height} of ${state.to}, ${state.to - state.height} behind (${via}, ${ms} ms${fallback})`,
        remedy: 'wait for the DA node to finish syncing (submissions fail until it does), or point --node.da.address at a synced DA node',
      };
    }
    const slowMs = Math.min(1000, ctx.config.da.request_timeout / 2);
    if (ms > slowMs) {
      return {
        status: 'warn',
        message: `DA node synced at height ${state.height}, but slow: ${via} took ${ms} ms${fallback}`,
        remedy: `check the DA node's load and network, or raise --node.da.request_timeout (now ${timeout})`,
      };
    }
    return { status: 'ok', message: `DA node synced at height ${state.height} (${via} in ${ms} ms${fallback})` };
  },
};

export const daAuthCheck: Check = {
  id: 'da-auth',
  verifies: "a JSON-RPC call with da.auth_token (header.NetworkHead, 'read' permission) is accepted; blob.Submit also needs 'write'",
  async run(ctx, signal) {
    const hasToken = ctx.config.da.auth_token !== '';
    try {
      const head = await withClient(ctx, (c) => c.networkHead(signal));
      return {
        status: 'ok',
        message: hasToken
          ? `the DA node accepts the token (header.NetworkHead: height ${head})`
          : `no token configured and the DA node asks for none (header.NetworkHead: height ${head})`,
      };
    } catch (err) {
      if (rejectedToken(err)) {
        // The client's message says which: HTTP 401 (a wrong token) or "missing permission" (none, or one without the permission).
        return { status: 'fail', message: `DA token ${hasToken ? 'wrong' : 'missing'}: ${err.message}`, remedy: err.remedy };
      }
      if (unreachable(err)) return deferred(ctx, err)!;
      if (err instanceof DaError) return { status: 'fail', message: err.message, remedy: err.remedy };
      throw err;
    }
  },
};

/** utia below which the balance is reported low: 1 TIA. */
const LOW_UTIA = 1_000_000n;
const LOG_TAIL_BYTES = 16 * 1024 * 1024;
const SUBMIT_FAILED = 'DA layer submission failed';
const SUBMITTED = 'submitted blocks to DA';
const CODE_19 = /codespace:?\s*\\?"?'?sdk\\?"?'?,?\s*code:?\s*19\b/i;

/** The message of a text line after its `[time] LEVEL: [module] ` prefix. */
const TEXT_MESSAGE = /^\[[^\]]*\] [A-Z]+: (?:\[[^\]]*\] )?(.*)$/;

/**
 * The message a log line was written with (JSON `msg`, or the text after its
 * prefix), so a line is told by what it says, not by what it quotes: the
 * periodic status line repeats the last error's text, and that echo is not
 * another failure.
 */
function lineMessage(line: string): string {
  if (line.startsWith('{')) {
    try {
      const msg = (JSON.parse(line) as { msg?: unknown }).msg;
      return typeof msg === 'string' ? msg : '';
    } catch {
      return '';
    }
  }
  return TEXT_MESSAGE.exec(line)?.[1] ?? '';
}

/** When a log line says it happened: the JSON `time`, or the text prefix `[HH:MM:ss.l]`. */
function lineTime(line: string): string | undefined {
  const json = /"time":"([^"]+)"/.exec(line);
  if (json) return json[1];
  return /\[(\d\d:\d\d:\d\d(?:\.\d+)?)\]/.exec(line)?.[1];
}

interface LogFinding {
  verdict?: Verdict;
  note: string;
}

/** The log's story of code-19 failures: the last DA outcome decides between fail and warn. */
async function scanLog(ctx: DoctorContext): Promise<LogFinding> {
  if (!ctx.log) return { note: 'no log to scan (give --log FILE, or set log.file)' };
  let text: string;
  try {
    text = await readLogText(ctx.log.file, LOG_TAIL_BYTES);
  } catch (err) {
    return { note: `log ${ctx.log.file} (${ctx.log.source}) not read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  let code19 = 0;
  let lastCode19: { index: number; line: string } | undefined;
  let lastSuccess: { index: number; line: string } | undefined;
  text.split('\n').forEach((line, index) => {
    const message = lineMessage(line);
    if (message.startsWith(SUBMIT_FAILED) && CODE_19.test(line)) {
      code19++;
      lastCode19 = { index, line };
    } else if (message.startsWith(SUBMITTED)) {
      lastSuccess = { index, line };
    }
  });
  if (!lastCode19) return { note: `no code 19 failures in ${ctx.log.file}` };
  const gas = ctx.config.da.gas_price;
  const remedy = `check the balance, fund the account, or raise --node.da.gas_price (now ${gas === -1 ? '-1, estimated by the DA node' : gas})`;
  const when = lineTime(lastCode19.line);
  const seen = `${code19} DA submission failure(s) with codespace sdk code 19 in ${ctx.log.file}${when ? `, the last at ${when}` : ''}`;
  if (lastSuccess && lastSuccess.index > lastCode19.index) {
    const since = lineTime(lastSuccess.line);
    return { note: '', verdict: { status: 'warn', message: `${seen}; submissions succeeded after it${since ? ` (${since})` : ''}`, remedy } };
  }
  return { note: '', verdict: { status: 'fail', message: `${seen}, and no submission succeeded since`, remedy } };
}

const rank = { ok: 0, warn: 1, fail: 2 } as const;

export const daBalanceCheck: Check = {
  id: 'da-balance',
  verifies:
    'the DA account has funds (state.Balance: zero → fail, low → warn), and the node log (--log, or log.file) has no "DA layer submission failed" with codespace sdk code 19',
  async run(ctx) {
    const [balance, log] = await Promise.all([
      withClient(ctx, (c) => c.balance()).then(
        (b): Verdict => {
          const amount = /^\d+$/.test(b.amount) ? BigInt(b.amount) : undefined;
          if (amount === undefined) return { status: 'warn', message: `state.Balance answered an amount that is not a number: ${JSON.stringify(b.amount)}` };
          if (amount === 0n)
            return {
              status: 'fail',
              message: `the DA account has no funds (0 ${b.denom})`,
              remedy: `fund the account (the DA node's account pays for every submission)`,
            };
          if (b.denom === 'utia' && amount < LOW_UTIA) {
            return { status: 'warn', message: `the DA account is low: ${b.amount} ${b.denom}`, remedy: 'fund the account before submissions start failing' };
          }
          return { status: 'ok', message: `balance ${b.amount} ${b.denom}` };
        },
        (err: unknown): Verdict => {
          const v = deferred(ctx, err);
          if (v) return v;
          if (err instanceof DaError && /not found/i.test(err.message)) return { status: 'warn', message: 'the DA node does not serve state.Balance' };
          if (err instanceof DaError) return { status: 'fail', message: err.message, remedy: err.remedy };
          throw err;
        },
      ),
      scanLog(ctx),
    ]);
    const worst = log.verdict && rank[log.verdict.status] > rank[balance.status] ? log.verdict : balance;
    const other = worst === balance ? (log.verdict?.message ?? log.note) : balance.message;
    return { status: worst.status, message: [worst.message, other].filter(Boolean).join('; '), remedy: worst.remedy ?? '' };
  },
};
