import type { Logger } from '../../log/index.js';
import { AbciConnection, type CallOptions } from './connection.js';
import type { ResponseOf } from './messages.js';

/** How long the app has to answer a call; a FinalizeBlock of a full block included. */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/** What the node tells the app about itself in Info (CometBFT 0.38's versions: block 11, p2p 8, ABCI 2.0). */
const INFO_REQUEST = { version: '0.38.0+noded', blockVersion: 11n, p2pVersion: 8n, abciVersion: '2.0.0' };

export interface AbciClientOptions {
  /** `tcp://host:port` or `unix:///path`. */
  address: string;
  logger: Logger;
  callTimeoutMs?: number;
}

/**
 * The three connections CometBFT keeps to an app: consensus (InitChain,
 * FinalizeBlock, Commit, and Info at the handshake), mempool (CheckTx) and
 * query (Info, Query), so a slow block never holds up a CheckTx or a query.
 */
export class AbciClient {
  readonly consensus: AbciConnection;
  readonly mempool: AbciConnection;
  readonly query: AbciConnection;

  constructor(readonly opts: AbciClientOptions) {
    const connection = (name: 'consensus' | 'mempool' | 'query') =>
      new AbciConnection({ address: opts.address, name, callTimeoutMs: opts.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS, logger: opts.logger });
    this.consensus = connection('consensus');
    this.mempool = connection('mempool');
    this.query = connection('query');
  }

  /** The app's Info on `connection` (its height and app hash). */
  info(connection: AbciConnection = this.query, opts: CallOptions = {}): Promise<ResponseOf<'info'>> {
    return connection.call('info', INFO_REQUEST, opts);
  }

  close(): void {
    for (const c of [this.consensus, this.mempool, this.query]) c.close();
  }
}
