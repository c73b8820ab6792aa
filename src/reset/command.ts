import { planReset, ResetError, type PlanOptions, type ResetKind } from './plan.js';
import { describeTarget, dryRunResult, executeReset, type ResetResult } from './run.js';

/** What the reset commands need from the terminal; the oclif commands provide it. */
export interface ResetUi {
  json: boolean;
  yes: boolean;
  dryRun: boolean;
  /** stdout is a terminal: steps show as a listr2 task list. */
  tty: boolean;
  /** stdin and stdout are terminals: the reset may ask. */
  interactive: boolean;
  log: (line: string) => void;
  confirm: (question: string) => Promise<boolean>;
}

/**
 * A reset as the commands run it: plan (refusing a directory that is no home,
 * a running node, unsafe paths, a live execution client), show it, ask on a terminal (else require --yes),
 * carry it out, say what comes next. `--dry-run` stops after showing.
 */
export async function resetCommand(kind: ResetKind, opts: PlanOptions, ui: ResetUi): Promise<ResetResult> {
  const plan = await planReset(kind, opts);
  const say = ui.json ? () => undefined : ui.log;
  say(`noded reset ${kind} of ${plan.home}`);
  if (plan.targets.length > 0) {
    say(ui.dryRun ? 'Would delete:' : 'Deletes:');
    for (const t of plan.targets) say(`  ${describeTarget(t)}`);
  } else {
    say('Nothing to delete.');
  }
  if (plan.reinit)
    say(`${ui.dryRun ? 'Would then run' : 'Then runs'}: noded init --chain-id ${plan.reinit.chainId}${plan.reinit.aggregator ? ' --aggregator' : ''}`);
  for (const k of plan.kept) say(`Keeps: ${k}`);
  for (const path of plan.leftAlone) say(`Leaves alone (not made by noded): ${path}`);
  for (const n of plan.notes) say(`Note: ${n}`);
  if (ui.dryRun) {
    say('Dry run: nothing was deleted.');
    return dryRunResult(plan);
  }
  if (!ui.yes && (plan.targets.length > 0 || plan.reinit)) {
    if (!ui.interactive || ui.json) {
      throw new ResetError(
        `reset ${kind} deletes the paths above; without a terminal to confirm on, pass --yes (or --dry-run to only list them)`,
        'CONFIRMATION_REQUIRED',
        2,
      );
    }
    if (
      !(await ui.confirm(
        `Delete ${plan.targets.length === 1 ? 'this' : `these ${plan.targets.length} paths`}${plan.reinit ? ' and re-initialise' : ''}? [y/N] `,
      ))
    ) {
      throw new ResetError('aborted, nothing deleted', 'ABORTED');
    }
  }
  const result = await executeReset(plan, { tty: ui.tty && !ui.json, log: say });
  say(`Done: reset ${kind} of ${plan.home}.`);
  plan.next.forEach((step, i) => say(`${plan.next.length > 1 ? `${i + 1}. ` : 'Next: '}${step}`));
  return result;
}

/** A ResetUi on this process's terminal; `log` prints a line to stdout. */
export function terminalUi(flags: { json: boolean; yes: boolean; dryRun: boolean }, log: (line: string) => void): ResetUi {
  return {
    ...flags,
    tty: process.stdout.isTTY === true,
    interactive: process.stdin.isTTY === true && process.stdout.isTTY === true,
    log,
    confirm: async (question) => {
      const { createInterface } = await import('node:readline/promises');
      const rl = createInterface({ input: process.stdin, output: process.stdout });
      try {
        return /^y(es)?$/i.test((await rl.question(question)).trim());
      } finally {
        rl.close();
      }
    },
  };
}
