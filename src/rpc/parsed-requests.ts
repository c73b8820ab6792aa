/**
 * A route's last parsed JSON requests, by body: a client that polls (the
 * latest block, one height) sends the same few bytes again and again, and
 * parsing them exactly (JSON.parse, the scan for duplicate keys and raw
 * numbers, protobuf-es fromJson) cost more than the rest of a cached GetBlock
 * answer in the getblock bench figure's profile. Only small bodies are kept,
 * at most `maxEntries`, oldest out first; a body that fails to parse is never
 * kept, so its error is written anew each time.
 *
 * Callers share the returned message: it must be read, never changed.
 */
export class ParsedRequests<M> {
  private readonly entries = new Map<string, M>();

  constructor(
    private readonly parse: (body: Uint8Array) => M,
    private readonly maxEntries = 64,
    private readonly maxBodyBytes = 256,
  ) {}

  get(body: Buffer): M {
    if (body.length > this.maxBodyBytes) return this.parse(body);
    // latin1 maps each byte to one char: distinct bodies are distinct keys, whatever their encoding.
    const key = body.toString('latin1');
    let message = this.entries.get(key);
    if (message === undefined) {
      message = this.parse(body);
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, message);
    }
    return message;
  }
}
