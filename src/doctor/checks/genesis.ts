import { readFileSync } from 'node:fs';
import { NodeClient } from '../../client/index.js';
import { genesisMismatchRemedy } from '../../home/index.js';
import type { Check, Verdict } from '../types.js';

/** genesis.json's fields that make the chain, compared as written (key order and spacing aside). */
const GENESIS_FIELDS = ['chain_id', 'initial_height', 'start_time', 'proposer_address', 'da_start_height', 'app_state'] as const;

function differingFields(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  return GENESIS_FIELDS.filter((f) => JSON.stringify(a[f]) !== JSON.stringify(b[f])).map(
    (f) => `${f} ${JSON.stringify(a[f])} in the file, ${JSON.stringify(b[f])} in the running node`,
  );
}

export const genesisCheck: Check = {
  id: 'genesis',
  verifies:
    "if this home's node runs: the genesis it serves (GET /genesis) is config/genesis.json, and no block it heard from peers or DA was of another genesis (chain id, proposer, initial height: /health/ready's genesis check)",
  async run(ctx): Promise<Verdict> {
    const file = ctx.paths.genesisFile;
    if (ctx.node.state !== 'running') {
      return {
        status: 'ok',
        message: `not compared: this home's node is not running, so it has heard no chain to compare ${file} with (the node check says how to start it)`,
      };
    }
    const client = new NodeClient(ctx.config.rpc.address, ctx.config.rpc.status_address, ctx.timeoutMs);
    let served: Record<string, unknown>;
    let checks: Awaited<ReturnType<NodeClient['readyChecks']>>;
    let own: Record<string, unknown>;
    try {
      own = JSON.parse(readFileSync(file, 'utf8')) as typeof own;
      const res = await client.get(`${client.rpcUrl}/genesis`);
      if (res.status !== 200) throw new Error(`GET /genesis answered HTTP ${res.status}`);
      served = JSON.parse(res.text) as typeof served;
      checks = await client.readyChecks();
    } catch (err) {
      return { status: 'warn', message: `not compared: ${(err as Error).message}`, remedy: 'see the config and node checks' };
    }
    const pid = ctx.node.pid;
    const changed = differingFields(own, served);
    if (changed.length > 0) {
      return {
        status: 'fail',
        message: `the running node (pid ${pid}) was started with another genesis than ${file}: ${changed.join('; ')}`,
        remedy: `restart the node (stop process ${pid}, then \`noded start --home ${ctx.home}\`) so it reads ${file}`,
      };
    }
    const mismatch = checks.genesis;
    if (mismatch?.status === 'fail') {
      return {
        status: 'fail',
        message: `${file} is not the genesis of the chain the running node (pid ${pid}) hears from peers and DA: ${mismatch.reason ?? 'genesis mismatch'}`,
        remedy: genesisMismatchRemedy(file),
      };
    }
    return {
      status: 'ok',
      message: `${file} (chain ${String(own.chain_id)}) is the running node's (pid ${pid}), and no block it heard from peers or DA was of another genesis`,
    };
  },
};
