import { existsSync, readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ETHEREUMJS_CLIENT, ExecutionClientMissingError, ethereumJsArgs, ethereumJsCli, DEFAULT_EVM_PORTS } from '../../src/exec/evm/index.js';
import { packageRoot } from '../../src/util/index.js';

describe('the EthereumJS client is an optional dependency', () => {
  it('package.json lists it under optionalDependencies only, pinned exactly', () => {
    const pkg = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
    expect(pkg.dependencies![ETHEREUMJS_CLIENT]).toBeUndefined();
    expect(pkg.optionalDependencies![ETHEREUMJS_CLIENT]).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('when installed, init finds its command line', () => {
    expect(existsSync(ethereumJsCli())).toBe(true);
  });

  it('when it cannot be resolved, the error names the package, its version and the install command', () => {
    const missing = '@ethereumjs/client-not-installed';
    expect(() => ethereumJsCli(missing)).toThrow(ExecutionClientMissingError);
    expect(() => ethereumJsCli(missing)).toThrow(
      `the EVM execution layer runs the EthereumJS client (${missing}), an optional dependency that is not installed (an install with --omit=optional leaves it out); install it with: cd ${JSON.stringify(packageRoot())} && npm install --include=optional`,
    );
  });

  it('the supervised launcher init writes runs the client with the arguments after it', async () => {
    const [launcher] = ethereumJsArgs(DEFAULT_EVM_PORTS);
    expect(existsSync(launcher!)).toBe(true);
    const child = spawn(process.execPath, [launcher!, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, out).toBe(0);
    expect(out).toContain('--rpcEngine');
  }, 60_000);
});
