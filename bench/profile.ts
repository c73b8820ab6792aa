/**
 * Where a `node --cpu-prof` profile spent its time: self time by function and by
 * area (a noded source file, an npm package, a node: module, GC), and inclusive
 * time of noded's own functions (what each one costs with everything it calls).
 *
 *   node --cpu-prof --cpu-prof-dir /tmp/prof dist/bench/run.js --quick --only getblock --noded-only
 *   node dist/bench/profile.js /tmp/prof/CPU.*.cpuprofile [--top 25]
 *
 * The figures on a spawned devnet (latency, soak) profile the devnet with
 * BENCH_DEVNET_NODE_ARGS='--cpu-prof --cpu-prof-dir /tmp/prof' instead.
 *
 * Percentages are of samples in which the thread was not idle.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
}

/** `noded` for the project's compiled files, the package name under node_modules, else the module. */
function area(url: string, fn: string): string {
  if (!url) return fn || '(native)'; // (garbage collector), (program), a C++ builtin like writev
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/dist\/(.+)$/.exec(url);
  if (own) return own[1]!;
  return url.replace(/^node:internal\//, 'node:');
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  if (!url) return area(url, functionName);
  return `${functionName || '(anonymous)'} ${area(url, functionName)}:${lineNumber + 1}`;
}

const isOwn = (node: ProfileNode) => /\/dist\/(src|bench)\//.test(node.callFrame.url);

function top(counts: Map<string, number>, total: number, n: number): string[] {
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, count]) => `${((100 * count) / total).toFixed(1).padStart(5)}%  ${name}`);
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

export function summarize(profile: CpuProfile, n: number): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busy = 0;
  for (const id of profile.samples) {
    const leaf = byId.get(id)!;
    if (leaf.callFrame.functionName === '(idle)') continue;
    busy++;
    bump(self, label(leaf));
    bump(areas, area(leaf.callFrame.url, leaf.callFrame.functionName));
    // Count each of noded's functions once per sample, however deep it recurses.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const node = byId.get(cur)!;
      if (isOwn(node)) seen.add(label(node));
    }
    for (const key of seen) bump(inclusive, key);
  }
  const idle = profile.samples.length - busy;
  return [
    `${profile.samples.length} samples, ${((100 * idle) / profile.samples.length).toFixed(1)}% idle`,
    '',
    'self time by area:',
    ...top(areas, busy, n),
    '',
    'self time by function:',
    ...top(self, busy, n),
    '',
    "inclusive time of noded's functions (synchronous callees only: time after an await is not under its caller):",
    ...top(inclusive, busy, n),
  ].join('\n');
}

const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '25' } }, allowPositionals: true });
if (positionals.length === 0) {
  process.stderr.write('usage: node dist/bench/profile.js FILE.cpuprofile… [--top N]\n');
  process.exit(2);
}
for (const file of positionals) {
  process.stdout.write(`== ${file}\n${summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(values.top))}\n\n`);
}
