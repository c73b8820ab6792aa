import { Listr } from 'listr2';
import { initHome, type InitResult } from '../home/index.js';
import { assertInside, emptyDir, removeEntry } from './safe-remove.js';
import type { ResetPlan, ResetTarget } from './plan.js';

/** What a reset did (or, with dry_run, would do): `--json` prints this. */
export interface ResetResult {
  action: ResetPlan['kind'];
  home: string;
  dry_run: boolean;
  /** Paths deleted; a directory emptied is listed with a trailing `/*`. */
  deleted: string[];
  kept: string[];
  /** Entries beside the home's own that noded did not make: never deleted. */
  left_alone: string[];
  notes: string[];
  /** `hard`: the new home. */
  init: { chain_id: string; aggregator: boolean; peer_id: string; signer_address: string } | null;
  next: string[];
}

/** One line per target, as the plan and the confirmation show them. */
export function describeTarget(t: ResetTarget): string {
  return `${t.mode === 'contents' ? `${t.path}/* (everything inside; the directory stays)` : t.path}${t.what ? ` — ${t.what}` : ''}`;
}

const shown = (t: ResetTarget) => (t.mode === 'contents' ? `${t.path}/*` : t.path);

interface Step {
  title: string;
  run: () => string | void;
}

function steps(plan: ResetPlan, done: { deleted: string[]; init: InitResult | null }): Step[] {
  const list: Step[] = plan.targets.map((t) => ({
    title: `delete ${shown(t)}`,
    run: () => {
      // Checked again right before deleting: nothing may have moved a link in between.
      if (t.mode === 'entry') {
        assertInside(t.path, plan.roots);
        removeEntry(t.path, plan.roots);
      } else {
        emptyDir(t.path, plan.roots);
      }
      done.deleted.push(shown(t));
      return `deleted ${shown(t)}`;
    },
  }));
  if (plan.reinit) {
    const { chainId, aggregator } = plan.reinit;
    list.push({
      title: `init ${chainId} as ${aggregator ? 'an aggregator' : 'a full node'}`,
      run: () => {
        done.init = initHome({ home: plan.home, chainId, aggregator, force: false });
        return `initialised ${plan.home} for chain ${chainId} as ${aggregator ? 'an aggregator' : 'a full node'}: new signer ${done.init.signerAddress}, new peer id ${done.init.peerId}`;
      },
    });
  }
  return list;
}

export interface ExecuteOptions {
  /** Render the steps as a listr2 task list (a TTY); otherwise each finished step is passed to `log`. */
  tty: boolean;
  log: (line: string) => void;
}

/**
 * Carries out a plan, step by step; stops at the first step that fails (the
 * error says which). With a TTY the steps show as a listr2 task list.
 */
export async function executeReset(plan: ResetPlan, opts: ExecuteOptions): Promise<ResetResult> {
  const done: { deleted: string[]; init: InitResult | null } = { deleted: [], init: null };
  const list = steps(plan, done);
  if (opts.tty) {
    await new Listr(
      list.map((s) => ({
        title: s.title,
        task: (_ctx: unknown, task: { title: string }) => {
          const line = s.run();
          if (line) task.title = line;
        },
      })),
      { concurrent: false, exitOnError: true, registerSignalListeners: false, rendererOptions: { collapseErrors: false } },
    ).run();
  } else {
    for (const s of list) {
      const line = s.run();
      if (line) opts.log(line);
    }
  }
  return result(plan, false, done.deleted, done.init);
}

export function result(plan: ResetPlan, dryRun: boolean, deleted: string[], init: InitResult | null): ResetResult {
  return {
    action: plan.kind,
    home: plan.home,
    dry_run: dryRun,
    deleted,
    kept: plan.kept,
    left_alone: plan.leftAlone,
    notes: plan.notes,
    init: init ? { chain_id: init.chainId, aggregator: init.aggregator, peer_id: init.peerId, signer_address: init.signerAddress } : null,
    next: plan.next,
  };
}

/** The dry-run answer: what would be deleted, nothing touched. */
export function dryRunResult(plan: ResetPlan): ResetResult {
  return result(plan, true, plan.targets.map(shown), null);
}
