import { z } from 'zod';
import { HOST_PORT_FORM, isAbciAddress, isHttpUrl, isListenMultiaddr, matchHostPort, splitList } from './address.js';
import { PEER_ADDRESS_EXAMPLE, PEER_ADDRESS_FORMAT, peerListProblem } from './peer-address.js';
import { DURATION_FORM, formatDuration, tryParseDuration } from './duration.js';
import { SIZE_FORM, tryParseSize } from './size.js';
import { hostListProblem, originListProblem } from './origin.js';

/**
 * The config schema: every key's validation, default and help text is written
 * here once. configKeys(), loading, flags, env names and the rendered node.yml
 * are all derived from it.
 *
 * Every issue message is the "expected …" half of an operator-facing line
 * (`node.block_time: got "fast", expected <message>`), so messages are phrased
 * as the form a value should take.
 */

export type ConfigKind = 'bool' | 'duration' | 'int' | 'number' | 'size' | 'string' | 'enum';

/** What the schema keeps beside each key, for everything generated from it. */
export interface FieldInfo {
  kind: ConfigKind;
  /** The default as written in YAML or on a flag (`1s`, not 1000). */
  default: string;
  options?: readonly string[];
}

export const fieldInfo = z.registry<FieldInfo>();

function field<T extends z.ZodType>(schema: T, info: FieldInfo, description: string): T {
  const described = schema.describe(description);
  fieldInfo.add(described, info);
  return described;
}

// Node timers overflow above 2^31-1 ms (about 596h) and then fire at once.
const MAX_TIMER_MS = 2 ** 31 - 1;
const DURATION_RANGE = `a duration above 0 and at most ${Math.floor(MAX_TIMER_MS / 3_600_000)}h, like 500ms, 1s or 2m`;

// A duration is a string with a unit; a bare number (`block_time: 5`) is refused
// rather than guessed at.
const durationText = z.string({ error: DURATION_FORM }).transform((text, ctx) => {
  const ms = tryParseDuration(text);
  if (ms === undefined || ms < 1 || ms > MAX_TIMER_MS) {
    ctx.issues.push({ code: 'custom', message: ms === undefined ? DURATION_FORM : DURATION_RANGE, input: text });
    return z.NEVER;
  }
  return ms;
});

function bool(defaultValue: boolean, description: string) {
  return field(z.boolean({ error: 'true or false' }).prefault(defaultValue), { kind: 'bool', default: String(defaultValue) }, description);
}

function duration(defaultValue: string, description: string) {
  return field(durationText.prefault(defaultValue), { kind: 'duration', default: defaultValue }, description);
}

function int(defaultValue: number, min: number, expected: string, description: string) {
  const schema = z.number({ error: expected }).int({ error: expected }).min(min, { error: expected }).max(Number.MAX_SAFE_INTEGER, { error: expected });
  return field(schema.prefault(defaultValue), { kind: 'int', default: String(defaultValue) }, description);
}

function number(defaultValue: number, isValid: (n: number) => boolean, expected: string, description: string) {
  const schema = z.number({ error: expected }).refine(isValid, { error: expected });
  return field(schema.prefault(defaultValue), { kind: 'number', default: String(defaultValue) }, description);
}

/**
 * A string key; `form` checks it and says what it should look like, and
 * `problem`, when given, what is wrong with a value it refuses.
 */
function text(
  defaultValue: string,
  description: string,
  form?: { isValid: (s: string) => boolean; expected: string; problem?: (s: string) => string | undefined },
) {
  const refused = (value: unknown) => {
    const problem = form?.problem?.(String(value));
    return problem ? `${form!.expected}: ${problem}` : form!.expected;
  };
  const schema = form ? z.string({ error: form.expected }).refine(form.isValid, { error: (issue) => refused(issue.input) }) : z.string({ error: 'a string' });
  return field(schema.prefault(defaultValue), { kind: 'string', default: defaultValue }, description);
}

