import { render } from 'ink';
import type { NodeClient } from '../client/index.js';
import type { Node } from '../node/index.js';
import { DashboardFeed } from './feed.js';
import { HttpSource } from './http-source.js';
import { NodeSource } from './node-source.js';
import { wantsColour } from './tty.js';
import { DashboardApp } from './ui/app.js';
import type { DashboardMode } from './view-model.js';

/** Alternate screen on (and cursor home); on leaving, the cursor shown and the shell's screen back as it was. */
const ENTER_FULL_SCREEN = '\x1b[?1049h\x1b[H';
const LEAVE_FULL_SCREEN = '\x1b[?25h\x1b[?1049l';

/** A reading that takes longer than this fails (the next one starts on time). */
const readingTimeout = (intervalMs: number) => Math.max(2_000, 2 * intervalMs);

export interface DashboardHandle {
  /** Stops reading, takes the dashboard off the screen and restores the terminal (cursor, raw mode, screen). */
  close(): Promise<void>;
}

interface OpenOptions {
  onQuit: () => void;
  onStopNode?: () => void;
}

function openDashboard(feed: DashboardFeed, mode: DashboardMode, opts: OpenOptions): DashboardHandle {
  let restored = false;
  // Also on an exit this code did not plan (a crash): the shell must get its screen and cursor back.
  const restore = () => {
    if (restored) return;
    restored = true;
    process.stdout.write(LEAVE_FULL_SCREEN);
  };
  process.stdout.write(ENTER_FULL_SCREEN);
  process.once('exit', restore);
  feed.start();
  const ink = render(<DashboardApp feed={feed} mode={mode} colour={wantsColour()} onQuit={opts.onQuit} onStopNode={opts.onStopNode} />, {
    exitOnCtrlC: false,
    patchConsole: true,
  });
  let closing: Promise<void> | null = null;
  return {
    close() {
      closing ??= (async () => {
        feed.stop();
        ink.unmount();
        await ink.waitUntilExit();
        restore();
        process.off('exit', restore);
      })();
      return closing;
    },
  };
}

/** `status --watch`: the dashboard of the node `client` reads, until the operator quits. */
export function watchNode(client: NodeClient, intervalMs: number): Promise<void> {
  const feed = new DashboardFeed(new HttpSource(client), { intervalMs, timeoutMs: readingTimeout(intervalMs) });
  return new Promise((resolve) => {
    const dashboard = openDashboard(feed, 'watch', { onQuit: () => void dashboard.close().then(resolve) });
  });
}

/**
 * `start --dashboard`: the dashboard of the node in this process, with the tail
 * of its log file. `onStop` is called when the operator confirms stopping the
 * node; the caller closes the dashboard once the node has stopped.
 */
export function openNodeDashboard(node: Node, opts: { logFile: string; intervalMs: number; onStop: () => void }): DashboardHandle {
  const feed = new DashboardFeed(new NodeSource(node), {
    intervalMs: opts.intervalMs,
    timeoutMs: readingTimeout(opts.intervalMs),
    logFile: opts.logFile,
  });
  return openDashboard(feed, 'node', { onQuit: () => {}, onStopNode: opts.onStop });
}
