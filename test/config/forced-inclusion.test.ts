import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, defaultConfig, forcedInclusionNamespace, daNamespace } from '../../src/config/index.js';
import { parseGenesisObject } from '../../src/home/index.js';
import { killAll, runCli } from '../helpers/daemon.js';
import { Homes } from '../helpers/homes.js';

const homes = new Homes();
afterEach(async () => {
  await killAll();
  homes.cleanup();
});

function configWith(da: Partial<ReturnType<typeof defaultConfig>['da']>, node: Partial<ReturnType<typeof defaultConfig>['node']> = {}) {
  const c = defaultConfig();
  return { ...c, da: { ...c.da, ...da }, node: { ...c.node, ...node } };
}

const problemsOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('da.forced_inclusion_namespace', () => {
  it('is off when empty, and derived like the other namespaces when set', () => {
    expect(forcedInclusionNamespace(defaultConfig(), 'fi-1')).toBeNull();
    expect(Buffer.from(forcedInclusionNamespace(configWith({ forced_inclusion_namespace: 'fi-1-forced' }), 'fi-1')!)).toEqual(
      Buffer.from(daNamespace('fi-1-forced')),
    );
  });

  it('is refused when it is the header namespace (from the chain id or da.namespace) or the data namespace', () => {
    expect(problemsOf(() => forcedInclusionNamespace(configWith({ forced_inclusion_namespace: 'fi-1' }), 'fi-1'))).toMatch(
      /da\.forced_inclusion_namespace: got "fi-1" \(0x[0-9a-f]{58}\), which is the header namespace \(da\.namespace, from the chain id\); expected a namespace of its own, like "fi-1-forced"/,
    );
    expect(
      problemsOf(() =>
        forcedInclusionNamespace(configWith({ namespace: 'hdr', forced_inclusion_namespace: `0x${Buffer.from(daNamespace('hdr')).toString('hex')}` }), 'fi-1'),
      ),
    ).toMatch(/which is the header namespace \(da\.namespace\)/);
    expect(problemsOf(() => forcedInclusionNamespace(configWith({ data_namespace: 'dat', forced_inclusion_namespace: 'dat' }), 'fi-1'))).toMatch(
      /which is the data namespace \(da\.data_namespace\)/,
    );
  });

  it('node.based needs the namespace and no aggregator', () => {
    expect(problemsOf(() => forcedInclusionNamespace(configWith({}, { based: true }), 'fi-1'))).toMatch(/node\.based: .*set da\.forced_inclusion_namespace/);
    expect(problemsOf(() => forcedInclusionNamespace(configWith({ forced_inclusion_namespace: 'f' }, { based: true, aggregator: true }), 'fi-1'))).toMatch(
      /node\.based: a based node has no aggregator/,
    );
    expect(forcedInclusionNamespace(configWith({ forced_inclusion_namespace: 'f' }, { based: true }), 'fi-1')).not.toBeNull();
  });
});

describe('genesis da_epoch_forced_inclusion', () => {
  const base = {
    chain_id: 'g',
    initial_height: 1,
    start_time: '2026-01-01T00:00:00Z',
    proposer_address: Buffer.alloc(32, 1).toString('base64'),
    da_start_height: 0,
  };

  it("is read, and defaults to ev-node's 50 when genesis leaves it out", () => {
    expect(parseGenesisObject({ ...base, da_epoch_forced_inclusion: 7 }, 'g').daEpochForcedInclusion).toBe(7n);
    expect(parseGenesisObject(base, 'g').daEpochForcedInclusion).toBe(50n);
  });

  it('is refused at 0 or when not a number, naming the field and the form', () => {
    expect(() => parseGenesisObject({ ...base, da_epoch_forced_inclusion: 0 }, 'genesis file x')).toThrow(
      /da_epoch_forced_inclusion: got 0, expected the number of DA blocks per forced-inclusion epoch, at least 1/,
    );
    expect(() => parseGenesisObject({ ...base, da_epoch_forced_inclusion: 'ten' }, 'genesis file x')).toThrow(
      /da_epoch_forced_inclusion: got "ten", expected a non-negative integer/,
    );
  });
});

describe('init --forced-inclusion-epoch and start-time checks', () => {
  it('init writes the epoch to genesis; 0 is refused as usage', async () => {
    const home = await homes.create('fi-init', true);
    const res = await runCli(['init', '--home', home, '--chain-id', 'fi-init', '--force', '--forced-inclusion-epoch', '12']);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(home, 'config', 'genesis.json'), 'utf8')).da_epoch_forced_inclusion).toBe(12);
    const bad = await runCli(['init', '--home', home, '--chain-id', 'fi-init', '--force', '--forced-inclusion-epoch', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/forced-inclusion-epoch/);
  });

  it('start refuses a namespace that collides with the header namespace, and a genesis epoch of 0', async () => {
    const home = await homes.create('fi-start', true);
    const clash = await runCli([
      'start',
      '--home',
      home,
      '--node.da.local',
      '--node.da.forced_inclusion_namespace',
      'fi-start',
      '--node.rpc.address',
      '127.0.0.1:0',
      '--node.rpc.status_address',
      '127.0.0.1:0',
    ]);
    expect(clash.code, clash.stderr).toBe(1);
    // oclif wraps the error to the terminal's width: compare it as one line.
    expect(clash.stderr.replace(/\s*\n ›\s*/g, ' ')).toMatch(/da\.forced_inclusion_namespace: got "fi-start" .*which is the header namespace/);
    const file = join(home, 'config', 'genesis.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), da_epoch_forced_inclusion: 0 }));
    const zero = await runCli(['start', '--home', home, '--node.da.local', '--node.rpc.address', '127.0.0.1:0', '--node.rpc.status_address', '127.0.0.1:0']);
    expect(zero.code, zero.stderr).toBe(1);
    expect(zero.stderr.replace(/\s*\n ›\s*/g, ' ')).toMatch(/da_epoch_forced_inclusion: got 0/);
  });
});