/** A byte size written with a unit (`10MB`), held as bytes; at least `min` bytes. */
function size(defaultValue: string, min: number, description: string) {
  const schema = z.string({ error: SIZE_FORM }).transform((text, ctx) => {
    const bytes = tryParseSize(text);
    if (bytes === undefined || bytes < min) {
      ctx.issues.push({ code: 'custom', message: bytes === undefined ? SIZE_FORM : `a size of at least ${min} bytes, like 10MB`, input: text });
      return z.NEVER;
    }
    return bytes;
  });
  return field(schema.prefault(defaultValue), { kind: 'size', default: defaultValue }, description);
}

function oneOf<const Options extends readonly [string, ...string[]]>(options: Options, defaultValue: Options[number], description: string) {
  const schema = z.enum(options, { error: `one of ${options.join(', ')}` });
  return field(schema.prefault(defaultValue), { kind: 'enum', default: defaultValue, options }, description);
}

function section<Shape extends z.ZodRawShape>(shape: Shape) {
  return z.strictObject(shape, { error: 'a YAML map of keys' });
}

const httpUrl = { isValid: isHttpUrl, expected: 'an http(s) URL like http://127.0.0.1:26658' };
const hostPort = { isValid: (s: string) => matchHostPort(s) !== undefined, expected: HOST_PORT_FORM };

const node = section({
  aggregator: bool(false, "Produce blocks as the chain's aggregator (sequencer); when off, the node follows the chain as a full node"),
  block_time: duration('1s', 'Block time; raising it reduces CPU use'),
  lazy_mode: bool(false, 'Produce a block only when transactions wait or lazy_block_interval has passed, instead of every block_time'),
  lazy_block_interval: duration('60s', 'In lazy mode, the longest wait between blocks when no transactions arrive; must exceed block_time'),
  max_pending_blocks: int(
    100,
    0,
    'an integer >= 0 (0 = no cap)',
    'Cap on pending blocks (produced but not yet on DA), at which production pauses; lowering it reduces memory use (0 = no cap)',
  ),
  mempool_max_txs: int(10_000, 1, 'an integer >= 1', 'Most transactions the mempool holds; when it is full the node answers new ones with HTTP 503'),
  based: bool(
    false,
    'Based mode: derive every block from the DA forced-inclusion namespace alone, epoch by epoch (needs da.forced_inclusion_namespace; no aggregator, no signing key); every based node of the chain derives the same blocks',
  ),
}).superRefine((node, ctx) => {
  // Checked even outside lazy mode, so turning lazy mode on never reveals a config that was broken all along.
  if (node.lazy_block_interval <= node.block_time) {
    ctx.addIssue({
      code: 'custom',
      path: ['lazy_block_interval'],
      message: `a duration longer than node.block_time (${formatDuration(node.block_time)})`,
    });
  }
});

