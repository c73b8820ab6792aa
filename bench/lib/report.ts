import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { Paired } from './rounds.js';

/**
 * What a figure must reach: a ratio to its baseline, or an absolute bound on
 * noded's value; null for a figure shown for information, with no target.
 */
export type Target = { ratioAtLeast: number } | { ratioAtMost: number } | { nodedAtLeast: number } | { nodedAtMost: number } | null;

export interface Row {
  figure: string;
  unit: string;
  noded: number;
  baseline: number;
  /** noded / baseline. */
  ratio: number;
  target: Target;
  /** null when the figure has no target. */
  met: boolean | null;
  /** How the figure was measured, printed under the table. */
  note: string;
  samples: { noded: number[]; baseline: number[] };
}

function meets(target: Target, noded: number, ratio: number): boolean | null {
  if (target === null) return null;
  if ('ratioAtLeast' in target) return ratio >= target.ratioAtLeast;
  if ('ratioAtMost' in target) return ratio <= target.ratioAtMost;
  if ('nodedAtLeast' in target) return noded >= target.nodedAtLeast;
  return noded <= target.nodedAtMost;
}

export function row(figure: string, unit: string, paired: Paired, target: Target, note: string): Row {
  const noded = paired.noded.median;
  const baseline = paired.baseline.median;
  const ratio = noded / baseline;
  return {
    figure,
    unit,
    noded,
    baseline,
    ratio,
    target,
    met: meets(target, noded, ratio),
    note,
    samples: { noded: paired.noded.samples, baseline: paired.baseline.samples },
  };
}

function formatTarget(target: Target, unit: string): string {
  if (target === null) return '–';
  if ('ratioAtLeast' in target) return `ratio ≥ ${target.ratioAtLeast}`;
  if ('ratioAtMost' in target) return `ratio ≤ ${target.ratioAtMost}`;
  if ('nodedAtLeast' in target) return `≥ ${target.nodedAtLeast} ${unit}`;
  return `≤ ${target.nodedAtMost} ${unit}`;
}

/** Three significant figures: enough for noisy medians, no false precision. */
function num(n: number): string {
  if (!Number.isFinite(n)) return '–';
  return Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : n.toPrecision(3);
}

export function markdownTable(rows: Row[], meta: RunMeta): string {
  const lines = [
    `Benchmarks ${meta.startedAt}${meta.quick ? ' (--quick)' : ''} — node ${meta.node}, ${meta.cpus} CPUs. Each value is the median of the rounds; noded and baseline rounds alternate in one run.`,
    '',
    '| figure | noded | baseline | ratio | target | met |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r, i) =>
        `| ${r.figure} [${i + 1}] | ${num(r.noded)} ${r.unit} | ${num(r.baseline)} ${r.unit} | ${num(r.ratio)} | ${formatTarget(r.target, r.unit)} | ${r.met === null ? '–' : r.met ? 'yes' : '**no**'} |`,
    ),
    '',
    ...rows.map(
      (r, i) => `${i + 1}. ${r.note} Rounds: noded ${r.samples.noded.map(num).join(', ')}; baseline ${r.samples.baseline.map(num).join(', ') || '–'}.`,
    ),
    ...(meta.failed.length ? ['', ...meta.failed.map((f) => `**${f.bench} failed**: ${f.error}`)] : []),
  ];
  return lines.join('\n') + '\n';
}

export interface RunMeta {
  startedAt: string;
  quick: boolean;
  only: string[];
  node: string;
  cpus: number;
  /** Benchmarks that threw, with their error: the rest of the run still reports. */
  failed: Array<{ bench: string; error: string }>;
}

export function runMeta(quick: boolean, only: string[]): RunMeta {
  return { startedAt: new Date().toISOString(), quick, only, node: process.version, cpus: cpus().length, failed: [] };
}

/** Writes bench-<ISO 8601 basic time>.json and latest.md; returns the markdown. */
export function writeResults(dir: string, meta: RunMeta, rows: Row[]): { json: string; markdown: string; table: string } {
  mkdirSync(dir, { recursive: true });
  // ISO 8601 basic format (20250101T120000Z): no colons, so the name is safe on every file system.
  const stamp = meta.startedAt.replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const json = join(dir, `bench-${stamp}.json`);
  const markdown = join(dir, 'latest.md');
  const table = markdownTable(rows, meta);
  writeFileSync(json, JSON.stringify({ ...meta, figures: rows }, null, 2) + '\n');
  writeFileSync(markdown, table);
  return { json, markdown, table };
}
