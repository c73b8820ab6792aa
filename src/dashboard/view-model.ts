/**
 * What each panel of the dashboard shows, computed from a reading of the node:
 * plain data (lines of text spans, each with a state), no Ink, so it is tested
 * without a terminal. Every state carries a word as well as a colour.
 */
import type { LogProblem } from '../log/index.js';
import { roundForPeople } from '../util/index.js';
import type { FollowerDaInfo, HaInfo, NodeInfo, SubmitterDaInfo, SupervisedChildInfo } from '../rpc/index.js';
import type { FeedState } from './feed.js';
import type { BlockSummary } from './source.js';

export type Level = 'ok' | 'warn' | 'fail' | 'stale';

/** The word each state is shown with, beside its colour (never colour alone). */
export const LEVEL_WORD: Record<Level, string> = { ok: 'ok', warn: 'WARN', fail: 'FAIL', stale: 'stale' };

export interface Span {
  text: string;
  level?: Level;
  dim?: boolean;
  bold?: boolean;
}

export type Line = Span[];

export interface PanelView {
  title: string;
  level: Level;
  lines: Line[];
  /** The lines laid out for `width` columns and at most `rows` rows, for a panel whose text must be read whole rather than cut at its edge. */
  fit?: (width: number, rows: number) => Line[];
}

export type DashboardMode = 'watch' | 'node';

export interface DashboardView {
  /** Who and where the node is, then its overall state, last: the state is the one part never cut. */
  header: Line;
  /** Why the data is not fresh (no node answering, a failed reading), or null. */
  banner: Line | null;
  chain: PanelView;
  da: PanelView;
  p2p: PanelView;
  health: PanelView;
  execution: PanelView;
  children: PanelView;
  warnings: PanelView;
  /** The node's log tail (`start --dashboard`); null in `status --watch`. */
  log: PanelView | null;
  blocks: BlockSummary[];
  /** DA-included height, to mark each listed block on DA or pending. */
  includedHeight: number;
}

const WORST: Level[] = ['fail', 'warn', 'stale', 'ok'];
export const worst = (...levels: Level[]): Level => WORST.find((l) => levels.includes(l)) ?? 'ok';