const da = section({
  address: text('http://127.0.0.1:26658', 'Address of the DA node', httpUrl),
  auth_token: text('', "Auth token for the DA node's API; never logged"),
  namespace: text(
    '',
    'Name the DA namespace is derived from (sha256 of it, version 0), or the namespace itself as 0x and 58 hex digits: headers, and data unless da.data_namespace is set; empty = the chain id',
  ),
  data_namespace: text(
    '',
    "Name block data's own DA namespace is derived from (or 0x and 58 hex digits), so light readers of headers skip it; empty = data goes to the header namespace (ev-node's default)",
  ),
  gas_price: number(
    -1,
    (n) => n === -1 || (n >= 0 && Number.isFinite(n)),
    '-1 (the DA node estimates) or a number >= 0',
    'Gas price for DA submissions; raising it helps unstick pending DA transactions (-1 = the DA node estimates)',
  ),
  max_gas_price: number(
    0,
    (n) => n >= 0 && Number.isFinite(n),
    "a number >= 0 (0 = the DA node's default cap)",
    "Highest gas price the DA node may estimate for a submission; it refuses to submit above it (0 = the DA node's default cap, 100 x celestia's minimum gas price). Not applied to a da.gas_price you set",
  ),
  gas_multiplier: number(
    1.2,
    (n) => n >= 1 && Number.isFinite(n),
    'a number >= 1',
    'Factor the gas price is raised by on each retry after the DA node reports the transaction already in its mempool',
  ),
  request_timeout: duration('30s', 'Timeout for requests to the DA layer'),
  unready_after: duration(
    '1m',
    'How long DA submissions (on an aggregator) or DA reads (on a full node) may fail without a break, whatever the cause, before /health/ready answers UNREADY',
  ),
  block_time: duration('6s', 'Block time of the DA layer; the node polls it for new blobs this often'),
  local: bool(false, 'Serve the built-in DA at da.address from this process (for devnets and tests)'),
  forced_inclusion_namespace: text(
    '',
    "Name the forced-inclusion DA namespace is derived from (or 0x and 58 hex digits): txs posted there (`noded tx post`) must be in a block by their epoch's grace boundary; must differ from the header and data namespaces; empty = forced inclusion off",
  ),
  max_blob_size: int(1_974_272, 1, 'an integer >= 1 (bytes)', 'Largest blob the node submits to DA, in bytes; bigger batches are split'),
  inclusion_window: int(
    0,
    0,
    "an integer >= 0 (DA blocks; 0 = the DA's own)",
    "DA blocks within which the DA node includes a submission it took, or never; after a submission whose answer was lost the node watches DA this long before posting again, so no block is posted twice (0 = 1 with da.local, else 36: celestia-app's mempool TTL; set 1 for `noded da serve`)",
  ),
});

const p2p = section({
  listen_address: text('/ip4/0.0.0.0/tcp/7676', 'Multiaddr the node listens on for peers', {
    isValid: isListenMultiaddr,
    expected: 'a multiaddr like /ip4/0.0.0.0/tcp/7676',
  }),
  peers: text('', 'Peers to connect to, comma-separated /ip4/<ip>/tcp/<port>/p2p/<peer_id>; when empty, the node syncs from DA only', {
    isValid: (list) => peerListProblem(list) === undefined,
    expected: `comma-separated peer addresses ${PEER_ADDRESS_FORMAT}, like ${PEER_ADDRESS_EXAMPLE}`,
    problem: peerListProblem,
  }),
});

const rpc = section({
  address: text('127.0.0.1:7331', 'Address (host:port) of the store RPC and the health endpoints', hostPort),
  status_address: text('127.0.0.1:26657', 'Address (host:port) of the CometBFT-style status endpoint', hostPort),
  header_timeout: duration(
    '10s',
    "On both listeners, how long a client has to send a request's headers, from its first byte (or from connecting); the connection is closed after it",
  ),
  request_timeout: duration(
    '30s',
    'On both listeners, how long a client has to send a whole request, headers and body; the request is cut off after it (at least rpc.header_timeout)',
  ),
  idle_timeout: duration(
    '65s',
    'On both listeners, how long a kept-alive connection with no request in progress stays open; the default outlasts the 60s idle timeout of common reverse proxies',
  ),
  max_connections: int(
    1000,
    1,
    'an integer >= 1',
    'On each listener, the most connections open at once; one more is closed as soon as it is accepted. Keep it below the open-files limit (ulimit -n)',
  ),
  cors_allowed_origins: text(
    '',
    "Comma-separated origins (scheme://host[:port], one * wildcard allowed, or * for any) whose web pages may call both listeners; a request from any other Origin is refused on the routes that change state (POST /tx, the status listener's POST / and broadcast_tx_*), as CometBFT's cors_allowed_origins; empty = none",
    {
      isValid: (list) => originListProblem(list) === undefined,
      expected: 'comma-separated origins like https://app.example.com, http://*.example.com or *',
      problem: originListProblem,
    },
  ),
  allowed_hosts: text(
    '',
    "Comma-separated host names, besides IP addresses, localhost and the listener's own host, that a request's Host header may name (the names DNS or a reverse proxy gives this node); any other is refused, so a DNS-rebinding web page cannot reach the listeners",
    { isValid: (list) => hostListProblem(list) === undefined, expected: 'comma-separated host names like node.example.com', problem: hostListProblem },
  ),
}).superRefine((rpc, ctx) => {
  // Node's HTTP server refuses a header timeout longer than the request timeout (the headers are part of the request).
  if (rpc.request_timeout < rpc.header_timeout) {
    ctx.addIssue({ code: 'custom', path: ['request_timeout'], message: `a duration at least rpc.header_timeout (${formatDuration(rpc.header_timeout)})` });
  }
});

