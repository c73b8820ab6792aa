import { Listr, ListrDefaultRendererLogLevels, color } from 'listr2';
import { CHECKS, runCheck } from './run.js';
import type { CheckResult, CheckStatus, DoctorContext } from './types.js';

const WIDTH = Math.max(...CHECKS.map((c) => c.id.length));

/** The report as plain lines (no colour): one per check, its remedy under it, then a count. */
export function plainReport(results: readonly CheckResult[]): string[] {
  const lines: string[] = [];
  for (const r of results) {
    lines.push(`${r.status.padEnd(4)}  ${r.id.padEnd(WIDTH)}  ${r.message}`);
    if (r.remedy) lines.push(`${' '.repeat(4 + 2 + WIDTH + 2)}remedy: ${r.remedy}`);
  }
  lines.push(summary(results));
  return lines;
}

export function summary(results: readonly CheckResult[]): string {
  const count = (s: CheckStatus) => results.filter((r) => r.status === s).length;
  return `${results.length} checks: ${count('ok')} ok, ${count('warn')} warn, ${count('fail')} fail`;
}

/** What `--list-checks` prints. */
export function checkList(): Array<{ id: string; verifies: string }> {
  return CHECKS.map((c) => ({ id: c.id, verifies: c.verifies }));
}

/**
 * Runs the selected checks concurrently under a listr2 task list (for a TTY):
 * ok ✔, warn ⚠ (listr2's skip state, re-iconed), fail ✖, each title replaced
 * by what the check saw. Resolves with the results in report order.
 */
export async function runWithListr(ctx: DoctorContext): Promise<CheckResult[]> {
  const checks = CHECKS.filter((c) => ctx.selected.has(c.id));
  const results = new Map<string, CheckResult>();
  const list = new Listr(
    checks.map((check) => ({
      title: `${check.id}: checking…`,
      task: async (_ctx: unknown, task: { title: string; skip: (message?: string) => void }) => {
        const r = await runCheck(check, ctx);
        results.set(r.id, r);
        const title = `${r.id}: ${r.message}`;
        if (r.status === 'fail') throw new Error(title);
        if (r.status === 'warn') task.skip(title);
        else task.title = title;
      },
    })),
    {
      concurrent: true,
      exitOnError: false,
      registerSignalListeners: false,
      rendererOptions: {
        collapseErrors: true,
        showErrorMessage: true,
        collapseSkips: true,
        showSkipMessage: true,
        suffixSkips: false,
        icon: { [ListrDefaultRendererLogLevels.SKIPPED_WITH_COLLAPSE]: '⚠' },
      },
    },
  );
  await list.run();
  return checks.map((c) => results.get(c.id)!);
}

const paint: Record<CheckStatus, (s: string) => string> = { ok: color.green, warn: color.yellow, fail: color.red };

/** What follows the task list on a TTY: each remedy under its check's coloured status, then the count. */
export function ttyEpilogue(results: readonly CheckResult[]): string[] {
  const lines: string[] = [];
  const advice = results.filter((r) => r.remedy);
  if (advice.length > 0) {
    lines.push('');
    for (const r of advice) lines.push(`${paint[r.status](`${r.status} ${r.id}`)}: ${r.remedy}`);
  }
  lines.push('', color.bold(summary(results)));
  return lines;
}
