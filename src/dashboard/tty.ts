import { join } from 'node:path';

/**
 * What commands check before they load the dashboard (Ink and React), kept
 * apart from it so that checking costs nothing.
 */

/** Where `start --dashboard` writes the node's log, since the screen is the dashboard's. */
export const dashboardLogFile = (home: string): string => join(home, 'logs', 'node.log');

/** The dashboard reads keys and draws a screen: both ends must be a terminal. */
export const isTerminal = (): boolean => process.stdin.isTTY === true && process.stdout.isTTY === true;

/** Colour unless NO_COLOR is set (https://no-color.org) or the terminal is dumb; states keep their words either way. */
export const wantsColour = (env: NodeJS.ProcessEnv = process.env): boolean => !env.NO_COLOR && env.TERM !== 'dumb';