const execution = section({
  type: oneOf(
    ['kv', 'evm', 'abci', 'grpc'],
    'kv',
    "Execution layer: kv (built-in key/value machine), evm (an Engine API client), abci (an ABCI app) or grpc (an executor serving ev-node's ExecutorService)",
  ),
  engine_url: text('http://127.0.0.1:8551', 'Engine API URL of the EVM execution client', httpUrl),
  eth_url: text('http://127.0.0.1:8545', 'JSON-RPC URL of the EVM execution client', httpUrl),
  jwt_secret_file: text('config/jwt.hex', 'File with the hex JWT secret shared with the EVM execution client; relative paths are under the home'),
  fee_recipient: text('0x0000000000000000000000000000000000000000', 'Address that receives the fees of EVM blocks', {
    isValid: (s) => /^0x[0-9a-fA-F]{40}$/.test(s),
    expected: 'an address of 0x and 40 hex digits',
  }),
  db_path: text('', 'Database directory of the execution client, deleted by `noded reset evm`; empty = none'),
  abci_address: text('tcp://127.0.0.1:26659', 'Address of the ABCI app', {
    isValid: isAbciAddress,
    expected: 'tcp://host:port or unix:///path/to/socket',
  }),
  grpc_address: text(
    'http://127.0.0.1:50051',
    'URL of the ExecutorService for execution.type grpc (`noded exec serve`, or any executor speaking it); https:// for TLS',
    {
      isValid: isHttpUrl,
      expected: 'an http(s) URL like http://127.0.0.1:50051',
    },
  ),
  grpc_auth_token: text('', 'Bearer token sent to the ExecutorService with every call (`noded exec serve --token`); empty = none; never logged'),
});

const instrumentation = section({
  prometheus: bool(false, 'Serve Prometheus metrics'),
  prometheus_listen_addr: text('127.0.0.1:26660', 'Address (host:port) of the Prometheus metrics endpoint', hostPort),
});

const log = section({
  level: oneOf(['trace', 'debug', 'info', 'warn', 'error', 'fatal'], 'info', 'Least severe level of log lines written'),
  format: oneOf(['text', 'json'], 'text', 'Log format: text for people, json for machines'),
  file: text('', 'Also write logs to this file, rotated by size; relative paths are under the home; empty = stderr only'),
  max_size: size('100MB', 1024, 'Size at which log.file is rotated, like 10MB: it becomes log.file.1 (older ones shift to .2, .3, …) and a new file begins'),
  max_files: int(5, 0, 'an integer >= 0', 'Rotated log files kept beside log.file; the oldest beyond this is deleted (0 = keep none)'),
  status_interval: duration(
    '30s',
    'How often the node logs its one-line status (height, sync, DA, peers, last error); it also logs one whenever that state changes',
  ),
});

/** What is wrong with an ha.etcd_endpoints list, or undefined when every entry is an http(s) URL. */
export function etcdEndpointsProblem(list: string): string | undefined {
  const bad = splitList(list).find((url) => !isHttpUrl(url));
  return bad === undefined ? undefined : `"${bad}" is not an http(s) URL`;
}

