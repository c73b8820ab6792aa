import type { Logger } from '../log/index.js';
import { isAbortError, retry } from '../util/index.js';

export interface RemoteSessionOptions {
  /** What the peer is, as log lines name it: `execution client`, `executor`. */
  noun: string;
  url: string;
  logger: Logger;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** The peer did not answer (down, restarting): it may have lost blocks, so the handshake runs again. */
  isOutage: (err: unknown) => boolean;
  /** Worth another attempt after a wait, the handshake first (an outage, or a peer still catching up). */
  isRetryable: (err: unknown) => boolean;
  /** After which retryable failures the handshake runs again (default: after an outage). */
  resyncAfter?: (err: unknown) => boolean;
  /** The start-up handshake: compares heads with the node, replays what the peer lacks, then calls `synced()`. */
  syncWithNode: () => Promise<void>;
}

/**
 * The node's side of a session with an execution layer in another process (an
 * Engine API client, an ExecutorService): calls that wait with the shared
 * backoff while the peer is down or behind, and the start-up handshake, run
 * once and again after every outage (a restarted peer may have lost blocks).
 */
export class RemoteSession {
  /** The node's root signal, once started. */
  signal = new AbortController().signal;
  private loop: Promise<void> | null = null;
  private needsHandshake = true;
  private handshake: Promise<void> | null = null;
  /** When the peer stopped answering; null while it answers. */
  private unreachableSince: number | null = null;

  constructor(private readonly opts: RemoteSessionOptions) {}

  /** Runs the handshake in the background; `onFatal` hears of a disagreement only an operator can settle. */
  start(signal: AbortSignal, onFatal: (err: Error) => void): void {
    this.signal = signal;
    this.loop = this.retrying('catch up with the node', async () => undefined, { resync: true }).catch((err) => {
      if (!isAbortError(err, signal)) onFatal(err as Error);
    });
  }

  async stopped(): Promise<void> {
    await this.loop;
  }

  get reachable(): boolean {
    return this.unreachableSince === null;
  }

  /** The handshake's last step: the peer is in step with the node. */
  synced(): void {
    this.needsHandshake = false;
  }

  /** Runs `fn` until it gets through; with `resync`, each attempt runs the handshake first when due. */
  retrying<T>(what: string, fn: () => Promise<T>, opts: { resync?: boolean } = {}): Promise<T> {
    const { noun, url, logger, retryBaseMs = 250, retryMaxMs = 5000, isOutage, resyncAfter = isOutage } = this.opts;
    return retry(
      async () => {
        if (opts.resync) await this.ensureSynced();
        const result = await fn();
        if (this.unreachableSince !== null) {
          logger.info({ downForMs: Date.now() - this.unreachableSince }, `${noun} at ${url} answers again`);
          this.unreachableSince = null;
        }
        return result;
      },
      {
        baseMs: retryBaseMs,
        maxMs: retryMaxMs,
        signal: this.signal,
        retryable: this.opts.isRetryable,
        onRetry: ({ err, attempt, delayMs }) => {
          if (isOutage(err)) this.unreachableSince ??= Date.now();
          if (resyncAfter(err)) this.needsHandshake = true;
          logger.warn({ attempt, retryInMs: delayMs }, `waiting for the ${noun} to ${what}: ${(err as Error).message}`);
        },
      },
    );
  }

  private async ensureSynced(): Promise<void> {
    while (this.needsHandshake) {
      this.handshake ??= this.opts.syncWithNode().finally(() => (this.handshake = null));
      await this.handshake;
    }
  }
}
