import { Flags } from '@oclif/core';
import { haConfigFlags, haEtcdFor } from '../../cli/ha.js';
import { NodedCommand } from '../../cli/base.js';
import { tryParseDuration, DURATION_FORM } from '../../src/config/duration.js';
import { StepDownError, stepDown, type LeaderInfo } from '../../src/ha/index.js';

export default class HaStepDown extends NodedCommand {
  static summary = 'Hand HA leadership over to another node, for a planned upgrade of the leader; waits until another node leads.';
  static description =
    "Puts <ha.key_prefix>/step-down in etcd naming the current leader (so it needs only etcd access, with this home's ha settings). The leader, which watches that key, stops producing once its block under way is committed and fenced, revokes its lease (deleting the leader key) so a follower takes over at once, and does not campaign again for one lease TTL. Exits 0 once another node leads, 1 when none leads (HA_NO_LEADER) or none took over within --timeout (HA_STEP_DOWN_TIMEOUT).";
  static examples = [
    { description: 'Before upgrading the leader', command: '<%= config.bin %> <%= command.id %> --home ~/.node-ha1' },
    { description: 'As JSON, waiting up to a minute', command: '<%= config.bin %> <%= command.id %> --timeout 1m --json' },
  ];
  static enableJsonFlag = true;
  static flags = {
    timeout: Flags.string({ description: `How long to wait for another node to lead, ${DURATION_FORM}`, default: '30s' }),
    ...haConfigFlags(),
  };

  async run(): Promise<{ from: LeaderInfo; to: LeaderInfo }> {
    const { flags } = await this.parse(HaStepDown);
    const timeoutMs = tryParseDuration(flags.timeout);
    if (timeoutMs === undefined || timeoutMs <= 0)
      this.fail(`--timeout: got ${JSON.stringify(flags.timeout)}, expected ${DURATION_FORM}, above 0`, 'INVALID_FLAG', 2);
    const { etcd, settings, prefix } = haEtcdFor(flags);
    let result: { from: LeaderInfo; to: LeaderInfo };
    try {
      result = await stepDown(etcd, settings, prefix, timeoutMs);
    } catch (err) {
      const e = err as Error & { code?: string };
      this.fail(e.message, err instanceof StepDownError ? err.code : (e.code ?? 'HA_ETCD_FAILED'));
    } finally {
      etcd.close();
    }
    this.log(`leadership moved from ${result.from.node_id} to ${result.to.node_id} (RPC ${result.to.rpc})`);
    return result;
  }
}
