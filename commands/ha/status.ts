import { haConfigFlags, haEtcdFor } from '../../cli/ha.js';
import { NodedCommand } from '../../cli/base.js';
import { readHaStatus, type HaStatusReport } from '../../src/ha/index.js';

export default class HaStatus extends NodedCommand {
  static summary = "Show the HA cluster as etcd holds it: who leads, its RPC address, the recorded head, the leader's lease, etcd members' health.";
  static description =
    "Reads etcd directly, with this home's ha section (endpoints, TLS, user and password; --node.ha.* flags override it as on `noded start`), so it answers whichever node leads and while no node runs. Keys under ha.key_prefix (default /noded/<chain_id>). Exits 1 with code HA_ETCD_UNREACHABLE when etcd does not answer.";
  static examples = [
    { description: 'The cluster of the node in ~/.node', command: '<%= config.bin %> <%= command.id %>' },
    { description: 'As JSON, for a script', command: '<%= config.bin %> <%= command.id %> --home ~/.node-ha1 --json' },
    {
      description: 'A node started with its HA settings as flags',
      command: '<%= config.bin %> <%= command.id %> --node.ha.etcd_endpoints http://10.0.0.9:2379',
    },
  ];
  static enableJsonFlag = true;
  static flags = haConfigFlags();

  async run(): Promise<HaStatusReport> {
    const { flags } = await this.parse(HaStatus);
    const { etcd, settings, prefix } = haEtcdFor(flags);
    let report: HaStatusReport;
    try {
      report = await readHaStatus(etcd, settings, prefix);
    } catch (err) {
      const e = err as Error & { code?: string };
      this.fail(e.message, e.code ?? 'HA_ETCD_FAILED');
    } finally {
      etcd.close();
    }
    const { leader, head } = report;
    this.log(`key prefix   ${report.key_prefix}`);
    this.log(leader ? `leader       ${leader.node_id} (RPC ${leader.rpc})` : 'leader       none (an election is under way, or no HA node runs)');
    if (leader) this.log(`lease        ${leader.lease_id}: TTL ${leader.lease_ttl_seconds}s, ${leader.lease_seconds_left}s left`);
    this.log(head ? `head         ${head.height} ${head.hash}` : 'head         none recorded yet');
    if (report.step_down) this.log(`step-down    requested of ${report.step_down.node_id} at ${report.step_down.requested_at}`);
    for (const m of report.members) this.log(`etcd member  ${m.name} ${m.endpoint}: ${m.healthy ? 'healthy' : `unhealthy (${m.error})`}`);
    return report;
  }
}