const ha = section({
  enabled: bool(
    false,
    'High availability: several aggregators sharing the signer key and genesis elect one leader through etcd; the leader produces and submits to DA, the others follow and stand by (needs node.aggregator and ha.etcd_endpoints)',
  ),
  etcd_endpoints: text('', 'Comma-separated client URLs of the etcd cluster, like http://10.0.0.1:2379,http://10.0.0.2:2379 (https:// with ha.tls_ca_file)', {
    isValid: (list) => etcdEndpointsProblem(list) === undefined,
    expected: 'comma-separated http(s) URLs like http://127.0.0.1:2379',
    problem: etcdEndpointsProblem,
  }),
  node_id: text('', "This node's name in the election, unique among the HA nodes; empty = its P2P peer id"),
  advertise_rpc: text(
    '',
    "URL at which the other HA nodes reach this node's RPC (rpc.address), where a follower forwards txs while this node leads, like http://10.0.0.2:7331; empty = http://<rpc.address as bound>, which must then be reachable from the other nodes (not 127.0.0.1 or 0.0.0.0 across hosts)",
    { isValid: (s) => s === '' || isHttpUrl(s), expected: 'empty, or an http(s) URL like http://10.0.0.2:7331' },
  ),
  lease_ttl: duration(
    '2s',
    "TTL of the leader's etcd lease, in whole seconds: a dead leader is replaced within about this long; a leader that could not renew it stops producing before it expires",
  ),
  key_prefix: text('', 'Prefix of the etcd keys of the election and the fenced head; empty = /noded/<chain_id>', {
    isValid: (s) => s === '' || (s.startsWith('/') && !s.endsWith('/')),
    expected: 'a key prefix starting with / and not ending with /, like /noded/my-chain',
  }),
  tls_ca_file: text('', 'CA certificate (PEM) etcd is checked against, for https:// endpoints; relative paths are under the home; empty = plain http'),
  tls_cert_file: text('', 'Client certificate (PEM) for etcd client-certificate auth (with ha.tls_key_file); relative paths are under the home'),
  tls_key_file: text('', 'Private key (PEM) of ha.tls_cert_file; relative paths are under the home'),
  username: text('', 'User name for etcd, when etcd has authentication on (with ha.password)'),
  password: text('', 'Password of ha.username; never logged'),
}).superRefine((ha, ctx) => {
  // etcd grants leases in whole seconds (LeaseGrantRequest.TTL is int64 seconds: etcd api/etcdserverpb/rpc.proto).
  if (ha.lease_ttl % 1000 !== 0) ctx.addIssue({ code: 'custom', path: ['lease_ttl'], message: 'a whole number of seconds, like 2s' });
  if (ha.enabled && ha.etcd_endpoints === '') {
    ctx.addIssue({ code: 'custom', path: ['etcd_endpoints'], message: 'at least one etcd URL, like http://127.0.0.1:2379, while ha.enabled is true' });
  }
  if ((ha.tls_cert_file === '') !== (ha.tls_key_file === '')) {
    ctx.addIssue({
      code: 'custom',
      path: [ha.tls_cert_file ? 'tls_key_file' : 'tls_cert_file'],
      message: 'set with its pair: ha.tls_cert_file and ha.tls_key_file go together',
    });
  }
  if ((ha.username === '') !== (ha.password === '')) {
    ctx.addIssue({ code: 'custom', path: [ha.username ? 'password' : 'username'], message: 'set with its pair: ha.username and ha.password go together' });
  }
});

/** A whole number written in YAML (read as text there) or JSON. */
function wholeNumber(min: number, expected: string) {
  return z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)], { error: expected }).pipe(z.number().int().min(min, { error: expected }));
}

