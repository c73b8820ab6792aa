import type { Handler } from './listen.js';

/** The Prometheus listener: `GET /metrics` answers the text exposition; every other path is 404. */
export function metricsHandler(scrape: () => Promise<{ contentType: string; body: string }>): Handler {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || req.method !== 'GET') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('metrics are served at GET /metrics\n');
      return;
    }
    scrape().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
        res.end(body);
      },
      (err: Error) => {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(`collecting metrics failed: ${err.message}\n`);
      },
    );
  };
}
