import type { Etcd3 } from 'etcd3';
import { NodeClient } from '../../client/index.js';
import { ConfigError, formatDuration } from '../../config/index.js';
import type { EtcdFailureCause, HaStatusReport } from '../../ha/index.js';
import { RECORDED_BLOCKS } from '../../ha/keys.js';
import { HomeError, readHome } from '../../home/index.js';
import type { HaInfo } from '../../rpc/index.js';
import { sleep } from '../../util/index.js';
import type { Check, DoctorContext, Verdict } from '../types.js';

/** A problem of the ha section: the config check reports it (its problems read `<where>: ha.<key>: …`). */
const HA_PROBLEM = /(^|: )ha\.[a-z_]+: /;

/** What this home's running node says of itself: its height and its place in the election (none when it runs without ha). */
interface NodeView {
  pid: number;
  height: number;
  ha: HaInfo | undefined;
}

async function nodeView(ctx: DoctorContext): Promise<NodeView | undefined> {
  if (ctx.node.state !== 'running') return undefined;
  try {
    const info = await new NodeClient(ctx.config.rpc.address, ctx.config.rpc.status_address, ctx.timeoutMs).nodeInfo();
    return { pid: ctx.node.pid, height: info.height, ha: info.ha };
  } catch {
    return undefined; // the node check reports a node that does not answer
  }
}

/** The remedy for an etcd that did not answer, by which settings its error points at. */
function unreachableRemedy(ctx: DoctorContext, endpoints: string[], cause: EtcdFailureCause): string {
  const from = (key: string) => {
    const raw = ctx.raw.get(key);
    return raw ? ` (now from ${raw.source})` : '';
  };
  switch (cause) {
    case 'auth':
      return `give etcd's user and password in ha.username and ha.password${from('ha.username')} (--node.ha.username, --node.ha.password), as \`noded start\` takes them`;
    case 'tls':
      return `point ha.tls_ca_file at the CA that signed etcd's certificate${from('ha.tls_ca_file')}, and ha.tls_cert_file and ha.tls_key_file at a client pair etcd accepts (relative paths are under the home)`;
    default:
      return `start etcd at ${endpoints.join(', ')} (\`curl ${endpoints[0]}/health\` answers {"health":"true"} from a healthy member), or point ha.etcd_endpoints${from('ha.etcd_endpoints')} at the cluster's client URLs (--node.ha.etcd_endpoints <url,url>)`;
  }
}

/** What etcd says and what this node says, side by side: the verdict (the worst problem's status, every problem named). */
function judge(home: string, report: HaStatusReport, before: NodeView | undefined, after: NodeView | undefined, endpoints: string, waitedMs: number): Verdict {
  const { leader, head, members, key_prefix: prefix } = report;
  const healthy = members.filter((m) => m.healthy).length;
  const seen = [`etcd at ${endpoints} answers, ${healthy} of ${members.length} member(s) healthy`];
  const problems: Verdict[] = [];
  if (leader) {
    seen.push(`leader ${leader.node_id} (RPC ${leader.rpc}), lease ${leader.lease_seconds_left}s of ${leader.lease_ttl_seconds}s left`);
  } else {
    problems.push({
      status: 'fail',
      message: `no node leads under ${prefix} (the leader key is absent, still ${formatDuration(waitedMs)} later): the chain makes no blocks`,
      remedy: `start the chain's HA nodes (\`noded start\` with ha.enabled and node.aggregator); if they run, their logs say why none leads (HA_ETCD_FAILED, HA_BEHIND, HA_LEADERSHIP_LOST), and every one must use the key prefix ${prefix} (ha.key_prefix)`,
    });
  }
  seen.push(head ? `recorded head ${head.height}` : 'no head recorded yet');
  const sick = members.filter((m) => !m.healthy);
  if (sick.length > 0) {
    problems.push({
      status: 'warn',
      message: `etcd member(s) unhealthy: ${sick.map((m) => `${m.name || '(unnamed)'}${m.endpoint ? ` ${m.endpoint}` : ''}: ${m.error}`).join('; ')}`,
      remedy:
        "check each unhealthy member's host and etcd log, and bring it back (or remove it from the cluster); a cluster that loses most of its members stops HA: no leader can renew its lease",
    });
  }
  if (!before || !after) {
    seen.push("this home's node is not running or not answering (see node): heights not compared");
  } else if (!after.ha) {
    problems.push({
      status: 'warn',
      message: `this home's node (pid ${after.pid}) runs without ha: it was started before ha.enabled was set, or with other flags`,
      remedy: `restart it with the ha settings doctor read (stop process ${after.pid}, then \`noded start\` with the same config), so it joins the election`,
    });
  } else {
    const self = `this node ${after.ha.node_id} (${after.ha.role})`;
    if (head && before.height > head.height) {
      // Read before the head: no block a leader fenced can be above it, so these blocks were never recorded.
      problems.push({
        status: 'fail',
        message: `${self} holds height ${before.height}, past the head the cluster recorded (${head.height}): its store has blocks no leader fenced, so it refuses to lead`,
        remedy: `check that every HA node of the chain uses the key prefix ${prefix} (ha.key_prefix); if they do, this node's store diverged from the cluster: stop it, run \`noded reset soft --home ${home}\`, and start it to sync again`,
      });
    } else {
      const behind = head ? head.height - after.height : 0;
      seen.push(`${self} at height ${after.height}${behind > 0 ? `, ${behind} behind` : ''}`);
      if (behind > Number(RECORDED_BLOCKS)) {
        problems.push({
          status: 'warn',
          message: `${self} is ${behind} blocks behind the recorded head: more than the ${RECORDED_BLOCKS} etcd keeps, so it cannot take over until it catches up`,
          remedy: 'it catches up from its peers and DA; if it does not, see the node, peers and da-sync checks',
        });
      }
    }
  }
  if (problems.length === 0) return { status: 'ok', message: seen.join('; ') };
  return {
    status: problems.some((p) => p.status === 'fail') ? 'fail' : 'warn',
    message: `${problems.map((p) => p.message).join('; ')} (${seen.join('; ')})`,
    remedy: problems.map((p) => p.remedy).join('; '),
  };
}

