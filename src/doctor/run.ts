import { formatDuration } from '../config/index.js';
import { configCheck } from './checks/config.js';
import { daAuthCheck, daBalanceCheck, daHealthCheck, daSyncCheck } from './checks/da.js';
import { dataDirCheck } from './checks/data-dir.js';
import { engineCheck } from './checks/engine.js';
import { genesisCheck } from './checks/genesis.js';
import { haCheck } from './checks/ha.js';
import { nodeCheck } from './checks/node.js';
import { peersCheck } from './checks/peers.js';
import { portsCheck } from './checks/ports.js';
import { CHECK_IDS, type Check, type CheckId, type CheckResult, type DoctorContext } from './types.js';

/** Every check, in report order. */
export const CHECKS: readonly Check[] = [
  configCheck,
  dataDirCheck,
  portsCheck,
  daHealthCheck,
  daSyncCheck,
  daAuthCheck,
  daBalanceCheck,
  engineCheck,
  peersCheck,
  nodeCheck,
  genesisCheck,
  haCheck,
];

/** `--check` got ids that do not exist. */
export class UnknownCheckError extends Error {
  readonly code = 'UNKNOWN_CHECK';
  constructor(readonly unknown: string[]) {
    super(`unknown check${unknown.length > 1 ? 's' : ''} ${unknown.map((id) => JSON.stringify(id)).join(', ')}; the checks are ${CHECK_IDS.join(', ')}`);
  }
}

/** `--check a,b --check c` → the ids, in report order; throws UnknownCheckError naming the ones that do not exist. */
export function selectChecks(requested: readonly string[] | undefined): CheckId[] {
  const ids = (requested ?? [])
    .flatMap((r) => r.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  if (ids.length === 0) return [...CHECK_IDS];
  const unknown = ids.filter((id) => !(CHECK_IDS as readonly string[]).includes(id));
  if (unknown.length > 0) throw new UnknownCheckError([...new Set(unknown)]);
  return CHECK_IDS.filter((id) => ids.includes(id));
}

/** Extra time past the bound for a check to turn its own timeout into a verdict before the runner cuts it off. */
const GRACE_MS = 250;

/**
 * Runs one check within the bound. Whatever happens, the answer is a result:
 * a check that overruns fails with "no answer within", one that throws fails
 * with its error.
 */
export async function runCheck(check: Check, ctx: DoctorContext): Promise<CheckResult> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const overrun = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error('doctor check timed out'));
      resolve({
        id: check.id,
        status: 'fail',
        message: `no answer within ${formatDuration(ctx.timeoutMs)}`,
        remedy: `raise --timeout (now ${formatDuration(ctx.timeoutMs)}) if the service is just slow`,
      });
    }, ctx.timeoutMs + GRACE_MS);
  });
  const checked = check.run(ctx, controller.signal).then(
    (v): CheckResult => ({ id: check.id, status: v.status, message: v.message, remedy: v.status === 'ok' ? '' : (v.remedy ?? '') }),
    (err: unknown): CheckResult => ({
      id: check.id,
      status: 'fail',
      message: `the check could not finish: ${(err as Error)?.message ?? String(err)}`,
      remedy: 'run it again; if it persists, report it with this message',
    }),
  );
  try {
    return await Promise.race([checked, overrun]);
  } finally {
    clearTimeout(timer);
  }
}

export interface RunOptions {
  /** Called as each check finishes, in completion order. */
  onResult?: (result: CheckResult) => void;
}

/** Runs the context's selected checks concurrently; results in report order. */
export async function runDoctor(ctx: DoctorContext, opts: RunOptions = {}): Promise<CheckResult[]> {
  const checks = CHECKS.filter((c) => ctx.selected.has(c.id));
  return Promise.all(
    checks.map((c) =>
      runCheck(c, ctx).then((r) => {
        opts.onResult?.(r);
        return r;
      }),
    ),
  );
}

/** 0 when nothing failed (warnings allowed), 1 when a check failed. */
export function doctorExitCode(results: readonly CheckResult[]): 0 | 1 {
  return results.some((r) => r.status === 'fail') ? 1 : 0;
}
