/** What scanJson reports. */
export interface JsonScan {
  /** A key its object already had (JSON.parse silently keeps the last one). */
  duplicateKey?: (key: string) => void;
  /** A number token, text[start, end), at `path()`: the object keys and array indexes down to it. */
  number?: (start: number, end: number, path: () => (string | number)[]) => void;
}

/**
 * Walks JSON text for what JSON.parse does not tell: the number tokens as
 * written (a double may not hold them) and duplicate keys. Meant for text
 * JSON.parse accepts; on other text it ends without a verdict.
 */
export function scanJson(text: string, on: JsonScan): void {
  const stack: Array<{ obj: boolean; keys: Set<string> | null; key: string; index: number }> = [];
  const path = () => stack.map((f) => (f.obj ? f.key : f.index));
  let expectKey = false;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      expectKey = c === 0x7b;
      stack.push({ obj: expectKey, keys: expectKey && on.duplicateKey ? new Set() : null, key: '', index: 0 });
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      expectKey = false;
      i++;
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top?.obj) expectKey = true;
      else if (top) top.index++;
      i++;
    } else if (c === 0x22 /* " */) {
      const start = i++;
      let escaped = false;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 0x5c /* \ */) {
          escaped = true;
          i += 2;
        } else if (d === 0x22) {
          break;
        } else {
          i++;
        }
      }
      const end = i++;
      const top = stack[stack.length - 1];
      if (expectKey && top?.obj) {
        top.key = escaped ? (JSON.parse(text.slice(start, end + 1)) as string) : text.slice(start + 1, end);
        if (top.keys?.has(top.key)) on.duplicateKey!(top.key);
        top.keys?.add(top.key);
        expectKey = false;
      }
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const start = i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        // digits . e E + -
        if ((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d) i++;
        else break;
      }
      on.number?.(start, i, path);
    } else {
      i++;
    }
  }
}
