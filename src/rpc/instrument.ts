import type { NodeMetrics } from '../metrics/index.js';
import type { Handler } from './listen.js';

/**
 * Counts and times every request a listener answers, by a route label from
 * `routeOf` — a bounded set (the known routes, else "other"), never the raw
 * URL, so neither a client nor a secret in a query string makes new series.
 * Without metrics the handler is returned as is.
 */
export function instrumentHandler(handler: Handler, server: string, routeOf: (path: string) => string, metrics: NodeMetrics | null): Handler {
  if (!metrics) return handler;
  return (req, res) => {
    const start = performance.now();
    res.once('close', () => {
      const labels = { server, route: routeOf((req.url ?? '/').split('?')[0]!), code: String(res.statusCode) };
      metrics.rpcRequests.inc(labels);
      metrics.rpcDuration.observe(labels, (performance.now() - start) / 1000);
    });
    handler(req, res);
  };
}
