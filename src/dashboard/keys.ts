/**
 * What each key does, as a pure function of the screen state: the Ink app
 * applies the result, the tests call it directly.
 */
import type { DashboardMode } from './view-model.js';
import type { BlockSummary } from './source.js';

export type Screen = 'main' | 'help' | 'block' | 'confirm-stop' | 'stopping';

export interface UiState {
  screen: Screen;
  /** Height of the selected block; null follows the newest. */
  selected: number | null;
}

export const INITIAL_UI: UiState = { screen: 'main', selected: null };

export type KeyName = 'q' | 'ctrl-c' | '?' | 'up' | 'down' | 'enter' | 'esc' | 'y' | 'other';

export type KeyEffect = { kind: 'quit' } | { kind: 'stop-node' } | { kind: 'open'; height: number } | null;

type InkKey = { ctrl: boolean; upArrow: boolean; downArrow: boolean; return: boolean; escape: boolean };

const PLAIN: InkKey = { ctrl: false, upArrow: false, downArrow: false, return: false, escape: false };

/** The key's name from Ink's useInput arguments. */
export function keyName(input: string, key: InkKey): KeyName {
  if (key.ctrl && input === 'c') return 'ctrl-c';
  if (key.upArrow || input === 'k') return 'up';
  if (key.downArrow || input === 'j') return 'down';
  if (key.return) return 'enter';
  if (key.escape) return 'esc';
  if (input === 'q' || input === '?' || input === 'y') return input;
  if (input === 'Y') return 'y';
  return 'other';
}

/** The keys in one read: keys typed faster than the terminal is read (or sent by tmux) arrive as one string. */
export function keyNames(input: string, key: InkKey): KeyName[] {
  if (input.length <= 1 || key.ctrl) return [keyName(input, key)];
  return [...input].map((c) => (c === '\r' ? keyName('', { ...PLAIN, return: true }) : keyName(c, PLAIN)));
}

/** Index of the selected block in the list (newest first); a height no longer listed selects the oldest listed. */
export function selectedIndex(ui: UiState, blocks: BlockSummary[]): number {
  if (ui.selected === null || blocks.length === 0) return 0;
  const i = blocks.findIndex((b) => b.height === ui.selected);
  return i >= 0 ? i : ui.selected > blocks[0]!.height ? 0 : blocks.length - 1;
}

function move(ui: UiState, blocks: BlockSummary[], by: number): UiState {
  if (blocks.length === 0) return ui;
  const i = Math.min(blocks.length - 1, Math.max(0, selectedIndex(ui, blocks) + by));
  // Back at the top, the selection follows new blocks again.
  return { ...ui, selected: i === 0 ? null : blocks[i]!.height };
}

export function reduceKey(ui: UiState, key: KeyName, blocks: BlockSummary[], mode: DashboardMode): { ui: UiState; effect: KeyEffect } {
  const quit = (): { ui: UiState; effect: KeyEffect } =>
    mode === 'watch' ? { ui, effect: { kind: 'quit' } } : { ui: { ...ui, screen: 'confirm-stop' }, effect: null };
  const open = (next: UiState): { ui: UiState; effect: KeyEffect } => {
    const block = blocks[selectedIndex(next, blocks)];
    return block ? { ui: { ...next, screen: 'block' }, effect: { kind: 'open', height: block.height } } : { ui: next, effect: null };
  };
  if (ui.screen === 'stopping') return { ui, effect: null };
  if (key === 'ctrl-c') {
    // Ctrl-C is the operator's "stop now": no question, but still a clean shutdown of an in-process node.
    return mode === 'watch' ? { ui, effect: { kind: 'quit' } } : { ui: { ...ui, screen: 'stopping' }, effect: { kind: 'stop-node' } };
  }
  switch (ui.screen) {
    case 'confirm-stop':
      return key === 'y' ? { ui: { ...ui, screen: 'stopping' }, effect: { kind: 'stop-node' } } : { ui: { ...ui, screen: 'main' }, effect: null };
    case 'help':
      if (key === 'q') return quit();
      return { ui: key === 'esc' || key === '?' ? { ...ui, screen: 'main' } : ui, effect: null };
    case 'block':
      if (key === 'q') return quit();
      if (key === 'esc' || key === 'enter') return { ui: { ...ui, screen: 'main' }, effect: null };
      if (key === 'up' || key === 'down') return open(move(ui, blocks, key === 'up' ? -1 : 1));
      return { ui, effect: null };
    case 'main':
      if (key === 'q') return quit();
      if (key === '?') return { ui: { ...ui, screen: 'help' }, effect: null };
      if (key === 'up' || key === 'down') return { ui: move(ui, blocks, key === 'up' ? -1 : 1), effect: null };
      if (key === 'enter') return open(ui);
      return { ui, effect: null };
  }
}
