/**
 * The etcd keys of one chain's HA cluster, all under ha.key_prefix:
 *
 *   <prefix>/leader          the leader's name and RPC address, bound to its lease (gone when the lease is)
 *   <prefix>/head            the last fenced block: "<height>/<header hash hex>", kept without a lease
 *   <prefix>/blocks/<height> the fenced blocks' bytes, the last RECORDED_BLOCKS of them, for a takeover
 *   <prefix>/step-down       `noded ha step-down`'s request to the named leader to hand over, bound to a short lease
 *   <prefix>/da-submission   the last DA submission a leader sent (or was about to): a new leader's DA search reads it
 *
 * Heights are zero-padded so the block keys sort by height.
 */
export interface HaKeys {
  leader: string;
  head: string;
  block: (height: bigint) => string;
  stepDown: string;
  daSubmission: string;
}

export const haKeys = (prefix: string): HaKeys => ({
  leader: `${prefix}/leader`,
  head: `${prefix}/head`,
  block: (height) => `${prefix}/blocks/${height.toString().padStart(20, '0')}`,
  stepDown: `${prefix}/step-down`,
  daSubmission: `${prefix}/da-submission`,
});

/** What the step-down key holds: which leader is asked to hand over (a request to another is ignored). */
export interface StepDownRequest {
  node_id: string;
  requested_at: string;
}

export function decodeStepDown(text: string): StepDownRequest | null {
  try {
    const v = JSON.parse(text) as Partial<StepDownRequest>;
    return typeof v.node_id === 'string' ? { node_id: v.node_id, requested_at: String(v.requested_at ?? '') } : null;
  } catch {
    return null;
  }
}

/** How many of the last fenced blocks etcd keeps, for a new leader that missed them (pruned by height as new ones are fenced). */
export const RECORDED_BLOCKS = 32n;

/** The block the cluster last fenced. */
export interface RecordedHead {
  height: bigint;
  hash: Uint8Array;
}

export const encodeHead = (head: RecordedHead): string => `${head.height}/${Buffer.from(head.hash).toString('hex')}`;

export function decodeHead(text: string, key: string): RecordedHead {
  const m = /^(\d+)\/([0-9a-f]{64})$/.exec(text);
  if (!m) throw new Error(`etcd key ${key} holds "${text.slice(0, 100)}", not <height>/<64 hex digits>: another program writes under ha.key_prefix`);
  return { height: BigInt(m[1]!), hash: Buffer.from(m[2]!, 'hex') };
}

/** What the leader key holds: who leads and where its RPC listens (for followers that forward to it). */
export interface LeaderInfo {
  node_id: string;
  rpc: string;
}

/** The leader key's value: the campaign writes it, and a leader's conditional writes compare it. */
export const encodeLeader = (info: LeaderInfo): string => JSON.stringify({ node_id: info.node_id, rpc: info.rpc });

export function decodeLeader(text: string): LeaderInfo | null {
  try {
    const v = JSON.parse(text) as Partial<LeaderInfo>;
    return typeof v.node_id === 'string' && typeof v.rpc === 'string' ? { node_id: v.node_id, rpc: v.rpc } : null;
  } catch {
    return null;
  }
}

/** The DA submission key's value (the submitter's PendingSubmission: decimal heights). */
export interface RecordedSubmission {
  fromHeight: string;
  toHeight: string;
  daHeadBefore: string;
}

export function decodeSubmission(text: string, key: string): RecordedSubmission {
  let v: Partial<Record<keyof RecordedSubmission, unknown>> = {};
  try {
    v = JSON.parse(text) as typeof v;
  } catch {
    // Reported below.
  }
  const decimal = (x: unknown): x is string => typeof x === 'string' && /^\d+$/.test(x);
  if (!decimal(v.fromHeight) || !decimal(v.toHeight) || !decimal(v.daHeadBefore)) {
    throw new Error(
      `etcd key ${key} holds "${text.slice(0, 100)}", not {"fromHeight","toHeight","daHeadBefore"} as decimal strings: another program writes under ha.key_prefix`,
    );
  }
  return { fromHeight: v.fromHeight, toHeight: v.toHeight, daHeadBefore: v.daHeadBefore };
}