export const haCheck: Check = {
  id: 'ha',
  verifies:
    "for ha.enabled: etcd answers at ha.etcd_endpoints with the home's TLS and user settings, each etcd member is healthy, a node leads (its id, RPC and lease time left), and this node's height beside the head the cluster recorded; skipped when ha.enabled is false",
  async run(ctx, signal) {
    const problem = ctx.configError instanceof ConfigError ? ctx.configError.problems.find((p) => HA_PROBLEM.test(p)) : undefined;
    if (problem) return { status: 'warn', message: `not checked: the ha section does not validate (${problem})`, remedy: 'see config' };
    const { ha } = ctx.config;
    if (!ha.enabled) return { status: 'ok', message: 'skipped: ha.enabled is false (this node runs without an HA cluster)' };
    // etcd's client (etcd3, gRPC, protobufjs) loads only here: a static import cost every `noded doctor` ~250 ms of start-up.
    const { createEtcdClient, etcdFailureCause, etcdSettingsOf, haKeyPrefix, readHaStatus } = await import('../../ha/index.js');
    let chainId = '';
    if (!ha.key_prefix) {
      try {
        chainId = readHome(ctx.home).genesis.chainId;
      } catch (err) {
        if (!(err instanceof HomeError)) throw err;
        return {
          status: 'warn',
          message: `not checked: no chain id to find the cluster's keys under (ha.key_prefix is empty): ${err.message}`,
          remedy: 'see config',
        };
      }
    }
    const prefix = haKeyPrefix(ctx.config, chainId);
    const settings = etcdSettingsOf(ha, ctx.home);
    let etcd: Etcd3;
    try {
      etcd = createEtcdClient(settings);
    } catch (err) {
      return {
        status: 'fail',
        message: (err as Error).message,
        remedy: 'point ha.tls_ca_file, ha.tls_cert_file and ha.tls_key_file at readable PEM files (relative paths are under the home)',
      };
    }
    // An overrun check is cut off by the runner: closing the client ends its calls.
    const close = () => etcd.close();
    signal.addEventListener('abort', close, { once: true });
    const deadline = Date.now() + ctx.timeoutMs;
    try {
      const before = await nodeView(ctx);
      // The same read as `noded ha status` (src/ha/admin.ts).
      let report = await readHaStatus(etcd, settings, prefix);
      let waitedMs = 0;
      if (!report.leader) {
        // An election under way ends within about a lease TTL: look again once, within the bound.
        waitedMs = Math.max(0, Math.min(ha.lease_ttl, (deadline - Date.now()) / 2));
        await sleep(waitedMs, signal);
        report = await readHaStatus(etcd, settings, prefix);
      }
      const after = before && (await nodeView(ctx));
      return judge(ctx.home, report, before, after, settings.endpoints.join(', '), waitedMs);
    } catch (err) {
      const e = err as Error & { code?: string };
      if (e.code === 'HA_ETCD_UNREACHABLE')
        return { status: 'fail', message: e.message, remedy: unreachableRemedy(ctx, settings.endpoints, etcdFailureCause(e.message)) };
      if (signal.aborted) throw e;
      return {
        status: 'fail',
        message: `etcd answered, but reading the cluster under ${prefix} failed: ${e.message}`,
        remedy: `check that ha.key_prefix (now ${prefix}) is the chain's own: no other program may write under it`,
      };
    } finally {
      signal.removeEventListener('abort', close);
      etcd.close();
    }
  },
};
