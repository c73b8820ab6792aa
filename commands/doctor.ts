import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { Flags } from '@oclif/core';
import { NodedCommand } from '../cli/base.js';
import { configFlags, givenConfigFlags } from '../cli/config-flags.js';
import { DURATION_FORM, parseDuration, resolveHome } from '../src/config/index.js';
import { CHECK_IDS, type CheckId, type CheckResult, type DoctorContext } from '../src/doctor/types.js';

export default class Doctor extends NodedCommand {
  static summary = 'Check the node, its config, its home and the services it needs; each check ends ok, warn or fail with a remedy.';
  static description = `Runs the troubleshooting checks of the spec concurrently, each bounded by --timeout (default: da.request_timeout): ${CHECK_IDS.join(', ')}. --list-checks says what each verifies.

The checks read the config as \`noded start\` would (config/node.yml, then NODED_* env, then the --node.* flags given here), so give doctor the flags the node is started with. A config that does not load fails the config check; the other checks then use every key that is valid on its own.

On a terminal the checks show as a live task list; otherwise one plain line per check, its remedy under it. --json prints an array of {id, status, message, remedy} (status ok|warn|fail) in the order above.

Exit status: 0 when no check fails (warnings allowed), 1 when a check fails, 2 when doctor could not run (an unknown --check id, a bad --timeout, a --log file that does not exist).`;
  static examples = [
    { description: 'Check the node in ~/.node', command: '<%= config.bin %> <%= command.id %>' },
    {
      description: 'Only the DA checks, with a 5 s bound, as JSON',
      command: '<%= config.bin %> <%= command.id %> --check da-health,da-sync,da-auth,da-balance --timeout 5s --json',
    },
    { description: 'Scan a node log for DA out-of-funds failures', command: '<%= config.bin %> <%= command.id %> --check da-balance --log /var/log/noded.log' },
    { description: 'What each check verifies', command: '<%= config.bin %> <%= command.id %> --list-checks' },
  ];
  static enableJsonFlag = true;
  static flags = {
    check: Flags.string({
      description: `Run only these checks (repeat the flag or separate with commas): ${CHECK_IDS.join(', ')}`,
      multiple: true,
    }),
    'list-checks': Flags.boolean({ description: 'List the check ids and what each verifies, and exit', default: false }),
    log: Flags.string({ description: 'Node log file to scan for DA submission failures (default: log.file from the config)' }),
    timeout: Flags.string({ description: `Bound of each check, ${DURATION_FORM} (default: da.request_timeout)` }),
    ...configFlags(),
  };

  async run(): Promise<CheckResult[] | Array<{ id: string; verifies: string }>> {
    const { flags } = await this.parse(Doctor);
    // The checks (and what they read with: DA and engine clients, listr2) are loaded once the flags parse.
    const { UnknownCheckError, buildContext, checkList, doctorExitCode, plainReport, runDoctor, runWithListr, selectChecks, ttyEpilogue } =
      await import('../src/doctor/index.js');
    if (flags['list-checks']) {
      const list = checkList();
      if (!this.jsonEnabled()) {
        const width = Math.max(...list.map((c) => c.id.length));
        for (const c of list) this.log(`${c.id.padEnd(width)}  ${c.verifies}`);
      }
      return list;
    }
    let checks: CheckId[];
    try {
      checks = selectChecks(flags.check);
    } catch (err) {
      if (err instanceof UnknownCheckError) this.fail(err.message, err.code, 2);
      throw err;
    }
    let timeoutMs: number | undefined;
    if (flags.timeout !== undefined) {
      try {
        timeoutMs = parseDuration(flags.timeout);
      } catch (err) {
        this.fail(`--timeout: ${(err as Error).message}`, 'INVALID_FLAG', 2);
      }
      if (timeoutMs <= 0) this.fail(`--timeout: got ${JSON.stringify(flags.timeout)}, expected a duration above zero`, 'INVALID_FLAG', 2);
    }
    let logFile: string | undefined;
    if (flags.log !== undefined) {
      logFile = resolve(flags.log);
      if (!existsSync(logFile) || !statSync(logFile).isFile()) this.fail(`--log: ${logFile} is not a file`, 'INVALID_FLAG', 2);
    }
    let ctx: DoctorContext;
    try {
      ctx = buildContext({
        home: resolveHome(flags.home),
        flags: givenConfigFlags(flags),
        timeoutMs,
        checks,
        ...(logFile ? { logFile } : {}),
      });
    } catch (err) {
      this.fail(`doctor could not read the home: ${(err as Error).message}`, 'DOCTOR_FAILED', 2);
    }

    let results: CheckResult[];
    if (!this.jsonEnabled() && process.stdout.isTTY) {
      results = await runWithListr(ctx);
      for (const line of ttyEpilogue(results)) this.log(line);
    } else {
      results = await runDoctor(ctx);
      if (!this.jsonEnabled()) for (const line of plainReport(results)) this.log(line);
    }
    process.exitCode = doctorExitCode(results);
    return results;
  }
}
