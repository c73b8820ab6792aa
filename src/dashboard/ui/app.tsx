import { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { Box, useInput, useStdout } from 'ink';
import type { DashboardFeed } from '../feed.js';
import { INITIAL_UI, keyNames, reduceKey, selectedIndex, type UiState } from '../keys.js';
import { columnWidths, fitsOn, layoutFor, MIN_SIZE, type Size } from '../layout.js';
import { buildView, type DashboardMode, type Line } from '../view-model.js';
import { LineKeepingLast, LineText } from './panel.js';
import { BlockScreen, HelpScreen, MainScreen, type BlockLoad } from './screens.js';

export interface DashboardAppProps {
  feed: DashboardFeed;
  mode: DashboardMode;
  colour: boolean;
  /** The terminal's size; read from stdout (and its resizes) when not given. */
  size?: Size;
  /** `status --watch`: the operator quit. */
  onQuit: () => void;
  /** `start --dashboard`: the operator asked to stop the node. */
  onStopNode?: () => void;
}

function useTerminalSize(fixed: Size | undefined): Size {
  const { stdout } = useStdout();
  const read = (): Size => ({ columns: stdout.columns || MIN_SIZE.columns, rows: stdout.rows || MIN_SIZE.rows });
  const [size, setSize] = useState(read);
  useEffect(() => {
    if (fixed) return;
    const onResize = () => setSize(read());
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout, fixed]);
  return fixed ?? size;
}

const FOOTER: Record<UiState['screen'], Line> = {
  main: [{ text: 'q quit  ? help  ↑↓/j k select  enter open block', dim: true }],
  help: [{ text: 'esc back  q quit', dim: true }],
  block: [{ text: 'esc back  ↑↓/j k previous/next block  q quit', dim: true }],
  'confirm-stop': [{ text: 'Stop the node? y: stop cleanly (the next start resumes)  other key: keep running', bold: true, level: 'warn' }],
  stopping: [{ text: 'stopping the node… (blocks, DA work and listeners close in order)', level: 'warn' }],
};

/** The dashboard: reads the feed, draws the screen the keys select. */
export function DashboardApp({ feed, mode, colour, size: fixedSize, onQuit, onStopNode }: DashboardAppProps) {
  const state = useSyncExternalStore(feed.subscribe, () => feed.state);
  const size = useTerminalSize(fixedSize);
  // A ref as well as state: keys that arrive before the next render must see each other's effect.
  const uiRef = useRef<UiState>(INITIAL_UI);
  const [ui, setUi] = useState<UiState>(INITIAL_UI);
  const [block, setBlock] = useState<BlockLoad | null>(null);
  const view = buildView(state, feed.source.target, mode, Date.now());

  const open = (height: number) => {
    setBlock({ height, detail: null, error: null });
    feed.source.block(height).then(
      (detail) => setBlock((b) => (b?.height === height ? { height, detail, error: null } : b)),
      (err: Error) => setBlock((b) => (b?.height === height ? { height, detail: null, error: err.message } : b)),
    );
  };

  useInput((input, key) => {
    for (const name of keyNames(input, key)) {
      const { ui: next, effect } = reduceKey(uiRef.current, name, view.blocks, mode);
      uiRef.current = next;
      if (effect?.kind === 'quit') onQuit();
      else if (effect?.kind === 'stop-node') onStopNode?.();
      else if (effect?.kind === 'open') open(effect.height);
    }
    setUi(uiRef.current);
  });

  if (!fitsOn(size)) {
    // Panels drawn into fewer cells than they need overlap and leave text behind; this says why instead (the keys still work).
    return (
      <Box flexDirection="column" width={size.columns}>
        <LineText line={[{ text: `terminal too small (need ${MIN_SIZE.columns}×${MIN_SIZE.rows})`, bold: true, level: 'warn' }]} colour={colour} />
        <LineText line={[{ text: `this one is ${size.columns}×${size.rows}; the dashboard comes back when it is larger`, dim: true }]} colour={colour} />
        <LineText line={FOOTER[ui.screen]} colour={colour} />
      </Box>
    );
  }
  const layout = layoutFor(size, {
    mode,
    banner: view.banner !== null,
    peers: state.snapshot?.info.p2p.peers.length ?? 0,
    children: state.snapshot?.info.children.length ?? 0,
    topLines: Math.max(view.chain.lines.length, (view.da.fit?.(columnWidths(size.columns).right, Infinity) ?? view.da.lines).length),
  });
  return (
    <Box flexDirection="column" width={layout.columns} height={layout.rows}>
      <LineKeepingLast line={view.header} width={layout.columns} colour={colour} />
      {view.banner && <LineText line={view.banner} colour={colour} />}
      {ui.screen === 'help' ? (
        <HelpScreen layout={layout} colour={colour} />
      ) : ui.screen === 'block' && block ? (
        <BlockScreen load={block} layout={layout} colour={colour} />
      ) : (
        <MainScreen view={view} layout={layout} selected={selectedIndex(ui, view.blocks)} colour={colour} />
      )}
      <LineText line={FOOTER[ui.screen]} colour={colour} />
    </Box>
  );
}
