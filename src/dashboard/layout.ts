import type { DashboardMode } from './view-model.js';

export interface Size {
  columns: number;
  rows: number;
}

/** Where each band of the main screen goes, in rows and columns. */
export interface Layout {
  columns: number;
  /** Rows drawn: one less than the terminal has, so drawing never scrolls it. */
  rows: number;
  /** Rows between the header (and banner) and the footer: what the help and block screens fill. */
  body: number;
  /** Widths of the two upper bands' columns (a one-column gap between them). */
  half: number;
  right: number;
  /** Rows of the CHAIN | DA band and of the P2P | HEALTH, EXECUTION, CHILDREN band. */
  top: number;
  mid: number;
  /** Rows of the BLOCKS | WARNINGS / LOG band, and its left column's width. */
  bottom: number;
  blocksWidth: number;
  warnings: number;
  log: number;
  /** Hex digits of each block hash the list has room for. */
  hashChars: number;
}

/** The size the screen is laid out for at least; a smaller terminal gets a message saying so instead of panels. */
export const MIN_SIZE: Size = { columns: 80, rows: 24 };

export const fitsOn = (size: Size): boolean => size.columns >= MIN_SIZE.columns && size.rows >= MIN_SIZE.rows;

const HEADER = 1;
const FOOTER = 1;
/** Title and six lines: CHAIN and DA (more when a DA error and its remedy wrap). */
const TOP = 7;
/** Title and six peers beside HEALTH (3), EXECUTION (2) and one child (2). */
const MID = 7;
/** Title, column names and one block: the fewest rows the bottom band gives up to a DA error and its remedy. */
const MIN_BOTTOM = 3;
/** Rows of warnings above the log when the log panel has room for both. */
const WARNINGS_BESIDE_LOG = 6;
const LOG_WITH_WARNINGS_FROM = 16;
/** Width of a block row without its hash: marker, height, time, txs, DA state. */
const BLOCK_ROW_CHARS = 2 + 8 + 9 + 9 + 8;
/** Hex digits of a hash in the list: enough to tell blocks apart; enter shows it whole. Wider terminals give the rest to the log. */
const MAX_LISTED_HASH = 16;

/**
 * Lays the screen out for the terminal's size: 80×24 shows every panel; more
 * rows go first to long peer or child lists, then to the block list and log;
 * more columns leave less text cut off.
 */
export function columnWidths(columns: number): { columns: number; half: number; right: number } {
  const half = Math.floor(columns / 2);
  return { columns, half, right: columns - half - 1 };
}

/**
 * `topLines`: lines of the taller of CHAIN and DA at the column width (a DA
 * error and its remedy wrap, and take rows from the block list while they last).
 */
export function layoutFor(size: Size, opts: { mode: DashboardMode; banner: boolean; peers: number; children: number; topLines: number }): Layout {
  const { columns, half, right } = columnWidths(size.columns);
  const rows = size.rows - 1;
  const base = HEADER + (opts.banner ? 1 : 0) + MID + FOOTER;
  const top = Math.max(TOP, Math.min(1 + opts.topLines, rows - base - MIN_BOTTOM));
  const fixed = base + top;
  const spare = Math.max(0, rows - fixed - MIN_BOTTOM - 3);
  const midNeeds = Math.max(0, opts.peers - (MID - 2), opts.children - 1);
  const mid = MID + Math.min(midNeeds, Math.floor(spare / 3));
  const bottom = Math.max(MIN_BOTTOM, rows - fixed - (mid - MID));
  const [warnings, log] =
    opts.mode === 'watch' ? [bottom, 0] : bottom >= LOG_WITH_WARNINGS_FROM ? [WARNINGS_BESIDE_LOG, bottom - WARNINGS_BESIDE_LOG] : [0, bottom];
  const blocksWidth = Math.min(Math.floor(columns * 0.58), BLOCK_ROW_CHARS + MAX_LISTED_HASH);
  return {
    columns,
    rows,
    body: rows - fixed + top + MID,
    half,
    right,
    top,
    mid,
    bottom,
    blocksWidth,
    warnings,
    log,
    hashChars: Math.max(6, blocksWidth - BLOCK_ROW_CHARS),
  };
}
