import { sleep } from './index.js';

/**
 * Time as a component reads it and waits on it, handed to the component as a
 * part (as Lodestar hands its beacon node a clock, beacon-node/src/util/clock.ts),
 * so a test drives the DA submitter's and retriever's waits by hand instead of
 * waiting on the wall clock.
 */
export interface Clock {
  /** Unix milliseconds. */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The wall clock and real timers: what the node runs on. */
export const systemClock: Clock = { now: () => Date.now(), sleep };