/** Help text of each `supervise:` entry field, for node.yml and the README. */
export const SUPERVISE_FIELDS = {
  name: 'Name of the child: prefixes its output and names it in logs and `noded status`',
  command: 'Program to run (a path, or a name looked up on PATH)',
  args: 'Its arguments, a YAML list (default: none)',
  env: "Environment variables added to the node's own, a YAML map (default: none)",
  cwd: 'Directory it runs in; relative paths are under the home (default: the home)',
  ready: 'http(s) URL that answers once the child is ready; the node starts after it does (empty = ready at once)',
  ready_timeout: 'How long to wait for ready before giving up (default: 60s)',
  restart: 'When to restart it after it exits: always, on-failure (a non-zero exit or a signal) or never (default: on-failure)',
  max_restarts: 'Restarts allowed within restart_window; one more stops the node as a crash loop (default: 5)',
  restart_window: 'Window the restarts are counted in (default: 60s)',
  stop_grace: 'How long it gets after SIGTERM before SIGKILL when the node stops (default: 10s)',
} as const;

/** One child process `noded start` runs beside the node (DESIGN.md §11). */
const superviseEntry = z.strictObject(
  {
    name: z.string({ error: 'a name' }).regex(/^[A-Za-z0-9._-]{1,40}$/, { error: '1 to 40 letters, digits, ".", "_" or "-"' }),
    command: z.string({ error: 'a program to run' }).min(1, { error: 'a program to run' }),
    args: z.array(z.string({ error: 'a string' }), { error: 'a YAML list of strings' }).default([]),
    env: z.record(z.string(), z.string({ error: 'a string' }), { error: 'a YAML map of names to strings' }).default({}),
    cwd: z.string({ error: 'a path' }).default(''),
    ready: z
      .string({ error: httpUrl.expected })
      .refine((s) => s === '' || isHttpUrl(s), { error: httpUrl.expected })
      .default(''),
    ready_timeout: durationText.default(60_000),
    restart: z.enum(['always', 'on-failure', 'never'], { error: 'one of always, on-failure, never' }).default('on-failure'),
    max_restarts: wholeNumber(0, 'an integer >= 0').default(5),
    restart_window: durationText.default(60_000),
    stop_grace: durationText.default(10_000),
  },
  { error: `a YAML map with name and command (and optionally ${Object.keys(SUPERVISE_FIELDS).slice(2).join(', ')})` },
);

const supervise = z.array(superviseEntry, { error: 'a YAML list of child processes, each a map with name and command' }).superRefine((entries, ctx) => {
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    if (seen.has(entry.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: 'a name no other supervise entry has' });
    seen.add(entry.name);
  });
});

export type SuperviseEntry = z.output<typeof superviseEntry>;
/** An entry as node.yml writes it (durations as text, like `10s`). */
export type SuperviseEntryYaml = z.input<typeof superviseEntry>;

/** Sections in the order node.yml lists them; a missing section takes its defaults. */
export const configSchema = z.strictObject(
  {
    node: node.prefault({}),
    da: da.prefault({}),
    p2p: p2p.prefault({}),
    rpc: rpc.prefault({}),
    execution: execution.prefault({}),
    instrumentation: instrumentation.prefault({}),
    log: log.prefault({}),
    ha: ha.prefault({}),
    supervise: supervise.prefault([]),
  },
  { error: 'a YAML map of sections (node:, da:, p2p:, rpc:, execution:, instrumentation:, log:, ha:, supervise:)' },
);

/** The validated config: durations are milliseconds (`config.node.block_time === 1000`). */
export type Config = z.output<typeof configSchema>;

/** The sections of single keys (every one but the `supervise:` list). */
export type ConfigSection = Exclude<keyof Config, 'supervise'>;

/** A key's YAML path, `node.block_time`. */
export type ConfigPath = { [S in ConfigSection]: `${S}.${Extract<keyof Config[S], string>}` }[ConfigSection];

export function defaultConfig(): Config {
  return configSchema.parse({});
}