/** 0.4s, 12s, 3m12s, 2h03m, 3d04h. */
export function formatAge(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 10) return `${s.toFixed(1)}s`;
  if (s < 60) return `${Math.floor(s)}s`;
  const pad = (n: number) => String(n).padStart(2, '0');
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(Math.floor(s % 60))}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d${pad(Math.floor((s % 86400) / 3600))}h`;
}

/** HH:MM:SS in local time, as the text log writes times. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

const SPARK = '▁▂▃▄▅▆▇█';

/** One character per value, oldest first; an empty block is the lowest bar. */
export function sparkline(values: number[]): string {
  const max = Math.max(1, ...values);
  return values.map((v) => SPARK[v <= 0 ? 0 : 1 + Math.round((v / max) * (SPARK.length - 2))]).join('');
}

/** A bar of `width` cells, filled to `fraction` (0..1). */
export function bar(fraction: number, width: number): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return '█'.repeat(filled) + '░'.repeat(width - filled);
}

/** Mean time between the listed blocks (newest first), in ms; null with fewer than two. */
export function meanBlockTime(blocks: BlockSummary[], over = 20): number | null {
  const run = blocks.slice(0, over + 1);
  if (run.length < 2) return null;
  return (run[0]!.time - run[run.length - 1]!.time) / (run.length - 1);
}

/** Width of the label column of a panel's lines; wrapped values continue under their value. */
export const LABEL_WIDTH = 11;
const label = (text: string): Span => ({ text: text.padEnd(LABEL_WIDTH), dim: true });
const span = (text: string, level?: Level): Span => (level ? { text, level } : { text });

/** Blocks in the txs-per-block sparkline: as many as fit beside its label in 80 columns. */
const SPARK_BLOCKS = 20;

/** A block with no successor for this many mean block times (at least 5 s) counts as stalled. */
const STALL_FACTOR = 3;
const MIN_STALL_MS = 5_000;

const shortId = (id: string) => (id.length > 16 ? `${id.slice(0, 8)}…${id.slice(-6)}` : id);

/** An HA node's place in the election, in the CHAIN panel's sixth row: no leader means no blocks. */
function haLine(ha: HaInfo): { line: Line; level: Level } {
  if (ha.role === 'leader') return { line: [label('HA'), span('leader', 'ok'), span(' (this node)')], level: 'ok' };
  if (ha.leader === null) return { line: [label('HA'), span('NO LEADER (electing)', 'warn')], level: 'warn' };
  return { line: [label('HA'), span('follower'), span(` of ${shortId(ha.leader)}`)], level: 'ok' };
}

function chainPanel(info: NodeInfo, blocks: BlockSummary[], now: number): PanelView {
  const lag = Math.max(0, info.best_known_height - info.height);
  const mean = meanBlockTime(blocks);
  const age = info.last_block_time ? now - info.last_block_time : null;
  const stalled = age !== null && age > Math.max(MIN_STALL_MS, STALL_FACTOR * (mean ?? 0));
  const txs = blocks
    .slice(0, SPARK_BLOCKS)
    .map((b) => b.txs)
    .reverse();
  const lines: Line[] = [
    [label('height'), span(String(info.height)), span(`  best ${info.best_known_height}  `), span(`lag ${lag}`, lag > 0 ? 'warn' : 'ok')],
    [label('sync'), info.catching_up ? span('CATCHING UP', 'warn') : span('in sync', 'ok')],
    [
      label('last block'),
      age === null ? span('none yet', 'warn') : stalled ? span(`STALLED: none for ${formatAge(age)}`, 'warn') : span(`${formatAge(age)} ago`),
    ],
    [label('block time'), span(mean === null ? '—' : `${(mean / 1000).toFixed(2)}s mean of the last ${Math.min(20, blocks.length - 1)}`)],
    [label('txs/block'), span(txs.length ? sparkline(txs) : '—'), span(txs.length ? `  max ${Math.max(...txs)}` : '', undefined)],
  ];
  const ha = info.ha ? haLine(info.ha) : null;
  if (ha) lines.push(ha.line);
  const level = !info.health.live.ok ? 'fail' : info.catching_up || stalled || age === null ? 'warn' : (ha?.level ?? 'ok');
  return { title: 'CHAIN', level, lines };
}

/** Share of the pending cap at which the DA panel warns. */
const PENDING_WARN = 0.5;
const PENDING_BAR_CELLS = 12;

/** The pending queue of an aggregator: how full it is against node.max_pending_blocks, and whether production paused. */
function pendingLines(da: SubmitterDaInfo): { lines: Line[]; level: Level } {
  const cap = da.max_pending_blocks;
  const fill = cap > 0 ? da.pending_blocks / cap : 0;
  const level: Level = da.production_paused || fill >= 1 ? 'fail' : fill >= PENDING_WARN ? 'warn' : 'ok';
  const lines: Line[] = [
    [label('included'), span(String(da.included_height)), span(`  pending ${da.pending_blocks}${cap > 0 ? ` / ${cap}` : ' (no cap)'}`)],
    cap > 0
      ? [
          label(''),
          span(`[${bar(fill, PENDING_BAR_CELLS)}] `),
          span(`${Math.round(fill * 100)}%${da.production_paused ? ' PAUSED' : level === 'warn' ? ' filling' : ''}`, level),
        ]
      : [label(''), span('no pending cap (node.max_pending_blocks 0)', undefined)],
  ];
  return { lines, level };
}

/** What a full node follows on DA: the blocks it found there, and how far it has read. */
function followLines(da: FollowerDaInfo): Line[] {
  return [
    [label('included'), span(String(da.included_height)), span(`  DA ${da.behind_blocks} block${da.behind_blocks === 1 ? '' : 's'} behind the chain`)],
    [label('DA height'), span(`read ${da.scan_height} of ${da.head_height}`)],
  ];
}

function daPanel(info: NodeInfo, now: number): PanelView {
  const da = info.da;
  // A full node has no queue of its own on DA: nothing pending, no cap to fill.
  const position: { lines: Line[]; level: Level } = da.mode === 'submit' ? pendingLines(da) : { lines: followLines(da), level: 'ok' };
  const lines: Line[] = [
    ...position.lines,
    [
      label('last ok'),
      da.last_success_at ? span(`${formatAge(now - da.last_success_at)} ago`) : span('never', 'warn'),
      // How long every DA call has failed: what /health/ready's da.unready_after counts.
      ...(da.failing_since ? [span(`, failing for ${formatAge(now - da.failing_since)}`, 'warn')] : []),
    ],
  ];
  const errorAt = lines.length;
  if (da.last_error) {
    lines.push([label('last error'), span(`${da.last_error.reason}: ${da.last_error.message}`, 'fail')]);
    lines.push([label('remedy'), span(da.last_error.remedy)]);
  } else {
    lines.push([label('last error'), span('none', 'ok')]);
  }
  if (da.mode === 'submit') {
    lines.push([label('gas price'), span(da.gas_price < 0 ? 'auto (the DA node estimates)' : String(roundForPeople(da.gas_price)))]);
  } else {
    lines.push([label('mode'), span('follows DA; submits none')]);
  }
  const daCheck = info.health.checks.da;
  const level = daCheck && !daCheck.ok ? 'fail' : worst(position.level, da.last_error ? 'warn' : 'ok');
  const fit = (width: number, rows: number) =>
    da.last_error ? fitErrorAndRemedy(lines, errorAt, width, rows) : lines.flatMap((l) => wrapLine(l, width, LABEL_WIDTH));
  return { title: 'DA', level, lines, fit };
}

/** Columns a continuation of the remedy is indented by when the panel is short: less than a label, so it takes fewer rows. */
const TIGHT_INDENT = 2;

/**
 * `lines` with an error at `errorAt` and its remedy right after, in `rows`
 * rows of `width`: everything wrapped, to be read whole, when it fits. When it
 * does not, the remedy comes before the raw error (what to do matters more
 * than the error's text), the error gets the rows left, cut with `…`, and the
 * other lines (the gas price among them) stay.
 */
export function fitErrorAndRemedy(lines: Line[], errorAt: number, width: number, rows: number): Line[] {
  const wrap = (l: Line, indent = LABEL_WIDTH) => wrapLine(l, width, indent);
  const head = lines.slice(0, errorAt).flatMap((l) => wrap(l));
  const tail = lines.slice(errorAt + 2).flatMap((l) => wrap(l));
  const error = wrap(lines[errorAt]!);
  const remedy = wrap(lines[errorAt + 1]!);
  if (head.length + error.length + remedy.length + tail.length <= rows) return [...head, ...error, ...remedy, ...tail];
  const room = Math.max(2, rows - head.length - tail.length);
  const tightRemedy = wrap(lines[errorAt + 1]!, TIGHT_INDENT);
  const remedyShown = cutLines(tightRemedy, room - 1, width);
  return [...head, ...remedyShown, ...cutLines(error, room - remedyShown.length, width), ...tail];
}

/** The first `count` of `lines`, the last one ending in `…` when some are left out. */
function cutLines(lines: Line[], count: number, width: number): Line[] {
  if (lines.length <= count) return lines;
  const kept = lines.slice(0, count);
  const last = kept[count - 1]!;
  const used = last.reduce((n, s) => n + s.text.length, 0);
  const end = last[last.length - 1]!;
  const over = Math.max(0, used + 1 - width);
  kept[count - 1] = [...last.slice(0, -1), { ...end, text: `${end.text.slice(0, end.text.length - over)}…` }];
  return kept;
}

function p2pPanel(info: NodeInfo): PanelView {
  const { peers, configured_peers: configured } = info.p2p;
  const cutOff = configured > 0 && peers.length === 0;
  const lines: Line[] = [
    [label('peers'), span(`${peers.length} connected`, cutOff ? 'fail' : 'ok'), span(configured > 0 ? ` of ${configured} configured` : '')],
    configured > 0
      ? [label(''), span(cutOff ? 'NONE: run `noded doctor`' : '', cutOff ? 'fail' : undefined)]
      : [label(''), span(info.role === 'aggregator' ? 'none configured; peers dial in' : 'DA-only sync: no peers configured')],
    ...peers.map((p): Line => [span(`  ${shortId(p.id)}  `), span(p.address.replace(/\/p2p\/[^/]+$/, ''), undefined)]),
  ];
  return { title: 'P2P', level: cutOff ? 'fail' : 'ok', lines };
}

function healthPanel(info: NodeInfo): PanelView {
  const { live, ready } = info.health;
  return {
    title: 'HEALTH',
    level: !live.ok ? 'fail' : !ready.ok ? 'warn' : 'ok',
    lines: [
      [label('live'), live.ok ? span('OK', 'ok') : span(`FAIL${live.reason ? `: ${live.reason}` : ''}`, 'fail')],
      [label('ready'), ready.ok ? span('READY', 'ok') : span(`UNREADY: ${ready.reason ?? 'unknown'}`, 'warn')],
    ],
  };
}

function executionPanel(info: NodeInfo): PanelView {
  const ex = info.execution;
  const kind = ex.type === 'kv' ? 'kv (built-in)' : ex.type;
  return {
    title: 'EXECUTION',
    level: ex.reachable ? 'ok' : 'fail',
    lines: [
      [span(`${kind}  `), ex.reachable ? span('reachable', 'ok') : span('UNREACHABLE', 'fail'), span(ex.height === null ? '' : `  EL height ${ex.height}`)],
    ],
  };
}

const CHILD_LEVEL: Record<string, Level> = { running: 'ok', starting: 'warn', restarting: 'warn' };

function childrenPanel(children: SupervisedChildInfo[], now: number): PanelView {
  if (children.length === 0) return { title: 'CHILDREN', level: 'ok', lines: [[{ text: 'none supervised', dim: true }]] };
  const lines = children.map((c): Line => [
    span(`${c.name}  `),
    span(c.state, CHILD_LEVEL[c.state] ?? 'fail'),
    span(`  pid ${c.pid ?? '—'}  up ${c.started_at ? formatAge(now - c.started_at) : '—'}  restarts ${c.restarts}`),
  ]);
  return { title: 'CHILDREN', level: worst(...children.map((c) => CHILD_LEVEL[c.state] ?? 'fail')), lines };
}

const PROBLEM_LEVEL: Record<LogProblem['level'], Level> = { warn: 'warn', error: 'fail', fatal: 'fail' };

function warningsPanel(problems: LogProblem[]): PanelView {
  if (problems.length === 0) return { title: 'WARNINGS', level: 'ok', lines: [[{ text: 'none logged', dim: true }]] };
  const lines = [...problems]
    .reverse()
    .map((p): Line => [
      span(`${clockTime(p.time)} `),
      span(p.level.toUpperCase(), PROBLEM_LEVEL[p.level]),
      span(` ${p.module ? `[${p.module}] ` : ''}${p.msg}${p.detail ? `: ${p.detail}` : ''}`),
    ]);
  return { title: 'WARNINGS', level: worst(...problems.map((p) => PROBLEM_LEVEL[p.level])), lines };
}

const LOG_LEVEL_WORD = /\b(WARN|ERROR|FATAL)\b/;

function logPanel(log: string[]): PanelView {
  if (log.length === 0) return { title: 'LOG', level: 'ok', lines: [[{ text: 'nothing logged yet', dim: true }]] };
  // Newest last, as a log reads; the panel shows the end that fits.
  const lines = log.map((l): Line => {
    const word = LOG_LEVEL_WORD.exec(l)?.[1];
    return [span(l, word === 'WARN' ? 'warn' : word ? 'fail' : undefined)];
  });
  return { title: 'LOG', level: 'ok', lines };
}

const noData = (title: string, level: Level): PanelView => ({ title, level, lines: [[{ text: 'no data yet', dim: true }]] });

/** While readings fail, every panel keeps its last data but is marked stale. */
const stale = (p: PanelView): PanelView => ({ ...p, level: 'stale' });

export function buildView(state: FeedState, target: string, mode: DashboardMode, now: number): DashboardView {
  const snap = state.snapshot;
  const problem = state.problem;
  const banner: Line | null = problem
    ? [
        span(problem.message, 'fail'),
        span(`  (failing for ${formatAge(now - problem.since)}${snap ? `; showing data from ${formatAge(now - state.readAt)} ago` : ''})`),
      ]
    : snap
      ? null
      : [span(`reading ${target}…`)];
  const log = state.log === null ? null : logPanel(state.log);
  if (!snap) {
    const level: Level = problem ? 'fail' : 'stale';
    const title = problem ? span('UNREACHABLE', 'fail') : span('connecting', 'stale');
    return {
      header: [{ text: 'noded', bold: true }, span(`  ${target}  `), title],
      banner,
      chain: noData('CHAIN', level),
      da: noData('DA', level),
      p2p: noData('P2P', level),
      health: noData('HEALTH', level),
      execution: noData('EXECUTION', level),
      children: noData('CHILDREN', level),
      warnings: noData('WARNINGS', level),
      log,
      blocks: [],
      includedHeight: 0,
    };
  }
  const { info, blocks } = snap;
  const health = info.health;
  const overall = problem
    ? span('UNREACHABLE', 'fail')
    : !health.live.ok
      ? span('NOT LIVE', 'fail')
      : health.ready.ok
        ? span('READY', 'ok')
        : span('UNREADY', 'warn');
  const panels = {
    chain: chainPanel(info, blocks, now),
    da: daPanel(info, now),
    p2p: p2pPanel(info),
    health: healthPanel(info),
    execution: executionPanel(info),
    children: childrenPanel(info.children, now),
    warnings: warningsPanel(info.warnings),
  };
  const shown = problem ? (Object.fromEntries(Object.entries(panels).map(([k, p]) => [k, stale(p)])) as typeof panels) : panels;
  return {
    header: [
      { text: 'noded', bold: true },
      span(`  ${info.chain_id}  ${info.role}  v${info.version}  up ${formatAge(now - info.started_at)}  `),
      { text: mode === 'node' ? 'this process  ' : `${target}  `, dim: true },
      overall,
    ],
    banner,
    ...shown,
    log,
    blocks,
    includedHeight: info.da.included_height,
  };
}

/** The block list's column names, aligned with blockRow. */
export function blockListHeader(hashChars: number): Line {
  return [{ text: `${'height'.padStart(8)} ${'time'.padEnd(8)} ${'txs'.padStart(4)}    ${'hash'.padEnd(hashChars)} DA`, dim: true }];
}

/**
 * A line cut into lines of at most `width` characters, at spaces where it can,
 * each continuation indented by `indent`: for text that must be read whole
 * (a DA error and its remedy), where cutting it off would hide the point.
 */
export function wrapLine(line: Line, width: number, indent: number): Line[] {
  if (line.reduce((n, s) => n + s.text.length, 0) <= width || width <= indent + 10) return [line];
  const lines: Line[] = [];
  let current: Line = [];
  let used = 0;
  for (const s of line) {
    let rest = s.text;
    while (rest.length > 0) {
      const room = width - used;
      if (rest.length <= room) {
        current.push({ ...s, text: rest });
        used += rest.length;
        break;
      }
      const space = rest.lastIndexOf(' ', room);
      const cut = space > 0 ? space : room;
      current.push({ ...s, text: rest.slice(0, cut) });
      rest = rest.slice(cut).trimStart();
      lines.push(current);
      current = [{ text: ' '.repeat(indent) }];
      used = indent;
    }
  }
  lines.push(current);
  return lines;
}

/** One row of the block list: height, time, txs, hash, and whether DA has it yet. */
export function blockRow(b: BlockSummary, includedHeight: number, hashChars: number): Line {
  return [
    span(`${String(b.height).padStart(8)} ${clockTime(b.time)} ${String(b.txs).padStart(4)} tx ${b.hash.slice(0, hashChars).padEnd(hashChars)} `),
    b.height <= includedHeight ? span('on DA', 'ok') : span('pending', 'warn'),
  ];
}

export const HELP: Array<[string, string]> = [
  ['q', 'quit (start --dashboard: asks, then stops the node cleanly)'],
  ['Ctrl-C', 'quit at once (start --dashboard: stops the node cleanly)'],
  ['?', 'this help; esc or ? closes it'],
  ['↑ ↓  k j', 'move through the block list'],
  ['enter', 'show the selected block: header, DA heights, txs'],
  ['esc', 'back to the dashboard'],
  ['', ''],
  ['ok', 'green: healthy'],
  ['WARN', 'yellow: needs a look (catching up, filling DA queue, …)'],
  ['FAIL', 'red: broken (not live, DA failing, no peers, …)'],
  ['stale', 'grey: the node stopped answering; last data shown'],
];
